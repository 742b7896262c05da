/**
 * Waits for many jobs at once at close to one request per job. A pending job is checked when
 * the evidence says it is likely done (check-planner.ts decides when, and what a free slot is
 * spent on). When several are due at once, one `jobs()` call reports all their states and
 * only the finished ones are fetched with `jobData`. A job due on its own is checked with a
 * `jobData`, which brings the CSS along when the job is done.
 */
import type { Job, JobData } from '../contract/api-contract.ts'
import { CheckPlanner, type CheckInterval, type CheckTiming } from './check-planner.ts'
import type { JobTimes } from './job-times.ts'
import { JobWaits, type WaitOutcome } from './job-waits.ts'
import { JobFailedError, NotFoundError, TimeoutError, quoteServiceText, type InvalidResponseError } from './errors.ts'
import type { Now, Sleep } from './retry.ts'
import { WakeableLoop } from './loop.ts'
import type { Answered } from './request.ts'
import type { Ticket } from './scheduler.ts'

// Named here too: the /client entry and bench/build.ts import them from this module.
/** A list answer covers this many jobs at most (the contract's maximum `limit`). */
const LIST_LIMIT = 100

export interface ListedJobs {
  jobs: Job[]
  /** Entries that break the contract, as the error their wait ends with. */
  invalid: { id: string | null; error: InvalidResponseError }[]
}

interface CallScope {
  signal: AbortSignal
  deadline: number | undefined
}

export interface WatcherDeps {
  now: Now
  sleep: Sleep
  token: string
  /** Waits for a status-check slot of the pacer. */
  acquireCheck(signal: AbortSignal): Promise<Ticket>
  /** `jobData`, urgent or as a status check; with `ticket` the first attempt uses that slot. */
  fetchData(id: string, options: CallScope & { ticket?: Ticket; urgent: boolean }): Promise<Answered<JobData>>
  listJobs(options: CallScope & { ticket: Ticket; limit: number }): Promise<Answered<ListedJobs>>
  checkInterval: Readonly<CheckInterval>
  /** What the client learnt of how long jobs take; the watcher adds the jobs its list calls show (fetchData's answers are added by it). */
  times: JobTimes
}

/** The checks of one job, shared by every wait on it. */
interface Watch extends CheckTiming {
  id: string
  /** The page URL; empty until an answer tells it (a wait on a bare id). */
  url: string
  lastStatus: string
  fetching: boolean
  waits: JobWaits
  /** Aborted when the watch ends, to cancel its requests. */
  controller: AbortController
}

export function jobFailedError(job: Pick<Job, 'id' | 'url' | 'error'>, token: string): JobFailedError {
  const code = job.error?.code ?? 'internal'
  const detail = job.error ? quoteServiceText(job.error.message, token) : 'no reason given'
  return new JobFailedError(`The critical CSS job ${job.id} for ${job.url} failed (${code}): ${detail}`, { status: null, code }, job.id, job.url, detail)
}

const describeJob = (watch: Watch): string => (watch.url ? `${watch.url} (job ${watch.id})` : `job ${watch.id}`)

export class JobWatcher {
  private readonly watches = new Map<string, Watch>()
  private readonly planner: CheckPlanner
  private listUnsupported = false
  private readonly loop: WakeableLoop

  constructor(private readonly deps: WatcherDeps) {
    this.planner = new CheckPlanner({ now: deps.now, checkInterval: deps.checkInterval, times: deps.times, watched: () => this.watches.values() })
    this.loop = new WakeableLoop(() => this.checkWhileWaited(), () => this.pending().length > 0, deps.sleep)
  }

  /**
   * Resolves with the job's data once it is done. `firstCheckAt` is when to look first
   * (a job just accepted: a second after; a bare id: now). Waits on the same job share
   * its checks; each keeps its own deadline and signal.
   */
  watch(
    job: { id: string; url: string; status: string },
    options: { firstCheckAt: number; acceptedAt?: number; hinted?: boolean; signal?: AbortSignal | undefined; deadline?: number | undefined },
  ): Promise<JobData> {
    options.signal?.throwIfAborted()
    let watch = this.watches.get(job.id)
    if (!watch) {
      const created: Watch = {
        id: job.id,
        url: job.url,
        lastStatus: job.status,
        ...this.planner.first(options),
        fetching: false,
        waits: new JobWaits(this.deps, () => this.end(created)),
        controller: new AbortController(),
      }
      watch = created
      this.watches.set(job.id, watch)
    } else {
      this.planner.join(watch, options)
    }
    const target = watch
    const promise = target.waits.add(
      options,
      () =>
        new TimeoutError(`Gave up waiting for the critical CSS of ${describeJob(target)}: the deadline passed while the job was ${target.lastStatus}`, {
          status: null,
          code: 'timeout',
        }),
    )
    this.run()
    return promise
  }

  /** The job's next check is now (see CriticalCssClient.checkNow); false when no one waits for it yet. */
  checkNow(id: string): boolean {
    const watch = this.watches.get(id)
    if (!watch) return false
    watch.nextCheckAt = this.deps.now()
    watch.slackMs = 0
    this.wake()
    return true
  }

  /** Ends every wait with `error` (the client is closing). */
  stopAll(error: Error): void {
    for (const watch of [...this.watches.values()]) this.finish(watch, { error })
  }

  private end(watch: Watch): void {
    if (this.watches.get(watch.id) === watch) this.watches.delete(watch.id)
    if (this.watches.size === 0) this.planner.endBatch()
    watch.controller.abort()
    this.wake()
  }

