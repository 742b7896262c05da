import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createProgress, type BuildLogger } from '../../src/core/report.ts'

/** A logger that keeps each progress line with the (fake) time it was said at. */
function recording(): { logger: BuildLogger; lines: { at: number; text: string }[] } {
  const lines: { at: number; text: string }[] = []
  const keep = (text: string): void => void lines.push({ at: Date.now(), text })
  return { lines, logger: { info: keep, warn: keep } }
}

describe('the progress line', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }))
  afterEach(() => vi.useRealTimers())

  it('says pages done, the rate and the time left at least every 2 s while pages finish', () => {
    const { logger, lines } = recording()
    const progress = createProgress(100, logger)
    // A page every 300 ms, the run's pace: 3.3 pages a second.
    for (let page = 0; page < 60; page++) {
      vi.advanceTimersByTime(300)
      progress.done()
    }
    progress.stop()
    expect(lines.length).toBeGreaterThanOrEqual(8)
    const gaps = lines.slice(1).map((line, index) => line.at - lines[index]!.at)
    expect(Math.max(lines[0]!.at, ...gaps)).toBeLessThanOrEqual(2000)
    expect(lines.at(-1)!.text).toMatch(/^critical CSS: \d+\/100 pages ready, \d+ pending, 3\.3 pages\/s, about \d+ s left$/)
    // The pages left at the pace so far: `done` pages took the line's time.
    for (const line of lines) {
      const [, done, left] = /(\d+)\/100 .* about (\d+) s left/.exec(line.text)!.map(Number)
      expect(left).toBe(Math.round(((100 - done!) * line.at) / done! / 1000))
    }
  })

  it('a page that finishes right after a line is still said within 2 s, and a long time left in minutes', () => {
    const { logger, lines } = recording()
    const progress = createProgress(1000, logger)
    vi.advanceTimersByTime(2000)
    progress.done()
    vi.advanceTimersByTime(100)
    progress.done()
    vi.advanceTimersByTime(2000)
    progress.stop()
    expect(lines.map((line) => line.text)).toEqual([
      'critical CSS: 1/1000 pages ready, 999 pending, 30 pages/min, about 33 min 18 s left',
      expect.stringMatching(/^critical CSS: 2\/1000 pages ready, 998 pending, \d+ pages\/min, about \d+ min \d+ s left$/),
    ])
    expect(lines[1]!.at - lines[0]!.at).toBeLessThanOrEqual(2000)
  })

  it('with nothing finished, a line every 10 s says it still waits, and none after the last page', () => {
    const { logger, lines } = recording()
    const progress = createProgress(2, logger, Date.now, 'paced at 5 requests/min')
    vi.advanceTimersByTime(25_000)
    expect(lines.map((line) => line.text)).toEqual([
      'critical CSS: 0/2 pages ready, 2 pending, paced at 5 requests/min',
      'critical CSS: 0/2 pages ready, 2 pending, paced at 5 requests/min',
    ])
    progress.done()
    progress.done()
    vi.advanceTimersByTime(25_000)
    progress.stop()
    expect(lines).toHaveLength(3)
    expect(lines[2]!.text).toBe('critical CSS: 1/2 pages ready, 1 pending, 2.4 pages/min, about 25 s left, paced at 5 requests/min')
  })
})
