/**
 * The pacer: every request of a client takes a slot here first, so the client never sends
 * a request that the plan's sliding window would refuse. The window is modelled on our
 * side (one entry per counted request, released `windowMs` after its answer arrived, which
 * is never earlier than the service releases it) and corrected from `RateLimit-*` headers
 * when the service has counted requests we did not send (another build on the same token).
 *
 * Slots go to the most urgent waiter first: fetching the CSS of a finished job frees a
 * page, a generate starts a job's clock, and a status check can always wait.
 */
import type { Now, Sleep } from './retry.ts'
import { TimeoutError } from './errors.ts'

export const PRIORITY = {
  /** Reading the result of a finished job, reading usage. */
  urgent: 0,
  /** Generates and direct calls of the client's methods. */
  normal: 1,
  /** Status checks of pending jobs. */
  background: 2,
} as const
export type Priority = (typeof PRIORITY)[keyof typeof PRIORITY]

export interface PaceLimit {
  /** Requests per window; null = unlimited. */
  requests: number | null
  windowMs: number
}

export interface RateLimitHeaders {
  limit: number | null
  remaining: number | null
  resetSeconds: number | null
}

/** A granted slot. `release` must be called once, when the answer (or the failure) is known. */
export interface Ticket {
  /**
   * `counted`: whether the service counted the request (false for 401, 429 and requests
   * that never reached it). `rateLimit`: the answer's `RateLimit-*` headers.
   */
  release(outcome: { counted: boolean; rateLimit?: RateLimitHeaders | undefined }): void
}

interface Entry {
  grantedSeq: number
  /** When the slot frees; Infinity while the request is in flight. */
  expiresAt: number
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

/** Added to every slot's release time, so a boundary case at the service falls our way. */
const SAFETY_MARGIN_MS = 25

export class Pacer {
  private limit: PaceLimit | 'probing'
  private entries: Entry[] = []
  private waiters: Waiter[] = []
  private blockedUntil = 0
  private seq = 0
  private pumping = false
  private wakeUp: AbortController | null = null
  private inFlightWhileProbing = 0

  constructor(
    private readonly clock: { now: Now; sleep: Sleep },
    /** Known limit, or undefined to learn it from the first answer (probing: one request at a time). */
    limit?: PaceLimit,
    private readonly pinned = limit !== undefined,
  ) {
    this.limit = limit ?? 'probing'
  }

  /** The limit in force; 'probing' until the first answer told it. */
  get current(): PaceLimit | 'probing' {
    return this.limit
  }

  /** Sets the limit (from usage). Ignored when the limit was pinned by the `rateLimit` option. */
  setLimit(limit: PaceLimit): void {
    if (this.pinned) return
    this.limit = limit
    this.wake()
  }

