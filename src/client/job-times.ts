/**
 * How long this service's jobs take, as far as the client has seen: the time from a job's
 * `created_at` to its `updated_at` once done (queue and render, both on the service's
 * clock, so the client's own clock cannot skew it). Every done job an answer shows counts:
 * the client's own, and the token's earlier jobs a list brings along. Checks of pending
 * jobs are timed by it, so a job is looked at when jobs like it have finished, not on a
 * guess.
 */
import type { Job } from '../contract/api-contract.ts'

/** The most recent finished jobs kept; older ones say less about the service as it is now. */
export const JOB_TIMES_KEPT = 100

/** Checks go this much after the moment a sample names: timers and the wire are not exact. */
export function checkMargin(ms: number): number {
  return Math.max(25, ms * 0.02)
}

/** The value at quantile `q` (0–1) of sorted `values`, nearest rank. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

/** How long a done job took from creation to done; null for a job not done or with timestamps that make no sense. */
export function latencyOf(job: Pick<Job, 'status' | 'createdAt' | 'updatedAt'>): number | null {
  if (job.status !== 'done') return null
  const latency = Date.parse(job.updatedAt) - Date.parse(job.createdAt)
  return Number.isFinite(latency) && latency >= 0 ? latency : null
}

export class JobTimes {
  /** Latency in ms by job id, oldest first. */
  private readonly byId = new Map<string, number>()

  /** `known`: what an earlier client learnt (its `jobTimes`), checked. */
  constructor(known: readonly number[] = []) {
    known.forEach((latency, i) => this.byId.set(`known:${i}`, latency))
  }

  /** The latencies kept, oldest first. */
  all(): number[] {
    return [...this.byId.values()]
  }

  /** Learns from a job an answer showed; anything but a done job with sane timestamps is ignored. */
  observe(job: Pick<Job, 'id' | 'status' | 'createdAt' | 'updatedAt'>): void {
    const latency = latencyOf(job)
    if (latency === null || this.byId.has(job.id)) return
    this.byId.set(job.id, latency)
    if (this.byId.size > JOB_TIMES_KEPT) this.byId.delete(this.byId.keys().next().value as string)
  }

  /**
   * When to look first at a job just accepted, in ms from now: when the quicker quarter of
   * the jobs seen had finished (a build's first check should find some done, and the rest
   * are timed by what it finds). Null before any job was seen done.
   */
  firstWait(): number | null {
    if (this.byId.size === 0) return null
    const typical = quantile(this.sorted(), 0.25)
    return typical + checkMargin(typical)
  }

  /**
   * How long until a job pending `elapsedMs` after it was accepted is worth checking, from the
   * jobs seen that took longer than that: when nearly all of them (90 %) had finished. Null
   * when no job seen took that long.
   */
  waitAfter(elapsedMs: number): number | null {
    const longer = this.sorted().filter((latency) => latency > elapsedMs)
    if (longer.length === 0) return null
    const expected = quantile(longer, 0.9)
    return expected - elapsedMs + checkMargin(expected)
  }

  private sorted(): number[] {
    return [...this.byId.values()].sort((a, b) => a - b)
  }
}
