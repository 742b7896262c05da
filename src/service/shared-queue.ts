/**
 * The job queue of many service processes on one Redis state, on BullMQ (an optional peer).
 * API processes add jobs; render workers (`role` worker or all) take them, `workers` at a
 * time each. A worker that dies mid-job loses its lock, and BullMQ's stalled-job check hands
 * the job to another worker. A job's result is written only while it is queued or
 * processing, so a job finished by one worker is never finished again, or turned back, by
 * another.
 *
 * An accepted job always ends: every few seconds one process (whichever takes the turn)
 * looks for jobs the store holds as pending that the queue does not. A queued one (its
 * accepting process died before adding it) is added; a processing one (the queue gave up
 * on it after its workers stopped answering again and again) fails `render_failed`.
 *
 * A worker's connection can drop between Redis taking a job to active under the worker's lock
 * and the answer reaching it (a restart, a reset): the job is then locked by a worker that
 * does not know it has it, and would wait for the lock to end and a stalled check (30–45 s
 * with the default lock). Each worker process looks every second for active jobs under its
 * own lock that it is not running; one seen so twice with the same lock is handed back to
 * the queue at once.
 *
 * Fairness between tokens: a job's BullMQ priority is how many jobs its token has pending
 * when it is added (1 for a token with none), so the k-th pending job of every token ranks
 * alike and one token's 500 jobs do not hold up another's one.
 */
import { once } from 'node:events'
import type { Job as BullJob, Queue, Worker } from 'bullmq'
import type { Engine } from '../engine/engine.ts'
import { settlesWithin } from '../shared/abortable.ts'
import { requirePeer } from './peer.ts'
import type { QueueOptions } from './queue-options.ts'
import { renderJob } from './render-job.ts'
import { whileUnavailable } from './store-retry.ts'
import { describeRedisUrl, endRedisConnection, redisConnection, takeTurn } from './store/redis.ts'
import { StoreUnavailableError, type StoredJob } from './store/types.ts'

