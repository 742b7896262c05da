/**
 * Jobs waiting for an engine: FIFO per token, served round-robin between tokens so one
 * token's 500 jobs do not starve another's one; `workers` at a time, each with a deadline.
 * On close, jobs in flight get a grace period to finish, then go back to the queue.
 */
import { JOB_FAILURE_CODES } from '../contract/api-contract.ts'
import { EngineError, type Engine } from '../engine/engine.ts'
import type { Store, StoredJob } from './store/types.ts'

export interface QueueOptions {
  store: Store
  engine: Engine
  workers: number
  jobTimeoutMs: number
  now: () => number
  /** Checked before the engine runs (DNS answers that point inside, say); throws EngineError to fail the job. */
  beforeRun?: (job: StoredJob, signal: AbortSignal) => Promise<void>
  log: (event: Record<string, unknown>) => void
}

const MAX_ERROR_MESSAGE = 500

export class JobQueue {
  readonly #options: QueueOptions
  /** Waiting job ids per token, in arrival order. */
  readonly #waiting = new Map<string, string[]>()
  /** Token ids with waiting jobs, in the order they are served. */
  readonly #turns: string[] = []
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>()
  #closing = false

  constructor(options: QueueOptions) {
    this.#options = options
  }

  /** Puts back what a previous run left: processing jobs are queued again, oldest first. */
  restore(): void {
    const { store, now } = this.#options
    const stamp = new Date(now()).toISOString()
    const interrupted = store.jobsWithStatus('processing')
    for (const job of interrupted) store.updateJob(job.id, { status: 'queued', updatedAt: stamp })
    const queued = store.jobsWithStatus('queued').sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    for (const job of queued) this.enqueue(job)
    if (queued.length) this.#options.log({ event: 'queue_restored', jobs: queued.length, requeued: interrupted.length })
  }

  enqueue(job: StoredJob): void {
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
    await Promise.all([...this.#running.values()].map((entry) => entry.done))
  }

  /** The next job: the first waiting one of the token whose turn it is; that token goes to the back. */
  #next(): string | null {
    const tokenId = this.#turns.shift()
    if (tokenId === undefined) return null
    const ids = this.#waiting.get(tokenId)!
    const id = ids.shift()!
    if (ids.length > 0) this.#turns.push(tokenId)
    else this.#waiting.delete(tokenId)
    return id
  }

  #pump(): void {
    while (!this.#closing && this.#running.size < this.#options.workers) {
      const id = this.#next()
      if (id === null) return
      const controller = new AbortController()
      const entry = { controller, done: Promise.resolve() }
      this.#running.set(id, entry)
      entry.done = this.#run(id, controller).finally(() => {
        this.#running.delete(id)
        this.#pump()
      })
    }
  }

  async #run(id: string, controller: AbortController): Promise<void> {
    const { store, engine, now, jobTimeoutMs, log } = this.#options
    const job = store.job(id)
    if (!job || job.status !== 'queued') return
    const started = now()
    store.updateJob(id, { status: 'processing', updatedAt: new Date(started).toISOString() })
    const endsAt = Date.now() + jobTimeoutMs
    const deadline = AbortSignal.timeout(jobTimeoutMs)
    const signal = AbortSignal.any([deadline, controller.signal])
    try {
      await this.#options.beforeRun?.(job, signal)
      const { css } = await abortable(engine.generate({ url: job.url, viewports: job.viewports, signal, deadline: endsAt }), signal)
      const finished = now()
      store.updateJob(id, {
        status: 'done',
        cssAvailable: true,
        css,
        cssBytes: Buffer.byteLength(css),
        durationMs: finished - started,
        updatedAt: new Date(finished).toISOString(),
        error: null,
      })
      log({ event: 'job_done', job: id, ms: finished - started, css_bytes: Buffer.byteLength(css) })
    } catch (error) {
      const stamp = new Date(now()).toISOString()
      if (controller.signal.aborted && controller.signal.reason instanceof ShutdownSignal) {
        store.updateJob(id, { status: 'queued', updatedAt: stamp })
        log({ event: 'job_requeued', job: id })
        return
      }
      const failure = deadline.aborted
        ? { code: 'timeout', message: `The page did not finish rendering within ${jobTimeoutMs < 10_000 ? (jobTimeoutMs / 1000).toFixed(1) : Math.round(jobTimeoutMs / 1000)} s.` }
        : describeFailure(error)
      store.updateJob(id, { status: 'failed', error: failure, durationMs: now() - started, updatedAt: stamp })
      log({ event: 'job_failed', job: id, code: failure.code })
    }
  }
}

class ShutdownSignal extends Error {
  override name = 'ShutdownSignal'
}

/** Settles with `signal` even when the engine ignores it. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof EngineError) {
    const code = (JOB_FAILURE_CODES as readonly string[]).includes(error.code) ? error.code : 'render_failed'
    return { code, message: error.message.slice(0, MAX_ERROR_MESSAGE) }
  }
  // An unexpected fault: its text may hold internals, so the job says only that it failed.
  return { code: 'internal', message: 'The service failed while rendering this page.' }
}
