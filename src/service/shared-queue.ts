/**
 * The job queue of many service processes on one Redis state, on BullMQ (an optional peer).
 * API processes add jobs; render workers (`role` worker or all) take them, `workers` at a
 * time each. A worker that dies mid-job loses its lock, and BullMQ's stalled-job check hands
 * the job to another worker. A job's result is written only while it is queued or
 * processing, so a job finished by one worker is never finished again, or turned back, by
 * another.
 *
 * Fairness between tokens: a job's BullMQ priority is how many jobs its token has pending
 * when it is added (1 for a token with none), so the k-th pending job of every token ranks
 * alike and one token's 500 jobs do not hold up another's one.
 */
import type { Job as BullJob, Queue, Worker } from 'bullmq'
import type { Engine } from '../engine/engine.ts'
import { requirePeer } from './peer.ts'
import { renderJob, whileUnavailable, type QueueOptions } from './queue.ts'
import { describeRedisUrl, redisConnection } from './store/redis.ts'
import { StoreUnavailableError, type StoredJob } from './store/types.ts'

const QUEUE_NAME = 'ucc-render'
/** BullMQ's highest priority number. */
const LOWEST_PRIORITY = 2 ** 21 - 1
/** Times a job is handed on after its worker stopped answering, before it fails. */
const MAX_STALLS = 3

export interface SharedQueueOptions extends Omit<QueueOptions, 'engine'> {
  redisUrl: string
  /** Null for an API-only process: it adds jobs and renders none. */
  engine: Engine | null
  /** How long a worker may stop answering before its job is handed to another. */
  lockMs: number
}

/** What the routes and the service need of a queue, local or shared. */
export interface RenderQueue {
  refusal(tokenId: string): string | null | Promise<string | null>
  readonly retryAfterSeconds: number
  enqueue(job: StoredJob): void | Promise<void>
  checkAgainIn(jobId: string): number | null
  restore(): Promise<void>
  close(graceMs: number): Promise<void>
}


export function openSharedQueue(options: SharedQueueOptions): RenderQueue {
  const { Queue: QueueClass, Worker: WorkerClass } = requirePeer<typeof import('bullmq')>('bullmq', 'Render workers on Redis (--redis) share their queue')
  const { store, now, log } = options
  const where = describeRedisUrl(options.redisUrl)
  // Adds fail at once while Redis is away (the request gets 503); the worker's connection
  // blocks and waits, as BullMQ requires.
  const queue: Queue = new QueueClass(QUEUE_NAME, { connection: redisConnection(options.redisUrl, { failFast: true }) })
  queue.on('error', () => {})
  const stop = new AbortController()
  let worker: Worker | null = null
  const engine = options.engine

  if (engine !== null) {
    worker = new WorkerClass(QUEUE_NAME, (bullJob: BullJob<{ id: string }>) => run(bullJob.data.id), {
      connection: redisConnection(options.redisUrl, { failFast: false }),
      concurrency: options.workers,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(500, Math.floor(options.lockMs / 2)),
      maxStalledCount: MAX_STALLS,
    })
    worker.on('error', () => {})
  }

  const stored = <T>(id: string, step: string, call: () => Promise<T>): Promise<T> =>
    whileUnavailable(call, stop.signal, () => log({ event: 'store_busy', job: id, step }))

  /** One job on this worker, from the store's record to its recorded end. Throws only on shutdown: BullMQ then hands it on. */
  async function run(id: string): Promise<void> {
    const job = await stored(id, 'read', () => store.job(id))
    // Finished by a worker that was thought dead, or never accepted: nothing to do.
    if (!job || (job.status !== 'queued' && job.status !== 'processing')) return
    const started = now()
    if (job.status === 'queued' && started - Date.parse(job.createdAt) > options.jobTimeoutMs) {
      const failure = { code: 'timeout', message: 'The job waited in the queue past its deadline.' }
      await stored(id, 'failed', () => store.updateJob(id, { status: 'failed', error: failure, durationMs: 0, updatedAt: new Date(started).toISOString() }, ['queued']))
      log({ event: 'job_failed', job: id, code: 'timeout' })
      return
    }
    const claimed = await stored(id, 'processing', () => store.updateJob(id, { status: 'processing', updatedAt: new Date(started).toISOString() }, ['queued', 'processing']))
    // Finished meanwhile by the worker it was taken from: rendering it again would be lost work.
    if (!claimed) return
    const outcome = await renderJob(job, { ...options, engine: engine! }, started, stop.signal)
    const written = await stored(id, String(outcome.patch.status), () => store.updateJob(id, outcome.patch, ['queued', 'processing']))
    log(written ? outcome.line : { event: 'job_finished_elsewhere', job: id })
  }

  return {
    async refusal(tokenId) {
      const stats = await store.stats(tokenId)
      if (stats.jobsQueued >= options.maxQueuedPerToken) return `This token has ${options.maxQueuedPerToken} jobs waiting, the most the service queues for one token.`
      const counts = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'paused').catch(() => {
        throw new StoreUnavailableError(`The queue at ${where} cannot be reached now.`)
      })
      const waiting = Object.values(counts).reduce((sum, count) => sum + count, 0)
      return waiting >= options.maxQueued ? `The service has ${options.maxQueued} jobs waiting, the most it queues.` : null
    },
    get retryAfterSeconds() {
      return Math.max(1, Math.ceil(options.jobTimeoutMs / 1000))
    },
    enqueue(job) {
      // The job is accepted (stored and counted): it is added as soon as Redis takes it, in
      // the background, so a blip between the two does not leave it stored and never run.
      const add = async (): Promise<void> => {
        const stats = await store.stats(job.tokenId)
        const priority = Math.min(LOWEST_PRIORITY, Math.max(1, stats.jobsQueued + stats.jobsProcessing))
        // attempts: a run ended by a shutdown is handed on, not dropped.
        await queue.add('render', { id: job.id }, { jobId: job.id, priority, attempts: MAX_STALLS + 1, removeOnComplete: true, removeOnFail: true }).catch(() => {
          throw new StoreUnavailableError(`The queue at ${where} cannot be reached now.`)
        })
      }
      stored(job.id, 'enqueue', add).catch(() => log({ event: 'job_unqueued', job: job.id }))
    },
    // The queue is shared: this process cannot tell when another's worker will be free.
    checkAgainIn: () => null,
    // BullMQ keeps the queue across restarts, and hands on the jobs of workers that died.
    restore: async () => {},
    async close(graceMs) {
      if (worker) {
        let timer: NodeJS.Timeout | undefined
        const grace = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), graceMs)
        })
        const finished = await Promise.race([worker.close(), grace])
        clearTimeout(timer)
        if (finished === 'late') {
          // Jobs still rendering are aborted and go back to BullMQ for another worker.
          stop.abort(new Error('The service is shutting down.'))
          await worker.close(true)
        }
      }
      stop.abort(new Error('The service is shutting down.'))
      await queue.close()
    },
  }
}
