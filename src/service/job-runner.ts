/**
 * One job on a worker, from the store's record to its recorded end: the deadline of its
 * wait in the queue, its processing write, its render, and the write of how it ended.
 * A job's own writes (processing, then done, failed or back to queued) wait on timers
 * while the store is busy, for as long as the queue runs: a lock held elsewhere delays a
 * result, it never turns a finished job into a failed one.
 */
import { PreemptedSignal, ShutdownSignal } from './abort-reasons.ts'
import type { QueueOptions } from './queue-options.ts'
import type { RecentRenders } from './recent-renders.ts'
import { renderJob, seconds, type Outcome } from './render-job.ts'
import { whileUnavailable } from './store-retry.ts'
import { StoreUnavailableError, type StoredJob } from './store/types.ts'
import type { Running } from './worker-slots.ts'

export class JobRunner {
  readonly #options: QueueOptions
  /** How often a job was preempted, for its log line; undefined when never. */
  readonly #timesPreempted: (id: string) => number | undefined
  readonly #recent: RecentRenders
  /** Fired when close() stops waiting: writes still locked out give up, and the database keeps what it had. */
  readonly #stopWrites = new AbortController()

  constructor(options: QueueOptions, timesPreempted: (id: string) => number | undefined, recent: RecentRenders) {
    this.#options = options
    this.#timesPreempted = timesPreempted
    this.#recent = recent
  }

  /** Writes still waiting on a busy store give up. */
  stopWrites(): void {
    this.#stopWrites.abort(new ShutdownSignal())
  }

  /** Runs the job to its recorded end; true when it was preempted and goes back in line. */
  async run(id: string, entry: Running): Promise<boolean> {
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
      this.#options.log({ event: 'job_preempted', job: id, times: this.#timesPreempted(id) ?? 1 })
      return true
    }
    await this.#whenFree(id, 'processing', () => store.updateJob(id, { status: 'processing', updatedAt: new Date(started).toISOString() }))
    const outcome = await this.#render(job, started, controller)
    await this.#record(id, outcome)
    return outcome.again === true
  }

  /**
   * A job whose run ended without its outcome written: the database keeps its last state
   * (queued or processing), which the next start queues again. Logged, never thrown: a
   * rejection here would have no one to catch it.
   */
  unrecorded(id: string, error: unknown): void {
    const reason = error instanceof StoreUnavailableError || this.#stopWrites.signal.aborted ? 'store_busy' : error instanceof Error ? error.name : 'unknown'
    this.#options.log({ event: 'job_unrecorded', job: id, reason })
  }

  /** Runs the engine on the job and says how it ended; never throws. */
  async #render(job: StoredJob, started: number, controller: AbortController): Promise<Outcome> {
    try {
      const outcome = await renderJob(job, this.#options, started, controller.signal)
      if (outcome.renderMs !== undefined) this.#recent.add(outcome.renderMs)
      return outcome
    } catch {
      const stamp = new Date(this.#options.now()).toISOString()
      if (controller.signal.reason instanceof ShutdownSignal) {
        return { patch: { status: 'queued', updatedAt: stamp }, line: { event: 'job_requeued', job: job.id } }
      }
      // Preempted, not a failure: the job is rendered again when a worker is free for its token.
      return { patch: { status: 'queued', updatedAt: stamp }, line: { event: 'job_preempted', job: job.id, times: this.#timesPreempted(job.id) ?? 1 }, again: true }
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
}
