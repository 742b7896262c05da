/**
 * Jobs waiting for an engine: FIFO per token; `workers` at a time, each with a deadline.
 * Which job a free worker takes is the waiting line's (waiting-line.ts: the token with the
 * fewest jobs running); when a token holding two workers or more gives one up to a token
 * with none, the worker slots' (worker-slots.ts: preemption); a job's run and the writes
 * that record it, the runner's (job-runner.ts). A preempted job goes back to the front of
 * its token's line with its first enqueue time.
 * On close, jobs in flight get a grace period to finish, then go back to the queue.
 */
import { ShutdownSignal } from './abort-reasons.ts'
import { JobRunner } from './job-runner.ts'
import type { QueueOptions } from './queue-options.ts'
import { RecentRenders } from './recent-renders.ts'
import type { StoredJob } from './store/types.ts'
import { WaitingLine } from './waiting-line.ts'
import { WorkerSlots } from './worker-slots.ts'

/** A hint never sends a client away for longer than this. */
const MAX_HINT_S = 60
/**
 * No hint for a job due sooner than this: whole seconds, rounded up, would hold its client up
 * to a second past the job's end, a big share of a short wait (a loopback client checks a fast
 * job within 200 ms on its own).
 */
const MIN_HINT_MS = 3000

export class JobQueue {
  readonly #options: QueueOptions
  readonly #line = new WaitingLine()
  readonly #slots: WorkerSlots
  readonly #recent = new RecentRenders()
  readonly #runner: JobRunner
  #closing = false

  constructor(options: QueueOptions) {
    this.#options = options
    this.#slots = new WorkerSlots(options.workers)
    this.#runner = new JobRunner(options, (id) => this.#slots.timesPreempted(id), this.#recent)
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
    if (this.#line.countOf(tokenId) >= maxQueuedPerToken) return `This token has ${maxQueuedPerToken} jobs waiting, the most the service queues for one token.`
    if (this.#line.size >= maxQueued) return `The service has ${maxQueued} jobs waiting, the most it queues.`
    return null
  }

  /**
   * In how many whole seconds a pending job is worth checking again (the contract's
   * pending-job `Retry-After`): the median recent render time, less what a running job has
   * had, plus a render per worker-wave of jobs queued before a waiting one, rounded up (a
   * check that comes too early costs a request and the client's next wait). Null when the
   * service has no render times yet, the job is not pending here, or it is due within
   * {@link MIN_HINT_MS}.
   */
  checkAgainIn(jobId: string): number | null {
    const typical = this.#recent.typical()
    if (typical === null) return null
    const now = this.#options.now()
    const running = this.#slots.get(jobId)
    let ms: number
    if (running) ms = typical - (now - running.startedAt)
    else {
      const enqueuedAt = this.#line.enqueuedAt(jobId)
      if (enqueuedAt === undefined) return null
      const ahead = this.#line.countBefore(enqueuedAt)
      const firstFree = Math.min(typical, ...[...this.#slots.values()].map((entry) => Math.max(0, typical - (now - entry.startedAt))))
      ms = firstFree + Math.floor(ahead / this.#options.workers) * typical + typical
    }
    return ms < MIN_HINT_MS ? null : Math.min(Math.ceil(ms / 1000), MAX_HINT_S)
  }

  /** When to ask again after a refusal: a worker frees up within one job's deadline. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.#options.jobTimeoutMs / 1000))
  }

  enqueue(job: StoredJob): void {
    this.#line.add(job.id, job.tokenId, this.#options.now())
    this.#pump()
  }

  /** Stops starting jobs; waits up to `graceMs` for those in flight, then aborts them back to queued. */
  async close(graceMs: number): Promise<void> {
    this.#closing = true
    const running = [...this.#slots.values()]
    if (running.length === 0) return
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs)
    })
    await Promise.race([Promise.all(running.map((entry) => entry.done)), grace])
    clearTimeout(timer)
    for (const entry of this.#slots.values()) entry.controller.abort(new ShutdownSignal())
    this.#runner.stopWrites()
    await Promise.all([...this.#slots.values()].map((entry) => entry.done))
  }

  /** Starts waiting jobs while workers are free, then frees workers for tokens with none. */
  #pump(): void {
    while (!this.#closing && this.#slots.hasFree) {
      // Every job holding a worker counts, a preempted one too: its worker is not free yet.
      const next = this.#line.next(this.#slots.perToken(false))
      if (next === null) return
      this.#start(next.id, next.tokenId, next.enqueuedAt)
    }
    if (!this.#closing) this.#slots.preemptFor(this.#line.tokens())
  }

  #start(id: string, tokenId: string, enqueuedAt: number | undefined): void {
    const entry = this.#slots.take(id, tokenId, enqueuedAt ?? this.#options.now(), this.#options.now())
    entry.done = this.#runner
      .run(id, entry)
      .catch((error: unknown) => {
        this.#runner.unrecorded(id, error)
        return false
      })
      .then((again) => {
        // In one step: the job never sits in the line while it still holds a worker.
        this.#slots.release(id)
        if (again) this.#line.putBack(id, entry.tokenId, entry.enqueuedAt)
        else this.#slots.forget(id)
        this.#pump()
      })
  }
}