  private finish(watch: Watch, outcome: WaitOutcome): void {
    if (this.watches.get(watch.id) !== watch) return
    watch.waits.settle(outcome)
    this.end(watch)
  }

  /** The latest deadline of those waiting; undefined when one of them has none. */
  private scopeOf(watches: Watch[]): { deadline: number | undefined } {
    const latest = Math.max(...watches.map((watch) => watch.waits.latestDeadline()))
    return { deadline: Number.isFinite(latest) ? latest : undefined }
  }

  private pending(): Watch[] {
    return [...this.watches.values()].filter((w) => !w.fetching)
  }

  private wake(): void {
    this.loop.wake()
  }

  private run(): void {
    this.loop.kick()
  }

  private async checkWhileWaited(): Promise<void> {
    for (;;) {
      const waiting = this.pending()
      if (waiting.length === 0) return
      const groupDue = this.planner.groupDue(waiting)
      if (groupDue > this.deps.now()) {
        await this.loop.pause(groupDue - this.deps.now())
        continue
      }
      // Queue for a slot; a watch coming or going sends us round again, so a slot is not
      // held for jobs no one waits for any more.
      let ticket: Ticket
      try {
        ticket = await this.loop.interruptible((signal) => this.deps.acquireCheck(signal))
      } catch {
        continue
      }
      const now = this.deps.now()
      const next = this.planner.nextCheck(this.pending(), now, this.listUnsupported)
      if (!next) {
        ticket.release({ counted: false })
        continue
      }
      if ('one' in next) await this.checkOne(next.one, ticket)
      else await this.checkMany(next.many, ticket)
    }
  }

  private async checkOne(watch: Watch, ticket: Ticket): Promise<void> {
    watch.checkAlone = false
    try {
      const answer = await this.deps.fetchData(watch.id, { ticket, urgent: false, signal: watch.controller.signal, ...this.scopeOf([watch]) })
      this.apply(watch, answer.value, answer.retryAfterMs, true)
    } catch (error) {
      this.failed(watch, error)
    }
  }

  /**
   * A check failed. Past the deadline it ran under, each wait ends by its own timer (one
   * that came later, with more time, keeps waiting); anything else ends the job's waits.
   */
  private failed(watch: Watch, error: unknown): void {
    if (error instanceof TimeoutError) this.planner.postpone(watch, null)
    else this.finish(watch, { error })
  }

  private async checkMany(candidates: Watch[], ticket: Ticket): Promise<void> {
    // The list call is abandoned once none of the jobs it asks about is waited for.
    const abandoned = new AbortController()
    let left = candidates.length
    const onEnd = (): void => {
      if (--left === 0) abandoned.abort(new Error('No one waits for these jobs any more.'))
    }
    for (const watch of candidates) watch.controller.signal.addEventListener('abort', onEnd, { once: true })
    let answer: Answered<ListedJobs>
    try {
      answer = await this.deps.listJobs({ ticket, limit: LIST_LIMIT, signal: abandoned.signal, ...this.scopeOf(candidates) })
    } catch (error) {
      if (error instanceof NotFoundError) {
        // A service without the list endpoint: check jobs one by one from now on.
        this.listUnsupported = true
        return
      }
      const now = this.deps.now()
      for (const watch of candidates) if (watch.nextCheckAt <= now) this.failed(watch, error)
      return
    } finally {
      for (const watch of candidates) watch.controller.signal.removeEventListener('abort', onEnd)
    }
    // The token's other done jobs in the list are evidence too of how long jobs take.
    for (const job of answer.value.jobs) this.deps.times.observe(job)
    const byId = new Map(answer.value.jobs.map((job) => [job.id, job]))
    const invalidById = new Map(answer.value.invalid.map((entry) => [entry.id, entry.error]))
    const now = this.deps.now()
    for (const watch of candidates) {
      const job = byId.get(watch.id)
      const invalid = invalidById.get(watch.id)
      if (invalid) this.finish(watch, { error: invalid })
      // A job nearly due counts as checked, unless its own hint names a later moment: the list's hint is of its earliest job.
      else if (job) this.apply(watch, job, answer.retryAfterMs, watch.nextCheckAt <= now + watch.slackMs)
      else if (watch.nextCheckAt <= now) watch.checkAlone = true
    }
  }

  /** Acts on a job's state as a check reported it; `due` says whether this counts as its scheduled check. */
  private apply(watch: Watch, job: Job | JobData, retryAfterMs: number | null, due: boolean): void {
    if (this.watches.get(watch.id) !== watch) return
    watch.lastStatus = job.status
    if (!watch.url) watch.url = job.url
    if (job.status === 'failed') {
      this.finish(watch, { error: jobFailedError({ id: watch.id, url: watch.url, error: job.error }, this.deps.token) })
      return
    }
    if (job.status === 'done') {
      this.planner.countDone(watch, job)
      if ('css' in job && typeof job.css === 'string') this.finish(watch, { data: job })
      else this.fetch(watch)
      return
    }
    if (due) this.planner.postpone(watch, retryAfterMs)
  }

  /** Fetches the data of a job a list reported done, ahead of generates and checks. */
  private fetch(watch: Watch): void {
    watch.fetching = true
    this.deps.fetchData(watch.id, { urgent: true, signal: watch.controller.signal, ...this.scopeOf([watch]) }).then(
      (answer) => {
        watch.fetching = false
        // Not done after all (the list ran ahead of the data): back to regular checks.
        this.apply(watch, answer.value, answer.retryAfterMs, answer.value.status !== 'done')
        this.run()
      },
      (error: unknown) => {
        watch.fetching = false
        this.failed(watch, error)
        this.run()
      },
    )
  }
}
