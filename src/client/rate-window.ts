/**
 * Our model of the service's sliding window: one entry per counted request, released
 * `windowMs` after its answer arrived (which is never earlier than the service releases it),
 * corrected from `RateLimit-*` headers when the service has counted requests we did not send
 * (another build on the same token). What the service says beats what the model assumes: its
 * window is learnt from `RateLimit-Reset` (never longer than the window), and after a 429 from
 * a service that never says what is left, one request goes at its `Retry-After` and its
 * answer decides. The pacer asks it when a slot is free and hands it each answer's outcome.
 */

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

export interface Outcome {
  /** Did the service count the request? False for 401, 429 and requests that never reached it. */
  counted: boolean
  /**
   * Given up in flight (aborted, timed out): the service may count it later than we
   * think, so its slot is held a while longer.
   */
  abandoned?: boolean
  /** A 2xx answer: only such an answer may teach the limit (a proxy's 502 says nothing about the plan). */
  success?: boolean
  /** False when the caller sets the limit itself from the body (the usage answer). */
  teaches?: boolean
  /** The answer's `RateLimit-*` headers. */
  rateLimit?: RateLimitHeaders | undefined
  /**
   * A 429: not counted, but it says the service's window is full, and its Retry-After
   * when the oldest request there leaves (null when it gave none).
   */
  refused?: { retryAfterMs: number | null }
}

/** One request in the window. */
export interface Entry {
  /** Order in which our requests were granted (and so sent); -1 for requests another client sent. */
  seq: number
  grantedAt: number
  /** When the slot frees; Infinity while the request is in flight. */
  expiresAt: number
}

/** Added to every slot's release time, so a boundary case at the service falls our way. */
const SAFETY_MARGIN_MS = 25
/** RateLimit-Reset is whole seconds; the service may have rounded it down. */
const RESET_ROUNDING_MS = 1000
const UNKNOWN_WINDOW_MS = 60_000
/** `seq` of a slot a 429 says someone else holds, until the next answer says more. */
const HELD = -2

export class RateWindow {
  private limit: PaceLimit | 'probing'
  private readonly pinned: boolean
  private entries: Entry[] = []
  /** No entry leaves before this (a bound, never later than the first to leave): a window with no slot to free is not scanned. */
  private earliest = Number.POSITIVE_INFINITY
  /** Whether some entry is one held after a 429 (`HELD`). */
  private holding = false
  private granted = 0
  /** Grant sequence of the answer that last corrected the model. */
  private correctedBy = -1
  /** The last answer's headers while probing, applied once the limit is known. */
  private heldCorrection: { headers: RateLimitHeaders; entry: Entry } | null = null
  /** The service's window as its `RateLimit-Reset` values show it (the longest seen); null until one does. */
  private windowFromService: number | null = null
  /** Whether the service's answers say what is left of the window (`RateLimit-Remaining`). */
  private speaksRateLimit = false

  /**
   * @param limit Known limit (the `rateLimit` option), pinned against what the service says.
   *   Without it the window probes (one request in flight at a time) until the limit is
   *   learnt from a `RateLimit-Limit` header or set from usage.
   */
  constructor(
    limit: PaceLimit | undefined,
    /** How much longer than a window an abandoned request may stay counted (the request timeout). */
    private readonly abandonedGraceMs: number,
  ) {
    this.limit = limit ?? 'probing'
    this.pinned = limit !== undefined
  }

  /**
   * The limit in force, in the window the service's answers showed once they did; 'probing'
   * until it is known. A learnt window is told to the second: the model adds the answer's
   * round trip to the service's whole-second `RateLimit-Reset`, to be safe, not to be said.
   */
  get current(): PaceLimit | 'probing' {
    if (this.limit === 'probing') return 'probing'
    const windowMs = this.windowMs()
    return { requests: this.limit.requests, windowMs: windowMs === this.limit.windowMs ? windowMs : Math.max(1000, Math.round(windowMs / 1000) * 1000) }
  }

  /** Sets the limit (from usage). Ignored when the limit was pinned by the `rateLimit` option. */
  setLimit(limit: PaceLimit, now: number): void {
    if (!this.pinned) this.limit = limit
    // Headers that came while the limit was unknown still tell of other builds' requests.
    const held = this.heldCorrection
    this.heldCorrection = null
    if (held) this.correct(held.headers, held.entry, now, false)
  }

