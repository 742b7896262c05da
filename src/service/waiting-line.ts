/**
 * The jobs waiting for a worker: FIFO per token, and the turns that pick whose job goes
 * next. A free worker goes to the waiting token with the fewest jobs running (ties:
 * round-robin), so one token's 500 jobs do not starve another's one.
 */

export class WaitingLine {
  /** Waiting job ids per token, in arrival order. */
  readonly #waiting = new Map<string, string[]>()
  /** Token ids with waiting jobs, in the order they are served. */
  readonly #turns: string[] = []
  /** When each waiting job joined the queue (a restored job: when it was restored; a preempted one: when it first did). */
  readonly #enqueuedAt = new Map<string, number>()

  /** Jobs waiting in all. */
  get size(): number {
    return this.#enqueuedAt.size
  }

  /** Jobs of this token waiting. */
  countOf(tokenId: string): number {
    return this.#waiting.get(tokenId)?.length ?? 0
  }

  /** Token ids with a job waiting. */
  tokens(): IterableIterator<string> {
    return this.#waiting.keys()
  }

  /** When a waiting job joined the queue; undefined for a job not waiting. */
  enqueuedAt(id: string): number | undefined {
    return this.#enqueuedAt.get(id)
  }

  /** Waiting jobs that joined the queue before `at`. */
  countBefore(at: number): number {
    return [...this.#enqueuedAt.values()].filter((other) => other < at).length
  }

  /** A new job at the back of its token's line. */
  add(id: string, tokenId: string, at: number): void {
    this.#enqueuedAt.set(id, at)
    this.#lineOf(tokenId).push(id)
  }

  /** A preempted job back at the front of its token's line, with its first enqueue time. */
  putBack(id: string, tokenId: string, enqueuedAt: number): void {
    this.#enqueuedAt.set(id, enqueuedAt)
    this.#lineOf(tokenId).unshift(id)
  }

  /**
   * Takes the next job out of the line: the first waiting one of the token with the fewest
   * jobs running (`running`, per token), the earliest in turn among equals; that token goes
   * to the back of the turns. `enqueuedAt` is when it joined the queue.
   */
  next(running: ReadonlyMap<string, number>): { id: string; tokenId: string; enqueuedAt: number | undefined } | null {
    if (this.#turns.length === 0) return null
    let chosen = 0
    let fewest = Infinity
    for (let index = 0; index < this.#turns.length && fewest > 0; index++) {
      const count = running.get(this.#turns[index]!) ?? 0
      if (count < fewest) [chosen, fewest] = [index, count]
    }
    const [tokenId] = this.#turns.splice(chosen, 1) as [string]
    const ids = this.#waiting.get(tokenId)!
    const id = ids.shift()!
    if (ids.length > 0) this.#turns.push(tokenId)
    else this.#waiting.delete(tokenId)
    const enqueuedAt = this.#enqueuedAt.get(id)
    this.#enqueuedAt.delete(id)
    return { id, tokenId, enqueuedAt }
  }

  /** The token's line; a token that had none joins the turns at the back. */
  #lineOf(tokenId: string): string[] {
    let ids = this.#waiting.get(tokenId)
    if (!ids) {
      ids = []
      this.#waiting.set(tokenId, ids)
      this.#turns.push(tokenId)
    }
    return ids
  }
}