const QUEUE_NAME = 'ucc-render'
/** BullMQ's highest priority number. */
const LOWEST_PRIORITY = 2 ** 21 - 1
/** Times a job is handed on after its worker stopped answering, before it fails. */
const MAX_STALLS = 3
/** How often one of the processes looks for pending jobs the queue does not hold. */
const SWEEP_EVERY_MS = 5_000
/** A pending job younger than this may still be on its way into the queue. */
const ORPHAN_AFTER_MS = 10_000
/** How often a worker process looks for active jobs under its own lock that it is not running. */
const LOST_CHECK_EVERY_MS = 1_000
/** How long a close waits, once it aborted the renders still running, for their jobs to be handed back to the queue. */
const ABORTED_JOBS_END_MS = 2000
/** How long a close with no job in flight lets BullMQ say QUIT to a Redis that is there. */
const QUIT_GRACE_MS = 1_000
/** How long a close waits, once its connections stopped coming back, for BullMQ's close to see them fail (their retries are at most 500 ms apart). */
const GIVE_UP_MS = 2000
/** How long a close waits for a connection still connecting, to end it cleanly. */
const CONNECTING_GRACE_MS = 1_000

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
  const connection = redisConnection(options.redisUrl, { failFast: true })
  const queue: Queue = new QueueClass(QUEUE_NAME, { connection })
  queue.on('error', () => {})
  const stop = new AbortController()
  /** Aborted when a close has waited long enough: the worker's connections stop coming back (see redisConnection). */
  const giveUp = new AbortController()
  let worker: Worker | null = null
  let workerConnection: ReturnType<typeof redisConnection> | null = null
  const engine = options.engine

  if (engine !== null) {
    workerConnection = redisConnection(options.redisUrl, { failFast: false, until: giveUp.signal })
    worker = new WorkerClass(QUEUE_NAME, (bullJob: BullJob<{ id: string }>) => run(bullJob.data.id), {
      connection: workerConnection,
      concurrency: options.workers,
      lockDuration: options.lockMs,
      stalledInterval: Math.max(500, Math.floor(options.lockMs / 2)),
      maxStalledCount: MAX_STALLS,
    })
    worker.on('error', () => {})
  }

  const stored = <T>(id: string, step: string, call: () => Promise<T>): Promise<T> =>
    whileUnavailable(call, stop.signal, () => log({ event: 'store_busy', job: id, step }))

  async function add(job: StoredJob): Promise<void> {
    const stats = await store.stats(job.tokenId)
    const priority = Math.min(LOWEST_PRIORITY, Math.max(1, stats.jobsQueued + stats.jobsProcessing))
    // The job's id is its queue entry's: adding a job the queue holds already does nothing.
    // attempts: a run ended by a shutdown is handed on, not dropped.
    await queue.add('render', { id: job.id }, { jobId: job.id, priority, attempts: MAX_STALLS + 1, removeOnComplete: true, removeOnFail: true }).catch(() => {
      throw new StoreUnavailableError(`The queue at ${where} cannot be reached now.`)
    })
  }

  /** Pending jobs with no queue entry: added again if queued, failed if the queue gave up on them. Errors wait for the next turn. */
  async function sweep(): Promise<void> {
    if (!(await takeTurn(connection, 'sweep', SWEEP_EVERY_MS))) return
    const before = now() - ORPHAN_AFTER_MS
    for (const status of ['queued', 'processing'] as const) {
      for (const job of await store.jobsWithStatus(status)) {
        if (stop.signal.aborted) return
        if (Date.parse(job.updatedAt) > before || (await queue.getJob(job.id))) continue
        if (status === 'queued') {
          await add(job)
          log({ event: 'job_requeued', job: job.id })
          continue
        }
        const failure = { code: 'render_failed', message: `The render workers taking this job stopped answering ${MAX_STALLS + 1} times; it is not tried again.` }
        const failed = await store.updateJob(job.id, { status: 'failed', error: failure, updatedAt: new Date(now()).toISOString() }, ['processing'])
        if (failed) log({ event: 'job_failed', job: job.id, code: failure.code, reason: 'workers_lost' })
      }
    }
  }
  const sweeper = setInterval(() => void sweep().catch(() => {}), SWEEP_EVERY_MS)
  sweeper.unref()

  /** Jobs this process's worker is running, by id (BullMQ's job id is the job's). */
  const running = new Set<string>()
  /** Active jobs under this worker's lock that it was not running at the last look, with that lock. */
  let unclaimed = new Map<string, string>()
  /**
   * Hands back to the queue an active job locked by this worker that it is not running, seen so
   * at two looks in a row with the same lock: its answer was lost with the connection. A job
   * just taken is running well before the next look. Errors wait for the next look.
   */
  async function handBackLost(): Promise<void> {
    if (!worker) return
    const ids = await connection.lrange(queue.toKey('active'), 0, -1)
    const locks = ids.length > 0 ? await connection.mget(ids.map((id) => `${queue.toKey(id)}:lock`)) : []
    const seen = new Map<string, string>()
    for (const [index, id] of ids.entries()) {
      const lock = locks[index]
      if (!lock?.startsWith(`${worker.id}:`) || running.has(id)) continue
      if (unclaimed.get(id) !== lock) {
        seen.set(id, lock)
        continue
      }
      const job = await queue.getJob(id)
      if (!job || running.has(id)) continue
      const handed = await job.moveToWait(lock).then(
        () => true,
        () => false,
      )
      if (!handed) continue
      // BullMQ puts a prioritized job back without the marker its idle workers wait on: they would see it only at their next poll.
      await connection.zadd(queue.toKey('marker'), 0, '0')
      log({ event: 'job_handed_on', job: id, reason: 'answer_lost' })
    }
    unclaimed = seen
  }
  const lostCheck = engine === null ? null : setInterval(() => void handBackLost().catch(() => {}), LOST_CHECK_EVERY_MS)
  lostCheck?.unref()

  /** One job on this worker, from the store's record to its recorded end. Throws only on shutdown: BullMQ then hands it on. */
  async function run(id: string): Promise<void> {
    running.add(id)
    try {
      await runTaken(id)
    } finally {
      running.delete(id)
    }
  }

  async function runTaken(id: string): Promise<void> {
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
      // the background, so a blip between the two does not leave it stored and never run;
      // if this process dies first, the sweep adds it.
      stored(job.id, 'enqueue', () => add(job)).catch(() => log({ event: 'job_unqueued', job: job.id }))
    },
    // The queue is shared: this process cannot tell when another's worker will be free.
    checkAgainIn: () => null,
    // BullMQ keeps the queue across restarts, and hands on the jobs of workers that died.
    restore: async () => {},
    async close(graceMs) {
      clearInterval(sweeper)
      if (lostCheck) clearInterval(lostCheck)
      // BullMQ reads the server's version as its connections open: closed before that read ends, they reject it unheard.
      await settlesWithin(Promise.allSettled([queue.waitUntilReady(), worker?.waitUntilReady()]), CONNECTING_GRACE_MS)
      if (worker) {
        const closing = worker.close()
        // Jobs in flight get the grace; with none, a close that takes longer than a QUIT waits for a Redis that is away.
        let ended = await settlesWithin(closing, running.size > 0 ? graceMs : QUIT_GRACE_MS)
        if (!ended && running.size > 0) {
          // Jobs still rendering are aborted and go back to BullMQ for another worker. Aborted,
          // they end at once and are handed back on the worker's connection: that is let finish,
          // so no write reaches a connection closed under it.
          stop.abort(new Error('The service is shutting down.'))
          ended = await settlesWithin(closing, ABORTED_JOBS_END_MS)
        }
        if (!ended) {
          // Still closing: BullMQ's QUITs wait in a connection's queue while Redis is away (a
          // second, forced close would only return this one). Its connections stop coming back,
          // what they hold fails, and the close ends.
          giveUp.abort()
          await settlesWithin(closing, GIVE_UP_MS)
        }
      }
      stop.abort(new Error('The service is shutting down.'))
      await queue.close()
      // BullMQ leaves a connection it was given open. One still connecting is let finish
      // first (briefly): ended mid-handshake, ioredis rejects its own ready check unheard.
      giveUp.abort()
      for (const client of [connection, workerConnection]) {
        if (client === null) continue
        if (client.status === 'connecting' || client.status === 'connect') await once(client, 'ready', { signal: AbortSignal.timeout(CONNECTING_GRACE_MS) }).catch(() => {})
        await endRedisConnection(client)
      }
    },
  }
}