  /** Counts a request sent now; its slot is held until `settle` says how it ended. */
  take(now: number): Entry {
    const entry: Entry = { seq: this.granted++, grantedAt: now, expiresAt: Number.POSITIVE_INFINITY }
    // Entries are kept whatever the limit, so a limit learnt later sees the requests already sent.
    this.entries.push(entry)
    return entry
  }

  /** Books how the request of `entry` ended: when its slot frees, and what its answer says of the window. */
  settle(entry: Entry, outcome: Outcome, now: number): void {
    if (outcome.counted && outcome.success && outcome.rateLimit) this.learnWindow(outcome.rateLimit, entry, now)
    const limit = this.limit
    const windowMs = this.windowMs()
    if (outcome.counted) {
      entry.expiresAt = now + windowMs + SAFETY_MARGIN_MS + (outcome.abandoned ? this.abandonedGraceMs : 0)
      this.earliest = Math.min(this.earliest, entry.expiresAt)
    } else this.entries.splice(this.entries.indexOf(entry), 1)
    if (outcome.counted && outcome.success && outcome.teaches !== false) this.learn(outcome.rateLimit)
    // The next answer after a 429 decides: its headers (below), or their absence, which frees what the 429 held.
    if (outcome.counted && outcome.success && outcome.rateLimit?.remaining == null && this.holding) this.replace(this.entries.filter((e) => e.seq !== HELD))
    if (outcome.rateLimit?.remaining != null) this.speaksRateLimit = true
    if (outcome.counted && outcome.rateLimit) {
      if (this.limit === 'probing') this.heldCorrection = { headers: outcome.rateLimit, entry }
      else this.correct(outcome.rateLimit, entry, now, outcome.success === true)
    } else if (outcome.refused && limit !== 'probing' && limit.requests !== null) {
      const reset = outcome.rateLimit?.resetSeconds ?? null
      const wait = reset !== null ? reset * 1000 : outcome.refused.retryAfterMs
      if (this.speaksRateLimit) {
        // Requests we do not know of fill the window: make room for them until an answer's headers say more.
        this.correct({ limit: null, remaining: 0, resetSeconds: wait === null ? null : Math.ceil(wait / 1000) }, entry, now, false, true)
      } else {
        // A service that never says what is left: its Retry-After is all we know, and only until the next answer.
        this.fillUntil(wait === null ? now : now + wait, limit.requests, now)
      }
    }
  }

  /** How long until a slot is free (0 = now), or null when only an answer in flight can free one. */
  waitForSlot(now: number): number | null {
    // Asked before every request: the window is read again only once some slot in it may have freed.
    if (now >= this.earliest) this.replace(this.entries.filter((e) => e.expiresAt > now))
    const limit = this.limit
    // An entry still in flight has no release time yet.
    if (limit === 'probing') return this.entries.some((e) => e.expiresAt === Number.POSITIVE_INFINITY) ? null : 0
    if (limit.requests === null || this.entries.length < limit.requests) return 0
    const nextExpiry = Math.min(...this.entries.map((e) => e.expiresAt))
    return Number.isFinite(nextExpiry) ? nextExpiry - now : null
  }

  /** The window in force: the service's, once its answers showed it, unless the `rateLimit` option pinned one. */
  private windowMs(): number {
    const stated = this.limit === 'probing' ? UNKNOWN_WINDOW_MS : this.limit.windowMs
    return this.pinned || this.windowFromService === null ? stated : this.windowFromService
  }

  /**
   * `RateLimit-Reset` says when the oldest request in the service's window leaves. When the
   * service counts only the request it answers, that one is the oldest: the window is Reset
   * plus how long ago we sent it (a little more, never less). The longest such figure is the
   * window; slots already held move to it.
   */
  private learnWindow(headers: RateLimitHeaders, answered: Entry, now: number): void {
    if (this.pinned || headers.resetSeconds === null || headers.resetSeconds <= 0 || headers.remaining === null) return
    const requests = headers.limit ?? (this.limit === 'probing' ? null : this.limit.requests)
    if (requests === null || requests - headers.remaining !== 1) return
    const seen = headers.resetSeconds * 1000 + (now - answered.grantedAt)
    if (this.windowFromService !== null && seen <= this.windowFromService) return
    const before = this.windowMs()
    this.windowFromService = seen
    const shift = seen - before
    for (const entry of this.entries) {
      if (!Number.isFinite(entry.expiresAt)) continue
      entry.expiresAt = entry.seq >= 0 ? entry.expiresAt + shift : Math.min(entry.expiresAt, now + seen + SAFETY_MARGIN_MS)
    }
    this.replace(this.entries)
  }

