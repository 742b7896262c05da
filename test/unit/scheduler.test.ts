import { describe, expect, it } from 'vitest'
import { TimeoutError } from '../../src/client/errors.ts'
import { readRateLimitHeaders, type RateLimitHeaders } from '../../src/client/rate-window.ts'
import { PRIORITY, Pacer, type Priority } from '../../src/client/scheduler.ts'
import { EPOCH, virtualClock } from '../fixtures/clock.ts'

const WINDOW = 60_000

/** Acquires `count` slots at `priority`; each request "takes" `latencyMs` and is counted. */
function requestMany(pacer: Pacer, clock: ReturnType<typeof virtualClock>, count: number, options: { priority?: Priority; label?: string; latencyMs?: number; headers?: (i: number) => RateLimitHeaders } = {}) {
  const grants: { at: number; label: string }[] = []
  const all = Array.from({ length: count }, async (_, i) => {
    const ticket = await pacer.acquire(options.priority ?? PRIORITY.normal, { describe: 'test' })
    grants.push({ at: clock.now() - EPOCH, label: `${options.label ?? 'r'}${i}` })
    if (options.latencyMs) await clock.sleep(options.latencyMs)
    ticket.release({ counted: true, success: true, rateLimit: options.headers?.(i) })
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

  it('after a 429 from a service that never says what is left, one request goes at its Retry-After and its answer frees the rest', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 5, windowMs: WINDOW })
    const refused = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    refused.release({ counted: false, refused: { retryAfterMs: 2000 } })
    // Three requests wait; each answers after 100 ms, with no RateLimit headers.
    const { grants, done } = requestMany(pacer, clock, 3, { latencyMs: 100 })
    await clock.run()
    await done
    expect(grants.map((g) => g.at)).toEqual([2025, 2125, 2125])
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
    // Reset is whole seconds, perhaps rounded down: one more second to be sure.
    expect(times[0]).toBeGreaterThanOrEqual(21_000)
    expect(times[0]).toBeLessThan(22_000)
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

  it('learns nothing from a failed answer or one whose body will set the limit', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock)
    const first = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    // A proxy's 502 with RateLimit headers of its own says nothing about the plan.
    first.release({ counted: true, success: false, rateLimit: { limit: 1000, remaining: 999, resetSeconds: 1 } })
    expect(pacer.current).toBe('probing')
    const usage = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    usage.release({ counted: true, success: true, teaches: false, rateLimit: { limit: null, remaining: null, resetSeconds: null } })
    expect(pacer.current).toBe('probing')
    // Usage then says 2 per minute: the two requests already sent fill the window.
    pacer.setLimit({ requests: 2, windowMs: WINDOW })
    const third = pacer.acquire(PRIORITY.normal, { describe: 'test' })
    await clock.run()
    await third
    expect(clock.now() - EPOCH).toBeGreaterThanOrEqual(WINDOW)
  })

  it('takes a successful answer without RateLimit headers for an unlimited plan', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock)
    const first = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    first.release({ counted: true, success: true, rateLimit: { limit: null, remaining: null, resetSeconds: null } })
    expect(pacer.current).toEqual({ requests: null, windowMs: WINDOW })
  })

  it('keeps what headers said while the limit was unknown, for when it is set', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock)
    const usage = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    // Another build already spent 3 of 5: our usage read is the fourth.
    usage.release({ counted: true, success: true, teaches: false, rateLimit: { limit: 5, remaining: 1, resetSeconds: 50 } })
    pacer.setLimit({ requests: 5, windowMs: WINDOW })
    const { grants, done } = requestMany(pacer, clock, 3)
    await clock.run()
    await done
    expect(grants.map((g) => g.at)).toEqual([0, expect.any(Number), expect.any(Number)])
    expect(grants[1]!.at).toBeGreaterThanOrEqual(50_000)
  })

  it('holds the slot of a request given up in flight a while longer', async () => {
    const clock = virtualClock()
    const pacer = new Pacer(clock, { requests: 1, windowMs: WINDOW }, 30_000)
    const ticket = await pacer.acquire(PRIORITY.normal, { describe: 'test' })
    ticket.release({ counted: true, abandoned: true })
    const next = pacer.acquire(PRIORITY.normal, { describe: 'test' })
    await clock.run()
    await next
    expect(clock.now() - EPOCH).toBeGreaterThanOrEqual(WINDOW + 30_000)
  })

  /**
   * Runs our requests (each starting to queue at its time) and another build's (sent at
   * their times, whatever the window says) against a simulated service window.
   */
  async function simulateSharedToken(
    oursAt: number[],
    foreignAt: number[],
    latency: () => number = () => 30,
    priority: () => Priority = () => PRIORITY.normal,
  ): Promise<{ refused: number; foreignAdmitted: number; grants: number[] }> {
    const clock = virtualClock()
    const limit = 5
    const pacer = new Pacer(clock, { requests: limit, windowMs: WINDOW })
    const arrivals: number[] = []
    const grants: number[] = []
    let refused = 0
    let foreignAdmitted = 0
    const admit = (): RateLimitHeaders | null => {
      const now = clock.now()
      const inWindow = arrivals.filter((t) => t > now - WINDOW)
      if (inWindow.length >= limit) return null
      arrivals.push(now)
      inWindow.push(now)
      return { limit, remaining: limit - inWindow.length, resetSeconds: Math.ceil((Math.min(...inWindow) + WINDOW - now) / 1000) }
    }
    const foreign = foreignAt.map(async (at) => {
      await clock.sleep(at)
      if (admit()) foreignAdmitted++
    })
    const ours = oursAt.map(async (at) => {
      await clock.sleep(at)
      for (;;) {
        const ticket = await pacer.acquire(priority(), { describe: 'test' })
        grants.push(clock.now() - EPOCH)
        await clock.sleep(latency())
        const headers = admit()
        await clock.sleep(latency())
        if (headers) {
          ticket.release({ counted: true, success: true, rateLimit: headers })
          return
        }
        refused++
        const oldest = Math.min(...arrivals.filter((t) => t > clock.now() - WINDOW))
        const retryAfterMs = Math.max(1000, Math.ceil((oldest + WINDOW - clock.now()) / 1000) * 1000)
        ticket.release({ counted: false, refused: { retryAfterMs } })
        pacer.blockUntil(clock.now() + retryAfterMs)
      }
    })
    await clock.run()
    await Promise.all([...foreign, ...ours])
    return { refused, foreignAdmitted, grants }
  }

  it('never causes a 429 when another build shares the token', async () => {
    const burst = Array.from({ length: 10 }, () => 40_100)
    // Reset then points at our own oldest request, not at the other build's.
    expect((await simulateSharedToken([0, 40_000, ...burst], [30_000])).refused).toBe(0)
    // The other build's request is the oldest: Reset frees its slot early.
    const early = await simulateSharedToken([10_000, 40_000, ...burst], [5_000])
    expect(early.refused).toBe(0)
    expect(early.grants.filter((t) => t >= 66_000 && t < 67_000)).toHaveLength(1)
    const busy = Array.from({ length: 20 }, (_, i) => i * 7_000)
    expect((await simulateSharedToken(busy, [3_000, 30_000, 95_000, 96_000, 130_000, 131_000])).refused).toBe(0)
  })

  it('in random schedules with uneven latency, every 429 is one another build caused', async () => {
    let seed = 1
    const random = (): number => {
      seed = (seed * 16807) % 2147483647
      return seed / 2147483647
    }
    for (let run = 0; run < 600; run++) {
      const ours = Array.from({ length: 4 + Math.floor(random() * 20) }, () => Math.floor(random() * 200_000))
      const foreign = run % 4 === 0 ? [] : Array.from({ length: Math.floor(random() * 12) }, () => Math.floor(random() * 200_000))
      // Priorities reorder grants against requests: grant order, not call order, must count.
      const priorities = [PRIORITY.urgent, PRIORITY.normal, PRIORITY.background]
      const result = await simulateSharedToken(ours, foreign, () => 5 + Math.floor(random() * 400), () => priorities[Math.floor(random() * 3)]!)
      // A request of another build can take a slot we were about to use, once; ours alone never collide.
      expect(result.refused, `run ${run}`).toBeLessThanOrEqual(result.foreignAdmitted)
      expect(result.grants.length - result.refused).toBe(ours.length)
    }
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
