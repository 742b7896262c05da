/**
 * The service's limits: a sliding window of counted requests per token, and the monthly
 * generation quota (calendar month, UTC). A 429's Retry-After is the moment the oldest
 * counted request leaves the window, rounded up to whole seconds: a request sent then is
 * accepted.
 */

export interface WindowDecision {
  allowed: boolean
  /** Requests left in the window after this one; null without a limit. */
  remaining: number | null
  /** Seconds until the oldest counted request leaves the window; null without a limit. */
  resetSeconds: number | null
  /** When refused: whole seconds (≥ 1) until a request will be accepted. */
  retryAfterSeconds: number | null
}

/**
 * The rate windows the routes count requests in: asynchronous, so that they can be shared
 * by many processes, and atomic per request (a check and its count are one step).
 */
export interface RateWindows {
  take(key: string, limit: number | null, now: number): Promise<WindowDecision>
  peek(key: string, limit: number | null, now: number): Promise<Omit<WindowDecision, 'allowed' | 'retryAfterSeconds'>>
}

/** The windows of this process. */
export function localWindows(windowMs: number): RateWindows {
  const windows = new SlidingWindows(windowMs)
  return {
    take: async (key, limit, now) => windows.take(key, limit, now),
    peek: async (key, limit, now) => windows.peek(key, limit, now),
  }
}

export class SlidingWindows {
  readonly #windowMs: number
  readonly #counted = new Map<string, number[]>()

  constructor(windowMs: number) {
    this.#windowMs = windowMs
  }

  /** Counts a request of `key` at `now` if `limit` allows it (null: no limit, nothing kept). */
  take(key: string, limit: number | null, now: number): WindowDecision {
    if (limit === null) return { allowed: true, remaining: null, resetSeconds: null, retryAfterSeconds: null }
    const times = this.#live(key, now, true)
    if (times.length >= limit) {
      const waitMs = times[times.length - limit]! + this.#windowMs - now
      const seconds = Math.max(1, Math.ceil(waitMs / 1000))
      return { allowed: false, remaining: 0, resetSeconds: Math.ceil((times[0]! + this.#windowMs - now) / 1000), retryAfterSeconds: seconds }
    }
    times.push(now)
    this.#counted.set(key, times)
    return { allowed: true, remaining: limit - times.length, resetSeconds: Math.ceil((times[0]! + this.#windowMs - now) / 1000), retryAfterSeconds: null }
  }

  /** The window's state without counting: for usage answers. */
  peek(key: string, limit: number | null, now: number): Omit<WindowDecision, 'allowed' | 'retryAfterSeconds'> {
    if (limit === null) return { remaining: null, resetSeconds: null }
    const times = this.#live(key, now, false)
    return { remaining: Math.max(0, limit - times.length), resetSeconds: times.length ? Math.ceil((times[0]! + this.#windowMs - now) / 1000) : 0 }
  }

  /** Timestamps still in the window: a request at t counts while now − t < windowMs. `prune` forgets the rest. */
  #live(key: string, now: number, prune: boolean): number[] {
    const times = this.#counted.get(key) ?? []
    let first = 0
    while (first < times.length && now - times[first]! >= this.#windowMs) first += 1
    const live = first === 0 ? times : times.slice(first)
    if (!prune) return live
    if (live.length === 0) this.#counted.delete(key)
    else if (first > 0) this.#counted.set(key, live)
    return live
  }
}

/** `2026-11` for any moment of November 2026, UTC: the quota's period. */
export function quotaPeriod(now: number): string {
  return new Date(now).toISOString().slice(0, 7)
}

/** The first moment of the next calendar month, UTC, as ISO text. */
export function quotaResetsAt(now: number): string {
  const date = new Date(now)
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString()
}