  /** The entries from now on, and what is known of them without reading them all again. */
  private replace(entries: Entry[]): void {
    this.entries = entries
    this.earliest = Number.POSITIVE_INFINITY
    this.holding = false
    for (const entry of entries) {
      if (entry.expiresAt < this.earliest) this.earliest = entry.expiresAt
      if (entry.seq === HELD) this.holding = true
    }
  }

  /**
   * A 429 from a service that never says what is left: its window is full, and requests of
   * others take the room ours do not. One slot frees when it said (`until`), unless that is
   * one of ours; the rest are held until the next answer (or, with none, a window from now),
   * so the client probes with one request instead of a burst into a window still full.
   */
  private fillUntil(until: number, requests: number, now: number): void {
    this.replace(this.entries.filter((e) => e.seq >= 0 && e.expiresAt > now))
    // The slot that frees then is another's only if every one of ours leaves later; else it is ours, already in the model.
    const othersFirst = this.entries.every((e) => e.expiresAt > until + SAFETY_MARGIN_MS)
    const others = requests - this.entries.length
    for (let i = 0; i < others; i++) {
      const first = othersFirst && i === 0
      this.entries.push({ seq: first ? -1 : HELD, grantedAt: now, expiresAt: first ? until + SAFETY_MARGIN_MS : now + this.windowMs() + SAFETY_MARGIN_MS })
    }
    this.replace(this.entries)
  }

  /**
   * The first successful answer ends probing: RateLimit-Limit is the limit, and a counted
   * answer without it comes from a plan without one.
   */
  private learn(headers: RateLimitHeaders | undefined): void {
    if (this.limit !== 'probing') return
    this.limit = { requests: headers?.limit ?? null, windowMs: UNKNOWN_WINDOW_MS }
  }

  /**
   * Corrects the model from an answer's `RateLimit-*` headers. The service counted this
   * request and, we assume, every request of ours granted before it; what it counted
   * beyond those came from elsewhere (another build on the same token). The newest answer
   * describes the foreign requests best, so it replaces what older answers said.
   */
  private correct(headers: RateLimitHeaders, answered: Entry, now: number, success: boolean, refused = false): void {
    const limit = this.limit
    if (limit === 'probing') return
    // An older answer knows less than the one already applied; a 429 is news whenever it comes.
    if (answered.seq < this.correctedBy && !refused) return
    this.correctedBy = Math.max(this.correctedBy, answered.seq)
    if (success && !this.pinned && headers.limit !== null && headers.limit !== limit.requests) {
      this.limit = { ...limit, requests: headers.limit }
    }
    const requests = this.limit === 'probing' ? null : this.limit.requests
    if (requests === null || headers.remaining === null) return
    const ours = this.entries.filter((e) => e.seq >= 0 && e.seq <= answered.seq && e.expiresAt > now)
    const foreign = requests - headers.remaining - ours.length
    this.replace(this.entries.filter((e) => e.seq >= 0))
    // Reset says when the oldest request in the service's window leaves. It is a foreign
    // one only if every request of ours leaves later; otherwise all we know of the
    // foreign ones is that they leave within a window from now.
    const windowMs = this.windowMs()
    const resetAt = now + (headers.resetSeconds ?? windowMs / 1000) * 1000 + RESET_ROUNDING_MS
    const oursLeaveAfterReset = ours.every((e) => e.grantedAt + windowMs > resetAt)
    for (let i = 0; i < foreign; i++) {
      const leaves = i === 0 && oursLeaveAfterReset ? resetAt : now + windowMs
      this.entries.push({ seq: -1, grantedAt: now, expiresAt: leaves + SAFETY_MARGIN_MS })
    }
    this.replace(this.entries)
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
