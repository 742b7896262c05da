/**
 * The pacer: every request of a client takes a slot here first, so the client never sends
 * a request that the plan's sliding window would refuse. Whether a slot is free is the rate
 * window's answer (rate-window.ts: our model of the service's window, corrected from what
 * the service says); the pacer queues the requests waiting for one and hands the window
 * each answer's outcome.
 *
 * Slots go to the most urgent waiter first: fetching the CSS of a finished job frees a
 * page, a generate starts a job's clock, and a status check can always wait.
 */
import type { Now, Sleep } from './retry.ts'
import { TimeoutError } from './errors.ts'
import { WakeableLoop } from './loop.ts'
import { RateWindow, type Outcome, type PaceLimit } from './rate-window.ts'

export const PRIORITY = {
  /** Reading the result of a finished job, reading usage. */
  urgent: 0,
  /** Generates and direct calls of the client's methods. */
  normal: 1,
  /** Status checks of pending jobs. */
  background: 2,
} as const
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY]

/** A granted slot. `release` must be called once, when the answer (or the failure) is known. */
export interface Ticket {
  release(outcome: Outcome): void
}

interface Waiter {
  priority: Priority
  seq: number
  deadline: number | undefined
  describe: string
  signal: AbortSignal | undefined
  resolve: (ticket: Ticket) => void
  reject: (error: unknown) => void
  onAbort: () => void
}

export class Pacer {
  private readonly window: RateWindow
  private waiters: Waiter[] = []
  private blockedUntil = 0
  private seq = 0
  private readonly loop: WakeableLoop

  /**
   * @param limit Known limit (the `rateLimit` option), pinned against what the service says.
   *   Without it the pacer probes, one request at a time, until the limit is learnt from a
   *   `RateLimit-Limit` header or set from usage.
   */
  constructor(
    private readonly clock: { now: Now; sleep: Sleep },
    limit?: PaceLimit,
    /** How much longer than a window an abandoned request may stay counted (the request timeout). */
    abandonedGraceMs = 30_000,
  ) {
    this.window = new RateWindow(limit, abandonedGraceMs)
    this.loop = new WakeableLoop(() => this.run(), () => this.waiters.length > 0, clock.sleep)
  }

  /** The limit in force; 'probing' until it is known. */
  get current(): PaceLimit | 'probing' {
    return this.window.current
  }

  /** Sets the limit (from usage). Ignored when the limit was pinned by the `rateLimit` option. */
  setLimit(limit: PaceLimit): void {
    this.window.setLimit(limit, this.clock.now())
    this.wake()
  }

  /** Nothing is sent before `until` (a 429's or 503's Retry-After applies to every request of the token). */
  blockUntil(until: number): void {
    if (until > this.blockedUntil) {
      this.blockedUntil = until
      this.wake()
    }
  }

  /** Rejects every waiter with `error` (the client is closing). */
  closeAll(error: Error): void {
    for (const waiter of [...this.waiters]) {
      this.remove(waiter)
      waiter.reject(error)
    }
    // Ends the pump's sleep, so no timer keeps the process alive.
    this.wake()
  }

  /** Waits for a slot. Rejects with the signal's reason when aborted, or a TimeoutError at `deadline`. */
  acquire(priority: Priority, options: { signal?: AbortSignal | undefined; deadline?: number | undefined; describe: string }): Promise<Ticket> {
    options.signal?.throwIfAborted()
    return new Promise<Ticket>((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        seq: this.seq++,
        deadline: options.deadline,
        describe: options.describe,
        signal: options.signal,
        resolve,
        reject,
        onAbort: () => {
          this.remove(waiter)
          reject(options.signal?.reason)
          this.wake()
        },
      }
      options.signal?.addEventListener('abort', waiter.onAbort, { once: true })
      this.waiters.push(waiter)
      this.waiters.sort((a, b) => a.priority - b.priority || a.seq - b.seq)
      this.loop.kick()
    })
  }

  private grant(waiter: Waiter): void {
    this.remove(waiter)
    const entry = this.window.take(this.clock.now())
    let released = false
    waiter.resolve({
      release: (outcome) => {
        if (released) return
        released = true
        this.window.settle(entry, outcome, this.clock.now())
        this.wake()
      },
    })
  }

  private remove(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter)
    if (index >= 0) this.waiters.splice(index, 1)
    waiter.signal?.removeEventListener('abort', waiter.onAbort)
  }

  private wake(): void {
    this.loop.wake()
  }

  /** How long until a slot is free (0 = now), or null when only an answer in flight can free one. A Retry-After holds every slot; past it, the window decides. */
  private waitForSlot(now: number): number | null {
    if (now < this.blockedUntil) return this.blockedUntil - now
    return this.window.waitForSlot(now)
  }

  private expireWaiters(now: number): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.deadline !== undefined && now >= waiter.deadline) {
        this.remove(waiter)
        waiter.reject(new TimeoutError(`Gave up on ${waiter.describe}: the deadline passed while waiting for the rate limit`, { status: null, code: 'timeout' }))
      }
    }
  }

  private async run(): Promise<void> {
    while (this.waiters.length > 0) {
      const now = this.clock.now()
      this.expireWaiters(now)
      const first = this.waiters[0]
      if (!first) return
      const wait = this.waitForSlot(now)
      if (wait === 0) {
        this.grant(first)
        continue
      }
      const deadlines = this.waiters.map((w) => w.deadline).filter((d): d is number => d !== undefined)
      const untilDeadline = deadlines.length > 0 ? Math.max(0, Math.min(...deadlines) - now) : null
      const sleepFor = wait === null ? untilDeadline : untilDeadline === null ? wait : Math.min(wait, untilDeadline)
      // Woken early when a slot is released, the limit changes or a waiter comes or goes.
      await this.loop.pause(sleepFor)
    }
  }
}
