import { describe, expect, it } from 'vitest'
import { TimeoutError } from '../../src/api/errors.ts'
import { PRIORITY, Pacer, readRateLimitHeaders, type Priority, type RateLimitHeaders } from '../../src/api/scheduler.ts'
import { EPOCH, virtualClock } from '../fixtures/clock.ts'

const WINDOW = 60_000

/** Acquires `count` slots at `priority`; each request "takes" `latencyMs` and is counted. */
function requestMany(pacer: Pacer, clock: ReturnType<typeof virtualClock>, count: number, options: { priority?: Priority; label?: string; latencyMs?: number; headers?: (i: number) => RateLimitHeaders } = {}) {
  const grants: { at: number; label: string }[] = []
  const all = Array.from({ length: count }, async (_, i) => {
    const ticket = await pacer.acquire(options.priority ?? PRIORITY.normal, { describe: 'test' })
    grants.push({ at: clock.now() - EPOCH, label: `${options.label ?? 'r'}${i}` })
    if (options.latencyMs) await clock.sleep(options.latencyMs)
    ticket.release({ counted: true, rateLimit: options.headers?.(i) })
  })
  return { grants, done: Promise.all(all) }
}

function maxInAnyWindow(times: number[], windowMs: number): number {
  return Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length))
}

describe('Pacer', () => {
  it('never lets more than the limit into any window, and wastes no slot', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 5, windowMs: WINDOW })
    const { grants, done } = requestMany(pacer, clock, 12, { latencyMs: 100 })
    await clock.run()
    await done
    const times = grants.map((g) => g.at)
    expect(maxInAnyWindow(times, WINDOW)).toBe(5)
    // A slot frees one window (plus a small margin) after the answer that used it.
    expect(times).toEqual([0, 0, 0, 0, 0, 60_125, 60_125, 60_125, 60_125, 60_125, 120_250, 120_250])
  })

  it('serves the most urgent waiter first, in order within a priority', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 1, windowMs: 1000 })
    const first = requestMany(pacer, clock, 1)
    const checks = requestMany(pacer, clock, 2, { priority: PRIORITY.background, label: 'check' })
    const generates = requestMany(pacer, clock, 2, { priority: PRIORITY.normal, label: 'gen' })
    const data = requestMany(pacer, clock, 1, { priority: PRIORITY.urgent, label: 'data' })
    await clock.run()
    await Promise.all([first.done, checks.done, generates.done, data.done])
    const order = [...first.grants, ...checks.grants, ...generates.grants, ...data.grants].sort((a, b) => a.at - b.at).map((g) => g.label)
    expect(order).toEqual(['r0', 'data0', 'gen0', 'gen1', 'check0', 'check1'])
  })

  it('frees the slot at once when the service did not count the request (401, 429)', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 1, windowMs: WINDOW })
    const ticket = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    ticket.release({ counted: false })
    const second = pacer.acquire(PRIORITY.normal, { describe: 'test' })
    await clock.run()
    await second
    expect(clock.now()).toBe(EPOCH)
  })

  it('holds every request until a Retry-After passed', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: null, windowMs: WINDOW })
    pacer.blockUntil(EPOCH + 7000)
    const { grants, done } = requestMany(pacer, clock, 3)
    await clock.run()
    await done
    expect(grants.map((g) => g.at)).toEqual([7000, 7000, 7000])
  })

  it('makes room for requests another client sent on the same token', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 5, windowMs: WINDOW })
    // Our first request is answered with remaining 0: four others are in the window, the oldest leaving in 20 s.
    const first = requestMany(pacer, clock, 1, { headers: () => ({ limit: 5, remaining: 0, resetSeconds: 20 }) })
    await clock.run()
    await first.done
    const { grants, done } = requestMany(pacer, clock, 5)
    await clock.run()
    await done
    const times = grants.map((g) => g.at)
    expect(times[0]).toBeGreaterThanOrEqual(20_000)
    expect(times[0]).toBeLessThan(21_000)
    // The other foreign requests may leave as late as a full window after we learnt of them.
    expect(times.slice(1).every((t) => t >= WINDOW)).toBe(true)
  })

  it('learns the limit from the first answer when it has none', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock)
    expect(pacer.current).toBe('probing')
    const { grants, done } = requestMany(pacer, clock, 4, { latencyMs: 50, headers: (i) => ({ limit: 2, remaining: Math.max(0, 1 - i), resetSeconds: 60 }) })
    await clock.run()
    await done
    expect(pacer.current).toEqual({ requests: 2, windowMs: WINDOW })
    const times = grants.map((g) => g.at)
    // One at a time while probing, then two per window.
    expect(times[0]).toBe(0)
    expect(times[1]).toBe(50)
    expect(maxInAnyWindow(times, WINDOW)).toBe(2)
  })

  it('treats a counted answer without RateLimit headers as an unlimited plan', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock)
    const { done } = requestMany(pacer, clock, 1, { headers: () => ({ limit: null, remaining: null, resetSeconds: null }) })
    await clock.run()
    await done
    expect(pacer.current).toEqual({ requests: null, windowMs: WINDOW })
  })

  it('keeps a pinned limit over what the service says', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 3, windowMs: 2000 })
    pacer.setLimit({ requests: 60, windowMs: WINDOW })
    expect(pacer.current).toEqual({ requests: 3, windowMs: 2000 })
  })

  it('rejects a waiter at its deadline and one whose signal aborts', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 1, windowMs: WINDOW })
    await pacer.acquire(PRIORITY.normal, { describe: 'first' })
    const late = pacer.acquire(PRIORITY.normal, { describe: 'late one', deadline: EPOCH + 5000 }).catch((e: unknown) => e)
    const controller = new AbortController()
    const aborted = pacer.acquire(PRIORITY.normal, { describe: 'aborted one', signal: controller.signal }).catch((e: unknown) => e)
    controller.abort(new Error('stop'))
    await clock.run(10_000)
    expect(await late).toBeInstanceOf(TimeoutError)
    expect(((await aborted) as Error).message).toBe('stop')
  })
})

describe('readRateLimitHeaders', () => {
  it('reads the three headers and ignores junk', () => {
    expect(readRateLimitHeaders({ 'ratelimit-limit': '60', 'ratelimit-remaining': '59', 'ratelimit-reset': '12' })).toEqual({ limit: 60, remaining: 59, resetSeconds: 12 })
    expect(readRateLimitHeaders({ 'ratelimit-limit': 'many' })).toEqual({ limit: null, remaining: null, resetSeconds: null })
  })
})
