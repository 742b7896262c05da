/**
 * What the reference service keeps: tokens (as hashes), jobs with their results, monthly
 * generation counts and idempotency keys. Two implementations: in memory (default) and
 * SQLite (`dataDir`). Every method is synchronous: both stores answer from the process.
 * A store that cannot write now (another process holds its database) throws
 * `StoreBusyError` at once instead of waiting, so callers decide how to wait.
 */
import type { JobData, JobStatus, Plan, Usage } from '../../contract/api-contract.ts'

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
}

/** The usage answer's stats of one token. */
export type JobStats = Usage['stats']

/**
 * The store cannot take a write now because something else holds it (another process
 * writing the same database). Nothing of the failed call was kept; the same call may
 * succeed a moment later.
 */
export class StoreBusyError extends Error {
  override name = 'StoreBusyError'
  constructor(where: string) {
    super(`The store at ${where} is busy: another process holds its write lock.`)
  }
}

export interface Store {
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
