/**
 * What the reference service keeps: tokens (as hashes), jobs with their results, monthly
 * generation counts and idempotency keys. The service speaks to a `Store`: asynchronous,
 * so that its state can live outside the process, and with a new job accepted in one atomic
 * step (its idempotency key, the quota and the job together), so that many processes on one
 * state admit exactly what one would. The stores of one process (in memory, the default,
 * and SQLite, `dataDir`) are `LocalStore`s, synchronous, made a `Store` by store/local.ts.
 * A store that cannot write now (another process holds its database) throws
 * `StoreBusyError` at once instead of waiting, so callers decide how to wait.
 */
import type { JobData, JobStatus, Plan, Selection, Usage } from '../../contract/api-contract.ts'

export interface TokenRecord {
  /** Public id (`tok_…`), shown by `token list`; never the token. */
  id: string
  /** Hex SHA-256 of the token. */
  hash: string
  plan: Plan
  expiresAt: string | null
  /** Generations per month; null: the plan's. */
  quota: number | null
  createdAt: string
  revokedAt: string | null
}

export interface StoredJob extends JobData {
  tokenId: string
  /**
   * What the request said of the critical set (`keep`, `drop`, `states`, `font_faces`,
   * `keyframes`), normalized; absent: the defaults. The service's own: job data does not echo it.
   */
  selection?: Selection
}

/** The usage answer's stats of one token. */
export type JobStats = Usage['stats']

/**
 * The store cannot answer now (Redis out of reach, a database locked by another process).
 * Nothing of the failed call was kept; the same call may succeed a moment later.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}

/** The store cannot take a write now because another process holds the database's write lock. */
export class StoreBusyError extends StoreUnavailableError {
  override name = 'StoreBusyError'
  constructor(where: string) {
    super(`The store at ${where} is busy: another process holds its write lock.`)
  }
}

/** A generate to accept: the job, and what decides whether it is created. */
export interface JobToAccept {
  job: StoredJob
  /** The quota's period (`2026-11`) and its limit; null: unlimited. */
  period: string
  quota: number | null
  /** The generate's Idempotency-Key, and the oldest moment a key still names its job. */
  idempotency?: { key: string; notBefore: string }
}

/** What accepting a job did: created it, found the job its key named, or refused it past the quota. */
export type Accepted = { kind: 'created' } | { kind: 'existing'; job: StoredJob } | { kind: 'over_quota' }

export interface Store {
  addToken(record: TokenRecord): Promise<void>
  /** The unrevoked token with this hash. */
  tokenByHash(hash: string): Promise<TokenRecord | null>
  listTokens(): Promise<TokenRecord[]>
  /** False when no such token. */
  revokeToken(id: string, at: string): Promise<boolean>

  /**
   * In one atomic step: the job a live idempotency key names, else a refusal when the quota
   * is used up, else the job created, its generation counted and its key remembered.
   */
  acceptJob(input: JobToAccept): Promise<Accepted>
  job(id: string): Promise<StoredJob | null>
  /**
   * Replaces the job's fields with `patch`; returns the updated job. With `onlyFrom`, only
   * while the job is in one of those states (null otherwise): a render worker never turns
   * a job another one finished back, or finishes it twice.
   */
  updateJob(id: string, patch: Partial<Omit<StoredJob, 'id' | 'tokenId' | 'createdAt'>>, onlyFrom?: readonly JobStatus[]): Promise<StoredJob | null>
  /** A token's jobs, newest first. */
  listJobs(tokenId: string, query: { limit: number; status?: JobStatus | undefined }): Promise<StoredJob[]>
  /** Jobs in `status`, oldest first: the queue to restore on start. */
  jobsWithStatus(status: JobStatus): Promise<StoredJob[]>
  stats(tokenId: string): Promise<JobStats>
  /** Generations counted for the token in `period` (`2026-11`). */
  generations(tokenId: string, period: string): Promise<number>
  /** The job a key named within the last 24 h, if any. */
  idempotentJob(tokenId: string, key: string, notBefore: string): Promise<string | null>

  close(): Promise<void>
}

/** A store of one process: every method answers at once. */
export interface LocalStore {
  addToken(record: TokenRecord): void
  /** The unrevoked token with this hash. */
  tokenByHash(hash: string): TokenRecord | null
  listTokens(): TokenRecord[]
  /** False when no such token. */
  revokeToken(id: string, at: string): boolean

  addJob(job: StoredJob): void
  job(id: string): StoredJob | null
  /** Replaces the job's fields with `patch`; returns the updated job. */
  updateJob(id: string, patch: Partial<Omit<StoredJob, 'id' | 'tokenId' | 'createdAt'>>): StoredJob | null
  /** A token's jobs, newest first. */
  listJobs(tokenId: string, query: { limit: number; status?: JobStatus | undefined }): StoredJob[]
  /** Jobs in `status`, oldest first: the queue to restore on start. */
  jobsWithStatus(status: JobStatus): StoredJob[]
  stats(tokenId: string): JobStats

  /** Generations counted for the token in `period` (`2026-11`). */
  generations(tokenId: string, period: string): number
  countGeneration(tokenId: string, period: string): void

  /** The job a key named within the last 24 h, if any. */
  idempotentJob(tokenId: string, key: string, notBefore: string): string | null
  rememberIdempotency(tokenId: string, key: string, jobId: string, at: string): void

  /** Runs `work` as one write: all of it is kept, or nothing (when it throws, busy included). */
  transaction<T>(work: () => T): T

  close(): void
}
