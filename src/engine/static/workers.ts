/**
 * The static engine's threads: jobs are parsed and matched off the engine's thread (the
 * service's, the build's), a few at a time on each of a few worker threads, so the CPU they
 * take is spread over the cores and the thread that answers requests and writes pages stays
 * free. What crosses is plain data: a job, and its outcome or its failure. A thread that dies
 * fails the jobs it held (`render_failed`) and is replaced by the next job.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { getHeapStatistics } from 'node:v8'
import { Worker } from 'node:worker_threads'
import { EngineError } from '../engine.ts'
import { PageFetchFailed, type StaticJob, type StaticOutcome } from './render.ts'

export type ToWorker = { type: 'job'; id: number; job: StaticJob } | { type: 'abort'; id: number }

/** Why a job failed, as it crosses back: the engine's own failure, the page not coming, or an unexpected fault (said as such, never its text). */
export type WorkerFailure =
  | { kind: 'engine'; code: string; message: string }
  | { kind: 'page'; failure: { kind: 'status' | 'over' | 'failed'; url: string; hops: string[]; message: string }; timedOut: boolean }
  | { kind: 'aborted' }
  | { kind: 'fault' }

export type FromWorker = { type: 'done'; id: number; outcome: StaticOutcome } | { type: 'failed'; id: number; failure: WorkerFailure }

/** A job's failure as it crosses to the engine's thread. */
export function describeFailure(error: unknown): WorkerFailure {
  if (error instanceof EngineError) return { kind: 'engine', code: error.code, message: error.message }
  if (error instanceof PageFetchFailed) return { kind: 'page', failure: { kind: error.failure.kind, url: error.failure.url, hops: [...error.failure.hops], message: error.failure.message }, timedOut: error.timedOut }
  if (error instanceof Error && error.name === 'AbortError') return { kind: 'aborted' }
  return { kind: 'fault' }
}

/** A job's failure back on the engine's thread: what `run` rejects with. */
export class StaticJobFailed extends Error {
  override name = 'StaticJobFailed'
  constructor(readonly failure: WorkerFailure) {
    super(failure.kind === 'engine' ? failure.message : failure.kind)
  }
}

/**
 * The young generation of each thread's heap. A page's parse is a few MB of short-lived
 * objects; on the 1,000-page MkDocs site 32 MB was as fast as 64 MB with some 45 MB less at the
 * peak, and 16 MB slower by an eighth (bench/README.md, the static engine).
 */
const YOUNG_GENERATION_MB = 32
/**
 * The old generation's cap of each thread: the process's own heap limit, but under 2 GiB.
 * From a 2 GiB limit up, V8 lets a heap grow to 4× what is live between full collections;
 * under it, to about 2× (its heap growing factor goes by the heap's maximum). A thread keeps
 * some 35 MB live, and under the 4 GB default of a machine with 16 GB or more its heap grew
 * to 140–180 MB: on the 1,000-page MkDocs site a 2,000 MB cap peaked at 463–490 MB for the
 * whole command, 2,048 MB or none at 580–604 MB, for a few % more CPU. Never tighter than the
 * process's own limit: a page near the engine's document bound parses here as it would on
 * the process's main thread.
 */
const OLD_GENERATION_MB = Math.min(2000, Math.floor(getHeapStatistics().heap_size_limit / (1024 * 1024)))

interface Pending {
  resolve: (outcome: StaticOutcome) => void
  reject: (error: unknown) => void
}

interface Thread {
  worker: Worker
  pending: Map<number, Pending>
}

/** The worker's module: the built file beside this one, or (from source, in tests and benches) this folder's worker.ts under tsx. */
function spawn(): Worker {
  const here = import.meta.url
  const limits = { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: OLD_GENERATION_MB } }
  if (!here.endsWith('.ts')) return new Worker(new URL('./static-worker.mjs', here), limits)
  // tsx's ESM entry, as its exports name it (its CommonJS one does not load in a worker).
  const require = createRequire(here)
  const manifest = require.resolve('tsx/package.json')
  const { exports } = require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> }
  const tsx = pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href
  const target = new URL('./worker.ts', here).href
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(target)}) })`, { eval: true, ...limits })
}

export class StaticWorkers {
  readonly #size: number
  readonly #threads: Thread[] = []
  #next = 1
  #closed = false

  constructor(size: number) {
    this.#size = Math.max(1, size)
    // One thread starts now: its modules load while the build reads its pages, not after the first page is handed over.
    this.#start()
  }

  /** The job's outcome; rejects with StaticJobFailed, or with the signal's reason once it aborts. */
  run(job: StaticJob, signal: AbortSignal): Promise<StaticOutcome> {
    if (this.#closed) return Promise.reject(new EngineError('render_failed', 'The engine is closed.'))
    signal.throwIfAborted()
    const thread = this.#least()
    const id = this.#next++
    return new Promise<StaticOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        thread.pending.delete(id)
        if (thread.pending.size === 0) thread.worker.unref()
        thread.worker.postMessage({ type: 'abort', id } satisfies ToWorker)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      const done = (): void => signal.removeEventListener('abort', onAbort)
      thread.pending.set(id, {
        resolve: (outcome) => (done(), resolve(outcome)),
        reject: (error) => (done(), reject(error)),
      })
      // A thread with jobs keeps the process alive until they end; an idle one does not.
      thread.worker.ref()
      thread.worker.postMessage({ type: 'job', id, job } satisfies ToWorker)
    })
  }

  /** The thread with the fewest jobs, a new one while there are fewer than the size and every thread is busy. */
  #least(): Thread {
    let least: Thread | null = null
    for (const thread of this.#threads) if (least === null || thread.pending.size < least.pending.size) least = thread
    if (least !== null && (least.pending.size === 0 || this.#threads.length >= this.#size)) return least
    return this.#start()
  }

  #start(): Thread {
    const thread: Thread = { worker: spawn(), pending: new Map() }
    this.#threads.push(thread)
    thread.worker.on('message', (message: FromWorker) => {
      const pending = thread.pending.get(message.id)
      if (!pending) return
      thread.pending.delete(message.id)
      if (thread.pending.size === 0) thread.worker.unref()
      if (message.type === 'done') pending.resolve(message.outcome)
      else pending.reject(new StaticJobFailed(message.failure))
    })
    const gone = (): void => {
      const at = this.#threads.indexOf(thread)
      if (at >= 0) this.#threads.splice(at, 1)
      for (const pending of thread.pending.values()) pending.reject(new EngineError('render_failed', 'The static engine’s thread stopped while it rendered the page.'))
      thread.pending.clear()
    }
    thread.worker.on('error', gone)
    thread.worker.on('exit', gone)
    // An idle thread does not keep the process alive: a build that is done exits.
    thread.worker.unref()
    return thread
  }

  async close(): Promise<void> {
    this.#closed = true
    const threads = this.#threads.splice(0)
    await Promise.all(threads.map((thread) => thread.worker.terminate()))
  }
}
