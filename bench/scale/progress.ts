/**
 * What a person watching the folder command's terminal saw, read back from its stderr lines
 * and the times they arrived: how long they went without a line, whether the progress lines
 * say pages done, rate and time left, and (since the report has no finish time per page) how
 * fast pages finished over a window of the run, from the progress lines' counts.
 */
import type { Line } from './command.ts'

/** "critical CSS: 3/10 pages ready, 7 pending": done/total of the pages to render. Loose on purpose: the wording may change. */
const PROGRESS = /\b(\d+)\/(\d+) pages?\b/
/** The summary's first line: "critical CSS: 10 pages · 10 inlined · 4.2 s". */
const SUMMARY = /^critical CSS: (\d+) pages? ·/
/** A rate on a progress line: "8.1 pages/s", "12 per s", "0.12 s/page". */
const RATE = /(pages?\s*\/\s*s\b|per\s+s(ec(ond)?)?\b|s\s*\/\s*page)/i
/** Time left on a progress line: "about 40 s left", "ETA 1:20", "remaining". */
const TIME_LEFT = /\b(left|remaining|eta)\b/i

export interface Point {
  /** ms since spawn. */
  at: number
  done: number
}

export interface ProgressReading {
  /** Progress lines, then the summary as the last point (every page done). */
  points: Point[]
  progressLines: number
  /** When the first progress line came, ms since spawn; null when none came. */
  firstProgressAt: number | null
  /** Longest wait between two progress lines, the summary included, ms; null with fewer than two. */
  longestProgressGap: { ms: number; after: string } | null
  /** Longest the terminal stayed silent, spawn to exit, any line counting, ms. */
  longestSilence: { ms: number; after: string }
  saysRate: boolean
  saysTimeLeft: boolean
}

const short = (text: string): string => (text.length > 70 ? `${text.slice(0, 67)}…` : text)

export function readProgress(lines: readonly Line[], exitAt: number): ProgressReading {
  const points: Point[] = []
  let progressLines = 0
  let saysRate = false
  let saysTimeLeft = false
  let summaryAt: number | null = null
  let firstProgressAt: number | null = null
  for (const line of lines) {
    const summary = SUMMARY.exec(line.text)
    if (summary && summaryAt === null) {
      summaryAt = line.at
      points.push({ at: line.at, done: Number(summary[1]) })
      continue
    }
    const progress = summaryAt === null ? PROGRESS.exec(line.text) : null
    if (!progress) continue
    progressLines += 1
    firstProgressAt ??= line.at
    points.push({ at: line.at, done: Number(progress[1]) })
    saysRate ||= RATE.test(line.text)
    saysTimeLeft ||= TIME_LEFT.test(line.text)
  }
  let longestProgressGap: ProgressReading['longestProgressGap'] = null
  for (let i = 1; i < points.length; i++) {
    const ms = points[i]!.at - points[i - 1]!.at
    if (!longestProgressGap || ms > longestProgressGap.ms) longestProgressGap = { ms, after: `${points[i - 1]!.done} done` }
  }
  // Silence: from spawn to the first line, between lines, and from the last line to exit.
  const times = [{ at: 0, text: '(start)' }, ...lines, { at: exitAt, text: '(exit)' }]
  let longestSilence = { ms: 0, after: '(start)' }
  for (let i = 1; i < times.length; i++) {
    const ms = times[i]!.at - times[i - 1]!.at
    if (ms > longestSilence.ms) longestSilence = { ms, after: short(times[i - 1]!.text) }
  }
  return { points, progressLines, firstProgressAt, longestProgressGap, longestSilence, saysRate, saysTimeLeft }
}

/**
 * When the `count`th page finished, ms since spawn, interpolated between the progress points
 * around it (the start counts as 0 done). Lines come every 2 s or so, so this is good to
 * about that much; null when the points never reach `count`.
 */
export function finishedAt(points: readonly Point[], count: number): number | null {
  let previous: Point = { at: 0, done: 0 }
  for (const point of points) {
    if (point.done >= count) {
      if (point.done <= previous.done) return point.at
      return previous.at + ((count - previous.done) / (point.done - previous.done)) * (point.at - previous.at)
    }
    // A heartbeat repeats the count later: the later time bounds the next page better.
    previous = point
  }
  return null
}

/** Seconds per page over pages (from, to]: the time between the `from`th and the `to`th page finishing, divided by the pages. */
export function secondsPerPage(points: readonly Point[], from: number, to: number): number | null {
  const start = finishedAt(points, from)
  const end = finishedAt(points, to)
  if (start === null || end === null || to <= from) return null
  return (end - start) / 1000 / (to - from)
}
