/** A typical render time (the median of the latest ones), for the queue's pending-job hint. */

/** Render times the pending-job hint is estimated from: the most recent ones. */
const RECENT_RENDERS = 20

export class RecentRenders {
  /** How long recent renders took (ms), newest last. */
  readonly #recentMs: number[] = []

  add(ms: number): void {
    this.#recentMs.push(ms)
    if (this.#recentMs.length > RECENT_RENDERS) this.#recentMs.shift()
  }

  /** The median recent render time (ms); null before the first render. */
  typical(): number | null {
    if (this.#recentMs.length === 0) return null
    return [...this.#recentMs].sort((a, b) => a - b)[this.#recentMs.length >> 1]!
  }
}
