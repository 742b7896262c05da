/**
 * The jobs holding a worker, and preemption: when every worker is busy, a token with no
 * job running is waiting, and another token holds two workers or more, the newest job of
 * that token is preempted: aborted, so that its worker goes to the waiting token. So a
 * tenant whose pages each run to their deadline cannot hold every worker while another
 * tenant's job waits past its own deadline.
 */
import { PreemptedSignal } from './abort-reasons.ts'

/**
 * Times a job is preempted before its token's other jobs are preferred. Its first enqueue
 * time already bounds how long it can be put back (past its deadline it fails `timeout`
 * when next taken); this spreads the work thrown away over the token's jobs. It is a
 * preference, not a shield: when every job of a token holding two or more workers is past
 * it, the newest is preempted anyway, because a token that holds every worker until its
 * jobs' deadlines (a page that never settles) would otherwise make the others miss theirs.
 */
const MAX_PREEMPTIONS = 2

/** A job holding a worker. */
export interface Running {
  tokenId: string
  controller: AbortController
  done: Promise<void>
  /** When the job first joined the queue: a preempted job keeps it. */
  enqueuedAt: number
  /** Order of starts: the highest is the newest, the one whose preemption loses least work. */
  seq: number
  /** Aborted to free its worker for a waiting token; it still holds the worker until its run ends. */
  preempted: boolean
  /** When it took its worker. */
  startedAt: number
}

export class WorkerSlots {
  readonly #workers: number
  readonly #running = new Map<string, Running>()
  /** How often each job not yet finished was preempted. */
  readonly #preemptions = new Map<string, number>()
  #starts = 0

  constructor(workers: number) {
    this.#workers = workers
  }

  get hasFree(): boolean {
    return this.#running.size < this.#workers
  }

  /** The running job `id`, if it holds a worker. */
  get(id: string): Running | undefined {
    return this.#running.get(id)
  }

  /** The jobs holding a worker now. */
  values(): IterableIterator<Running> {
    return this.#running.values()
  }

  /** The job takes a worker; its run is the caller's, which sets `done`. */
  take(id: string, tokenId: string, enqueuedAt: number, startedAt: number): Running {
    const entry: Running = { tokenId, controller: new AbortController(), done: Promise.resolve(), enqueuedAt, seq: ++this.#starts, preempted: false, startedAt }
    this.#running.set(id, entry)
    return entry
  }

  /** The job's run ended: its worker is free. */
  release(id: string): void {
    this.#running.delete(id)
  }

  /** The job is finished: its preemptions no longer count. */
  forget(id: string): void {
    this.#preemptions.delete(id)
  }

  /** How often the job was preempted; undefined when never. */
  timesPreempted(id: string): number | undefined {
    return this.#preemptions.get(id)
  }

  /** Jobs holding a worker per token; `effective` leaves out those already preempted. */
  perToken(effective: boolean): Map<string, number> {
    const counts = new Map<string, number>()
    for (const entry of this.#running.values()) {
      if (!(effective && entry.preempted)) counts.set(entry.tokenId, (counts.get(entry.tokenId) ?? 0) + 1)
    }
    return counts
  }

  /**
   * Every worker is busy and tokens with no job running are waiting (`waiting`: the tokens
   * with jobs waiting): frees workers for them from tokens that hold two or more, one job
   * each, newest first. Never takes a token below one job; a job preempted MAX_PREEMPTIONS
   * times goes last.
   */
  preemptFor(waiting: Iterable<string>): void {
    if (this.hasFree) return
    const counts = this.perToken(true)
    let pending = 0
    for (const entry of this.#running.values()) if (entry.preempted) pending++
    let starving = 0
    for (const tokenId of waiting) if (!counts.get(tokenId)) starving++
    // A worker already being freed goes to one of them: the fewest running wins it.
    for (let need = starving - pending; need > 0; need--) {
      // The token holding the most workers gives one up; of its jobs, the newest.
      let victim: { id: string; entry: Running; held: number; spared: boolean } | undefined
      for (const [id, entry] of this.#running) {
        const held = counts.get(entry.tokenId) ?? 0
        if (entry.preempted || held < 2) continue
        const spared = (this.#preemptions.get(id) ?? 0) >= MAX_PREEMPTIONS
        if (!victim || held > victim.held || (held === victim.held && ((victim.spared && !spared) || (victim.spared === spared && entry.seq > victim.entry.seq)))) victim = { id, entry, held, spared }
      }
      if (!victim) return
      const { id, entry } = victim
      entry.preempted = true
      counts.set(entry.tokenId, (counts.get(entry.tokenId) ?? 0) - 1)
      this.#preemptions.set(id, (this.#preemptions.get(id) ?? 0) + 1)
      entry.controller.abort(new PreemptedSignal())
    }
  }
}
