/**
 * Jobs waiting for an engine: FIFO per token; `workers` at a time, each with a deadline.
 * A free worker goes to the waiting token with the fewest jobs running (ties: round-robin),
 * so one token's 500 jobs do not starve another's one. When every worker is busy, a token
 * with no job running is waiting, and another token holds two workers or more, the newest
 * job of that token is preempted: aborted, put back at the front of its token's line with
 * its first enqueue time, and the worker goes to the waiting token. So a tenant whose pages
 * each run to their deadline cannot hold every worker while another tenant's job waits
 * past its own deadline.
 * On close, jobs in flight get a grace period to finish, then go back to the queue.
 *
 * A job's own writes (processing, then done, failed or back to queued) wait on timers
 * while the store is busy, for as long as the queue runs: a lock held elsewhere delays a
 * result, it never turns a finished job into a failed one.
 */
import type { QueueOptions } from './queue-options.ts'
import { renderJob, seconds, type Outcome } from './render-job.ts'
import { whileUnavailable } from './store-retry.ts'
import { StoreUnavailableError, type StoredJob } from './store/types.ts'

export type { QueueOptions } from './queue-options.ts'

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
interface Running {
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

/** Render times the pending-job hint is estimated from: the most recent ones. */
const RECENT_RENDERS = 20
/** A hint never sends a client away for longer than this. */
const MAX_HINT_S = 60

export class JobQueue {
  readonly #options: QueueOptions
  /** Waiting job ids per token, in arrival order. */
  readonly #waiting = new Map<string, string[]>()
  /** Token ids with waiting jobs, in the order they are served. */
  readonly #turns: string[] = []
  readonly #running = new Map<string, Running>()
  /** When each waiting job joined the queue (a restored job: when it was restored; a preempted one: when it first did). */
  readonly #enqueuedAt = new Map<string, number>()
  /** How often each job not yet finished was preempted. */
  readonly #preemptions = new Map<string, number>()
  #starts = 0
  /** How long recent renders took (ms), newest last. */
  readonly #recentMs: number[] = []
  #closing = false
  /** Fired when close() stops waiting: writes still locked out give up, and the database keeps what it had. */
  readonly #stopWrites = new AbortController()

  constructor(options: QueueOptions) {
    this.#options = options
  }

  /** Puts back what a previous run left: processing jobs are queued again, oldest first. */
  async restore(): Promise<void> {
    const { store, now } = this.#options
    const stamp = new Date(now()).toISOString()
    const interrupted = await store.jobsWithStatus('processing')
    for (const job of interrupted) await store.updateJob(job.id, { status: 'queued', updatedAt: stamp })
    const queued = (await store.jobsWithStatus('queued')).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    for (const job of queued) this.enqueue(job)
    if (queued.length) this.#options.log({ event: 'queue_restored', jobs: queued.length, requeued: interrupted.length })
  }

