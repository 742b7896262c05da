/**
 * A store of this process (memory or SQLite) as the service's `Store`. Accepting a job runs
 * as one of its transactions, so the idempotency key and the quota are read and written
 * with nothing in between.
 */
import type { Accepted, LocalStore, Store } from './types.ts'

export function fromLocal(local: LocalStore): Store {
  return {
    addToken: async (record) => local.addToken(record),
    tokenByHash: async (hash) => local.tokenByHash(hash),
    listTokens: async () => local.listTokens(),
    revokeToken: async (id, at) => local.revokeToken(id, at),
    acceptJob: async ({ job, period, quota, idempotency }) =>
      local.transaction((): Accepted => {
        if (idempotency) {
          const known = local.idempotentJob(job.tokenId, idempotency.key, idempotency.notBefore)
          const existing = known === null ? null : local.job(known)
          if (existing) return { kind: 'existing', job: existing }
        }
        if (quota !== null && local.generations(job.tokenId, period) >= quota) return { kind: 'over_quota' }
        local.addJob(job)
        local.countGeneration(job.tokenId, period)
        if (idempotency) local.rememberIdempotency(job.tokenId, idempotency.key, job.id, job.createdAt)
        return { kind: 'created' }
      }),
    job: async (id) => local.job(id),
    updateJob: async (id, patch, onlyFrom) =>
      onlyFrom === undefined
        ? local.updateJob(id, patch)
        : local.transaction(() => {
            const current = local.job(id)
            return current && onlyFrom.includes(current.status) ? local.updateJob(id, patch) : null
          }),
    listJobs: async (tokenId, query) => local.listJobs(tokenId, query),
    jobsWithStatus: async (status) => local.jobsWithStatus(status),
    stats: async (tokenId) => local.stats(tokenId),
    generations: async (tokenId, period) => local.generations(tokenId, period),
    idempotentJob: async (tokenId, key, notBefore) => local.idempotentJob(tokenId, key, notBefore),
    close: async () => local.close(),
  }
}
