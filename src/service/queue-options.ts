/** What a service process's job queue is built from: its store, its engine, its bounds. */
import type { Engine } from '../engine/engine.ts'
import type { Store, StoredJob } from './store/types.ts'

export interface QueueOptions {
  store: Store
  engine: Engine
  workers: number
  jobTimeoutMs: number
  /** Most jobs one token may have waiting; past it, generate answers 503. */
  maxQueuedPerToken: number
  /** Most jobs waiting in all; past it, generate answers 503. */
  maxQueued: number
  now: () => number
  /** Checked before the engine runs (DNS answers that point inside, say); throws EngineError to fail the job. */
  beforeRun?: (job: StoredJob, signal: AbortSignal) => Promise<void>
  log: (event: Record<string, unknown>) => void
}