  /** Nothing is sent before `until` (a 429's or 503's Retry-After applies to every request of the token). */
  blockUntil(until: number): void {
    if (until > this.blockedUntil) {
      this.blockedUntil = until
      this.wake()
    }
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
      this.pump()
    })
  }

  /**
   * Corrects the model from an answer's `RateLimit-*` headers. The service has counted the
   * request with sequence `seq` and, at most, every request granted before it; what it
   * counted beyond those came from elsewhere (another build on the same token).
   */
  private correct(headers: RateLimitHeaders, seq: number, now: number): void {
    const limit = this.limit
    if (limit === 'probing') return
    if (!this.pinned && headers.limit !== null && headers.limit !== limit.requests) {
      this.limit = { ...limit, requests: headers.limit }
    }
    const requests = this.limit === 'probing' ? null : this.limit.requests
    if (requests === null || headers.remaining === null) return
    const serverUsed = requests - headers.remaining
    const ours = this.entries.filter((e) => e.expiresAt > now && e.grantedSeq <= seq).length
    const foreign = serverUsed - ours
    // The oldest foreign request leaves at Reset; of the others we only know they leave within a window.
    const firstLeaves = now + (headers.resetSeconds ?? limit.windowMs / 1000) * 1000 + SAFETY_MARGIN_MS
    for (let i = 0; i < foreign; i++) {
      this.entries.push({ grantedSeq: -1, expiresAt: i === 0 ? firstLeaves : now + limit.windowMs + SAFETY_MARGIN_MS })
    }
  }

  /** The first counted answer tells the limit: RateLimit-Limit, or none at all for an unlimited plan. */
  private learn(headers: RateLimitHeaders | undefined): void {
    if (this.limit !== 'probing') return
    this.limit = { requests: headers?.limit ?? null, windowMs: 60_000 }
  }

  private remove(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter)
    if (index >= 0) this.waiters.splice(index, 1)
    waiter.signal?.removeEventListener('abort', waiter.onAbort)
  }

  private wake(): void {
    this.wakeUp?.abort()
  }

  private grant(waiter: Waiter): void {
    this.remove(waiter)
    const seq = waiter.seq
    const probing = this.limit === 'probing'
    const entry: Entry = { grantedSeq: seq, expiresAt: Number.POSITIVE_INFINITY }
    if (probing) this.inFlightWhileProbing++
    else if (this.limit !== 'probing' && this.limit.requests !== null) this.entries.push(entry)
    let released = false
    waiter.resolve({
      release: ({ counted, rateLimit }) => {
        if (released) return
        released = true
        const now = this.clock.now()
        if (probing) {
          this.inFlightWhileProbing--
          if (counted) {
            this.learn(rateLimit)
            if (this.limit !== 'probing' && this.limit.requests !== null) this.entries.push(entry)
          }
        }
        const limit = this.limit
        if (limit !== 'probing' && limit.requests !== null && this.entries.includes(entry)) {
          if (counted) entry.expiresAt = now + limit.windowMs + SAFETY_MARGIN_MS
          else this.entries.splice(this.entries.indexOf(entry), 1)
        }
        if (counted && rateLimit) this.correct(rateLimit, seq, now)
        this.wake()
      },
    })
  }

  /** How long until a slot is free (0 = now), or null when only an answer in flight can free one. */
  private waitForSlot(now: number): number | null {
    if (now < this.blockedUntil) return this.blockedUntil - now
    const limit = this.limit
    if (limit === 'probing') return this.inFlightWhileProbing === 0 ? 0 : null
    if (limit.requests === null) return 0
    this.entries = this.entries.filter((e) => e.expiresAt > now)
    if (this.entries.length < limit.requests) return 0
    const nextExpiry = Math.min(...this.entries.map((e) => e.expiresAt))
    return Number.isFinite(nextExpiry) ? nextExpiry - now : null
  }

  private expireWaiters(now: number): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.deadline !== undefined && now >= waiter.deadline) {
        this.remove(waiter)
        waiter.reject(new TimeoutError(`Gave up on ${waiter.describe}: the deadline passed while waiting for the rate limit`, { status: null, code: 'timeout' }))
      }
    }
  }

  private pump(): void {
    if (this.pumping) {
      this.wake()
      return
    }
    this.pumping = true
    void this.run().finally(() => {
      this.pumping = false
      if (this.waiters.length > 0) this.pump()
    })
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
      const controller = new AbortController()
      this.wakeUp = controller
      try {
        if (sleepFor === null) await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }))
        else await this.clock.sleep(sleepFor, controller.signal)
      } catch {
        // Woken early: a slot was released, the limit changed or a waiter arrived.
      } finally {
        if (this.wakeUp === controller) this.wakeUp = null
      }
    }
  }
}

/** Reads `RateLimit-Limit`, `-Remaining`, `-Reset` from an answer's headers. */
export function readRateLimitHeaders(headers: Record<string, string | string[] | undefined>): RateLimitHeaders {
  const read = (name: string): number | null => {
    const raw = headers[name]
    const text = Array.isArray(raw) ? raw[0] : raw
    if (text === undefined) return null
    const value = Number(text.trim())
    return Number.isInteger(value) && value >= 0 ? value : null
  }
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), resetSeconds: read('ratelimit-reset') }
}
