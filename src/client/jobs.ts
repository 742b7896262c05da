/**
 * Everything about jobs once generate has started them: reading a job's data, listing
 * jobs, and waiting for the CSS through the one watcher, which shares its checks between
 * every wait on the same job.
 */
import { API_PATHS, parseJobData, parseJobsList, parseJobsListEntries, type Job, type JobData } from '../contract/api-contract.ts'
import { learntWait, type CheckInterval } from './check-planner.ts'
import { contractError } from './errors.ts'
import type { Answered, Clock, Send } from './request.ts'
import { PRIORITY, type Pacer, type Priority, type Ticket } from './scheduler.ts'
import { JobTimes } from './job-times.ts'
import type { CallScope } from './scope.ts'
import { isJobData, type GenerateResult } from './types.ts'
import { JobWatcher, jobFailedError } from './watcher.ts'

export interface JobsDeps {
  send: Send
  pacer: Pacer
  clock: Clock
  token: string
  checkInterval: CheckInterval
  /** What an earlier client learnt of how long jobs take. */
  jobTimes: readonly number[]
}

/** Jobs nobody waits for must not pile up in the accepted times for the life of the client. */
const MAX_REMEMBERED_JOBS = 10_000

export class Jobs {
  /**
   * When each job was accepted and its first check is due: when the service's pending-job
   * hint (the 202's Retry-After) says, else when the quicker jobs seen had finished, else
   * after the check interval's first step; counted from then, not from waitForCss.
   */
  private readonly firstCheck = new Map<string, { acceptedAt: number; at: number; hinted: boolean }>()
  private readonly watcher: JobWatcher
  readonly times: JobTimes

  constructor(private readonly deps: JobsDeps) {
    const { send, pacer, clock, token, checkInterval } = deps
    this.times = new JobTimes(deps.jobTimes)
    this.watcher = new JobWatcher({
      ...clock,
      token,
      checkInterval,
      times: this.times,
      acquireCheck: (signal) => pacer.acquire(PRIORITY.background, { signal, describe: 'a status check' }),
      fetchData: (id, extra) => this.data(id, { ...extra, priority: extra.urgent ? PRIORITY.urgent : PRIORITY.background }),
      listJobs: ({ limit, ...scope }) =>
        send({
          method: 'GET',
          path: `${API_PATHS.jobs}?limit=${limit}`,
          expected: [200],
          parse: (answer) => {
            const { jobs, invalid } = parseJobsListEntries(answer.json)
            return { jobs, invalid: invalid.map(({ id, violation }) => ({ id, error: contractError(`GET ${API_PATHS.jobs}`, answer.status, violation, token) })) }
          },
          priority: PRIORITY.background,
          ...scope,
        }),
    })
  }

  accepted(id: string, retryAfterMs: number | null): void {
    const now = this.deps.clock.now()
    this.firstCheck.set(id, { acceptedAt: now, at: now + (retryAfterMs ?? this.firstWait()), hinted: retryAfterMs !== null })
    if (this.firstCheck.size > MAX_REMEMBERED_JOBS) this.firstCheck.delete(this.firstCheck.keys().next().value as string)
  }

  async data(id: string, extra: Partial<CallScope> & { ticket?: Ticket | undefined; priority: Priority }): Promise<Answered<JobData>> {
    const answer = await this.deps.send({
      method: 'GET',
      path: API_PATHS.jobData(encodeURIComponent(id)),
      jobId: id,
      expected: [200],
      parse: (answer) => parseJobData(answer.json),
      ...extra,
    })
    this.times.observe(answer.value)
    return answer
  }

  /** `search` is a checked query string (`?limit=5`) or empty. */
  async list(search: string, scope: CallScope): Promise<Job[]> {
    const { value } = await this.deps.send({
      method: 'GET',
      path: API_PATHS.jobs + search,
      expected: [200],
      parse: (answer) => parseJobsList(answer.json),
      priority: PRIORITY.normal,
      ...scope,
    })
    for (const job of value) this.times.observe(job)
    return value
  }

  /** The finished data of a job, or of a bare id (checked at once: nothing says when it was accepted). */
  async waitFor(jobOrId: GenerateResult | string, scope: CallScope): Promise<JobData> {
    const { now } = this.deps.clock
    if (typeof jobOrId === 'string') {
      return this.watcher.watch({ id: jobOrId, url: '', status: 'unknown' }, { firstCheckAt: now(), ...scope })
    }
    if (jobOrId.status === 'failed') throw jobFailedError(jobOrId, this.deps.token)
    if (isJobData(jobOrId) && jobOrId.status === 'done' && typeof jobOrId.css === 'string') return jobOrId
    const first = this.firstCheck.get(jobOrId.id) ?? { acceptedAt: now(), at: now() + this.firstWait(), hinted: false }
    this.firstCheck.delete(jobOrId.id)
    const firstCheckAt = jobOrId.status === 'done' ? now() : first.at
    return this.watcher.watch(jobOrId, { firstCheckAt, acceptedAt: first.acceptedAt, hinted: first.hinted, ...scope })
  }

  /** When to look first at a job without a hint: when the quicker jobs seen had finished, else the check interval's first step. */
  private firstWait(): number {
    const learnt = this.times.firstWait()
    return learnt === null ? this.deps.checkInterval.firstMs : learntWait(learnt, this.deps.checkInterval)
  }

  /** The job's next check is now, or its first one once it is waited for. */
  checkNow(id: string): void {
    if (this.watcher.checkNow(id)) return
    const first = this.firstCheck.get(id)
    if (first) first.at = this.deps.clock.now()
  }

  /** Ends every wait with `reason` (the client is closing). */
  stopAll(reason: Error): void {
    this.watcher.stopAll(reason)
  }
}
