/** The in-memory store: the default, and what the embedded mode runs on. */
import type { JobStatus } from '../../contract/api-contract.ts'
import type { JobStats, LocalStore, StoredJob, TokenRecord } from './types.ts'

export function createMemoryStore(): LocalStore {
  const tokens = new Map<string, TokenRecord>()
  const byHash = new Map<string, TokenRecord>()
  const jobs = new Map<string, StoredJob>()
  const jobsOfToken = new Map<string, StoredJob[]>()
  const generations = new Map<string, number>()
  const idempotency = new Map<string, { jobId: string; at: string }>()

  return {
    addToken(record) {
      tokens.set(record.id, { ...record })
      byHash.set(record.hash, tokens.get(record.id)!)
    },
    tokenByHash(hash) {
      const record = byHash.get(hash)
      return record && record.revokedAt === null ? { ...record } : null
    },
    listTokens() {
      return [...tokens.values()].map((record) => ({ ...record }))
    },
    revokeToken(id, at) {
      const record = tokens.get(id)
      if (!record) return false
      record.revokedAt ??= at
      return true
    },

    addJob(job) {
      const copy = { ...job }
      jobs.set(job.id, copy)
      const list = jobsOfToken.get(job.tokenId) ?? []
      list.push(copy)
      jobsOfToken.set(job.tokenId, list)
    },
    job(id) {
      const job = jobs.get(id)
      return job ? { ...job } : null
    },
    updateJob(id, patch) {
      const job = jobs.get(id)
      if (!job) return null
      Object.assign(job, patch)
      return { ...job }
    },
    listJobs(tokenId, query) {
      const list = jobsOfToken.get(tokenId) ?? []
      const out: StoredJob[] = []
      for (let index = list.length - 1; index >= 0 && out.length < query.limit; index--) {
        const job = list[index]!
        if (query.status === undefined || job.status === query.status) out.push({ ...job })
      }
      return out
    },
    jobsWithStatus(status: JobStatus) {
      return [...jobs.values()].filter((job) => job.status === status).map((job) => ({ ...job }))
    },
    stats(tokenId) {
      const stats: JobStats = { jobsTotal: 0, jobsQueued: 0, jobsProcessing: 0, jobsDone: 0, jobsFailed: 0, cssBytesTotal: 0 }
      for (const job of jobsOfToken.get(tokenId) ?? []) {
        stats.jobsTotal += 1
        if (job.status === 'queued') stats.jobsQueued += 1
        else if (job.status === 'processing') stats.jobsProcessing += 1
        else if (job.status === 'done') stats.jobsDone += 1
        else stats.jobsFailed += 1
        stats.cssBytesTotal += job.cssBytes ?? 0
      }
      return stats
    },

    generations(tokenId, period) {
      return generations.get(`${tokenId}\n${period}`) ?? 0
    },
    countGeneration(tokenId, period) {
      const key = `${tokenId}\n${period}`
      generations.set(key, (generations.get(key) ?? 0) + 1)
    },

    idempotentJob(tokenId, key, notBefore) {
      const entry = idempotency.get(`${tokenId}\n${key}`)
      return entry && entry.at >= notBefore ? entry.jobId : null
    },
    rememberIdempotency(tokenId, key, jobId, at) {
      idempotency.set(`${tokenId}\n${key}`, { jobId, at })
    },

    // Nothing here can fail half way, so running the work is enough.
    transaction(work) {
      return work()
    },

    close() {},
  }
}