  /** Why a new job of this token cannot be queued now, or null: the bounds keep every wait within reach of its deadline. */
  refusal(tokenId: string): string | null {
    const { maxQueuedPerToken, maxQueued } = this.#options
    if ((this.#waiting.get(tokenId)?.length ?? 0) >= maxQueuedPerToken) return `This token has ${maxQueuedPerToken} jobs waiting, the most the service queues for one token.`
    if (this.#enqueuedAt.size >= maxQueued) return `The service has ${maxQueued} jobs waiting, the most it queues.`
    return null
  }

  /**
   * In how many whole seconds a pending job is worth checking again (the contract's
   * pending-job `Retry-After`): the median recent render time, less what a running job has
   * had, plus a render per worker-wave of jobs queued before a waiting one, rounded up (a
   * check that comes too early costs a request and the client's next wait). Null when the
   * service has no render times yet, the job is not pending here, or it is due within a
   * second: whole seconds would hold a fast job's client longer than its own checks do.
   */
  checkAgainIn(jobId: string): number | null {
    if (this.#recentMs.length === 0) return null
    const typical = [...this.#recentMs].sort((a, b) => a - b)[this.#recentMs.length >> 1]!
    const now = this.#options.now()
    const running = this.#running.get(jobId)
    let ms: number
    if (running) ms = typical - (now - running.startedAt)
    else {
      const enqueuedAt = this.#enqueuedAt.get(jobId)
      if (enqueuedAt === undefined) return null
      const ahead = [...this.#enqueuedAt.values()].filter((at) => at < enqueuedAt).length
      const firstFree = Math.min(typical, ...[...this.#running.values()].map((entry) => Math.max(0, typical - (now - entry.startedAt))))
      ms = firstFree + Math.floor(ahead / this.#options.workers) * typical + typical
    }
    return ms < 1000 ? null : Math.min(Math.ceil(ms / 1000), MAX_HINT_S)
  }

  /** When to ask again after a refusal: a worker frees up within one job's deadline. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.#options.jobTimeoutMs / 1000))
  }

  enqueue(job: StoredJob): void {
    this.#enqueuedAt.set(job.id, this.#options.now())
    const ids = this.#waiting.get(job.tokenId)
    if (ids) ids.push(job.id)
    else {
      this.#waiting.set(job.tokenId, [job.id])
      this.#turns.push(job.tokenId)
    }
    this.#pump()
  }

  /** Stops starting jobs; waits up to `graceMs` for those in flight, then aborts them back to queued. */
  async close(graceMs: number): Promise<void> {
    this.#closing = true
    const running = [...this.#running.values()]
    if (running.length === 0) return
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs)
    })
    await Promise.race([Promise.all(running.map((entry) => entry.done)), grace])
    clearTimeout(timer)
    for (const entry of this.#running.values()) entry.controller.abort(new ShutdownSignal())
    this.#stopWrites.abort(new ShutdownSignal())
    await Promise.all([...this.#running.values()].map((entry) => entry.done))
  }

  /** Jobs holding a worker per token; `effective` leaves out those already preempted. */
  #runningPerToken(effective: boolean): Map<string, number> {
    const counts = new Map<string, number>()
    for (const entry of this.#running.values()) {
      if (!(effective && entry.preempted)) counts.set(entry.tokenId, (counts.get(entry.tokenId) ?? 0) + 1)
    }
    return counts
  }

  /**
   * The next job: the first waiting one of the token with the fewest jobs running, the
   * earliest in turn among equals; that token goes to the back of the turns.
   */
  #next(): { id: string; tokenId: string } | null {
    if (this.#turns.length === 0) return null
    // Every job holding a worker counts, a preempted one too: its worker is not free yet.
    const counts = this.#runningPerToken(false)
    let chosen = 0
    let fewest = Infinity
    for (let index = 0; index < this.#turns.length && fewest > 0; index++) {
      const count = counts.get(this.#turns[index]!) ?? 0
      if (count < fewest) [chosen, fewest] = [index, count]
    }
    const [tokenId] = this.#turns.splice(chosen, 1) as [string]
    const ids = this.#waiting.get(tokenId)!
    const id = ids.shift()!
    if (ids.length > 0) this.#turns.push(tokenId)
    else this.#waiting.delete(tokenId)
    return { id, tokenId }
  }

  #pump(): void {
    while (!this.#closing && this.#running.size < this.#options.workers) {
      const next = this.#next()
      if (next === null) return
      this.#start(next.id, next.tokenId)
    }
    this.#preemptForWaiting()
  }

  #start(id: string, tokenId: string): void {
    const enqueuedAt = this.#enqueuedAt.get(id) ?? this.#options.now()
    this.#enqueuedAt.delete(id)
    const entry: Running = { tokenId, controller: new AbortController(), done: Promise.resolve(), enqueuedAt, seq: ++this.#starts, preempted: false, startedAt: this.#options.now() }
    this.#running.set(id, entry)
    entry.done = this.#run(id, entry)
      .catch((error: unknown) => {
        this.#unrecorded(id, error)
        return false
      })
      .then((again) => {
        // In one step: the job never sits in the line while it still holds a worker.
        this.#running.delete(id)
        if (again) this.#putBack(id, entry)
        else this.#preemptions.delete(id)
        this.#pump()
      })
  }

  /**
   * Every worker is busy and tokens with no job running are waiting: frees workers for
   * them from tokens that hold two or more, one job each, newest first. Never takes a
   * token below one job; a job preempted MAX_PREEMPTIONS times goes last.
   */
  #preemptForWaiting(): void {
    if (this.#closing || this.#running.size < this.#options.workers) return
    const counts = this.#runningPerToken(true)
    let pending = 0
    for (const entry of this.#running.values()) if (entry.preempted) pending++
    let starving = 0
    for (const tokenId of this.#waiting.keys()) if (!counts.get(tokenId)) starving++
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

  /** A preempted job back at the front of its token's line, with its first enqueue time. */
  #putBack(id: string, entry: Running): void {
    this.#enqueuedAt.set(id, entry.enqueuedAt)
    const ids = this.#waiting.get(entry.tokenId)
    if (ids) ids.unshift(id)
    else {
      this.#waiting.set(entry.tokenId, [id])
      this.#turns.push(entry.tokenId)
    }
  }

  /** Runs the job to its recorded end; true when it was preempted and goes back in line. */
  async #run(id: string, entry: Running): Promise<boolean> {
    const { store, now, jobTimeoutMs } = this.#options
    const { enqueuedAt, controller } = entry
    const job = await this.#whenFree(id, 'read', () => store.job(id))
    if (!job || job.status !== 'queued') return false
    const started = now()
    if (started - enqueuedAt > jobTimeoutMs) {
      // Rendering now would answer a caller that has given up, and keep the next ones waiting longer.
      const failure = { code: 'timeout', message: `The job waited ${seconds(started - enqueuedAt)} s in the queue, past its ${seconds(jobTimeoutMs)} s deadline.` }
      await this.#record(id, { patch: { status: 'failed', error: failure, durationMs: 0, updatedAt: new Date(started).toISOString() }, line: { event: 'job_failed', job: id, code: failure.code } })
      return false
    }
    if (controller.signal.reason instanceof PreemptedSignal) {
      // Preempted before it began: the store still says queued, so it goes back as it was.
      this.#options.log({ event: 'job_preempted', job: id, times: this.#preemptions.get(id) ?? 1 })
      return true
    }
    await this.#whenFree(id, 'processing', () => store.updateJob(id, { status: 'processing', updatedAt: new Date(started).toISOString() }))
    const outcome = await this.#render(job, started, controller)
    await this.#record(id, outcome)
    return outcome.again === true
  }

  /** Runs the engine on the job and says how it ended; never throws. */
  async #render(job: StoredJob, started: number, controller: AbortController): Promise<Outcome> {
    try {
      const outcome = await renderJob(job, this.#options, started, controller.signal)
      if (outcome.renderMs !== undefined) {
        this.#recentMs.push(outcome.renderMs)
        if (this.#recentMs.length > RECENT_RENDERS) this.#recentMs.shift()
      }
      return outcome
    } catch {
      const stamp = new Date(this.#options.now()).toISOString()
      if (controller.signal.reason instanceof ShutdownSignal) {
        return { patch: { status: 'queued', updatedAt: stamp }, line: { event: 'job_requeued', job: job.id } }
      }
      // Preempted, not a failure: the job is rendered again when a worker is free for its token.
      return { patch: { status: 'queued', updatedAt: stamp }, line: { event: 'job_preempted', job: job.id, times: this.#preemptions.get(job.id) ?? 1 }, again: true }
    }
  }

  /** Writes how the job ended, however long the store stays busy, then reports it. */
  async #record(id: string, outcome: Outcome): Promise<void> {
    const { store, log, now } = this.#options
    try {
      await this.#whenFree(id, String(outcome.patch.status), () => store.updateJob(id, outcome.patch))
    } catch (error) {
      if (outcome.patch.status !== 'done' || error instanceof StoreUnavailableError || this.#stopWrites.signal.aborted) throw error
      // The store refused the result itself (too large, say): the job fails, rather than stay processing with no one on it.
      const failure = { code: 'internal', message: 'The service could not keep the result of this page.' }
      await this.#whenFree(id, 'failed', () => store.updateJob(id, { status: 'failed', error: failure, updatedAt: new Date(now()).toISOString() }))
      log({ event: 'job_failed', job: id, code: failure.code })
      return
    }
    log(outcome.line)
  }

  /**
   * Runs a store call, and while the store is busy tries again on timers, backing off, so
   * the event loop keeps serving. Gives up only when close() stops waiting.
   */
  async #whenFree<T>(id: string, step: string, call: () => Promise<T>): Promise<T> {
    return whileUnavailable(call, this.#stopWrites.signal, () => this.#options.log({ event: 'store_busy', job: id, step }))
  }

  /**
   * A job whose run ended without its outcome written: the database keeps its last state
   * (queued or processing), which the next start queues again. Logged, never thrown: a
   * rejection here would have no one to catch it.
   */
  #unrecorded(id: string, error: unknown): void {
    const reason = error instanceof StoreUnavailableError || this.#stopWrites.signal.aborted ? 'store_busy' : error instanceof Error ? error.name : 'unknown'
    this.#options.log({ event: 'job_unrecorded', job: id, reason })
  }
}

class ShutdownSignal extends Error {
  override name = 'ShutdownSignal'
}

/** Why a job was aborted to free its worker for a token with none: it goes back to queued. */
class PreemptedSignal extends Error {
  override name = 'PreemptedSignal'
}
