/**
 * Waits for many jobs at once at close to one request per job. A pending job is checked when
 * the evidence says it is likely done: the service's pending-job hint first, then how long
 * the jobs seen took (job-times.ts), then when the rest of this batch should be done at the
 * pace its jobs have been finishing, and with no evidence at all on a growing interval (2 s,
 * ×1.5, up to 10 s). When several are due at once, one `jobs()` call reports all their
 * states and only the finished ones are fetched with `jobData`. A job due on its own is
 * checked with a `jobData`, which brings the CSS along when the job is done.
 */
import type { Job, JobData } from '../contract/api-contract.ts'
import { checkMargin, latencyOf, type JobTimes } from './job-times.ts'
import { JobFailedError, NotFoundError, TimeoutError, quoteServiceText, type InvalidResponseError } from './errors.ts'
import type { Now, Sleep } from './retry.ts'
import { WakeableLoop } from './loop.ts'
import type { Ticket } from './scheduler.ts'

/**
 * How often a pending job is checked while nothing tells when it will be done: first after
 * `firstMs`, then each interval `factor` times the last. No wait is longer than `maxMs`, nor,
 * unless the service asks for it, shorter than a quarter of `firstMs`.
 */
export interface CheckInterval {
  firstMs: number
  factor: number
  maxMs: number
}

export const CHECK_INTERVAL: Readonly<CheckInterval> = { firstMs: 2000, factor: 1.5, maxMs: 10_000 }

/** A learnt wait, kept within the check interval's bounds. */
export function learntWait(ms: number, { firstMs, maxMs }: Readonly<CheckInterval>): number {
  return Math.min(maxMs, Math.max(firstMs / 4, ms))
}

/** Jobs due within this share of their wait of each other are checked together. */
const GROUP_SLACK = 0.1

/** A list answer covers this many jobs at most (the contract's maximum `limit`). */
const LIST_LIMIT = 100

export interface Answered<T> {
  value: T
  retryAfterMs: number | null
}

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

/** One `waitForCss` call: its own deadline and signal. */
interface Subscriber {
  deadline: number | undefined
  resolve(data: JobData): void
  reject(error: unknown): void
  /** Cancels the deadline timer and the abort listener. */
  detach(): void
}

/** The checks of one job, shared by every wait on it. */
interface Watch {
  id: string
  /** The page URL; empty until an answer tells it (a wait on a bare id). */
  url: string
  lastStatus: string
  /** When it was accepted, on the client's clock (a bare id: when the wait began). */
  acceptedAt: number
  intervalMs: number
  nextCheckAt: number
  /** How much later than `nextCheckAt` it may be checked, to share a list call with others. */
  slackMs: number
  /** Set when a list answer did not include this job: check it on its own next time. */
  checkAlone: boolean
  /** Its next check is when the service's pending-job hint said: it is likely done by then. */
  hinted: boolean
  fetching: boolean
  /** Its time is in the batch's. */
  counted: boolean
  subscribers: Set<Subscriber>
  /** Aborted when the watch ends, to cancel its requests. */
  controller: AbortController
}

export function jobFailedError(job: Pick<Job, 'id' | 'url' | 'error'>, token: string): JobFailedError {
  const code = job.error?.code ?? 'internal'
  const detail = job.error ? quoteServiceText(job.error.message, token) : 'no reason given'
  return new JobFailedError(`The critical CSS job ${job.id} for ${job.url} failed (${code}): ${detail}`, { status: null, code }, job.id, job.url)
}

const describeJob = (watch: Watch): string => (watch.url ? `${watch.url} (job ${watch.id})` : `job ${watch.id}`)

export class JobWatcher {
  private readonly watches = new Map<string, Watch>()
  /** How long the jobs of this batch (since no job was waited for) took, as they finished. */
  private batchLatencies: number[] = []
  private listUnsupported = false
  private readonly loop: WakeableLoop

  constructor(private readonly deps: WatcherDeps) {
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
      const acceptedAt = Math.min(options.acceptedAt ?? this.deps.now(), options.firstCheckAt)
      watch = {
        id: job.id,
        url: job.url,
        lastStatus: job.status,
        acceptedAt,
        intervalMs: this.deps.checkInterval.firstMs,
        nextCheckAt: options.firstCheckAt,
        slackMs: options.hinted ? 0 : (options.firstCheckAt - acceptedAt) * GROUP_SLACK,
        checkAlone: false,
        hinted: options.hinted === true,
        fetching: false,
        counted: false,
        subscribers: new Set(),
        controller: new AbortController(),
      }
      this.watches.set(job.id, watch)
    } else if (options.firstCheckAt < watch.nextCheckAt) {
      watch.nextCheckAt = options.firstCheckAt
      watch.hinted = options.hinted === true
    }
    const target = watch
    const promise = new Promise<JobData>((resolve, reject) => {
      const timer = new AbortController()
      // A signal of its own per wait: a build's one signal shared by a hundred waits must not
      // collect a hundred listeners.
      const signal = options.signal ? AbortSignal.any([options.signal]) : undefined
      const subscriber: Subscriber = {
        deadline: options.deadline,
        resolve,
        reject,
        detach: () => {
          timer.abort()
          signal?.removeEventListener('abort', onAbort)
        },
      }
      const onAbort = (): void => this.leave(target, subscriber, signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (options.deadline !== undefined) {
        this.deps.sleep(Math.max(0, options.deadline - this.deps.now()), timer.signal).then(
          () =>
            this.leave(
              target,
              subscriber,
              new TimeoutError(`Gave up waiting for the critical CSS of ${describeJob(target)}: the deadline passed while the job was ${target.lastStatus}`, {
                status: null,
                code: 'timeout',
              }),
            ),
          () => {
            // The wait ended first.
          },
        )
      }
      target.subscribers.add(subscriber)
    })
    this.run()
    return promise
  }

  /** Ends every wait with `error` (the client is closing). */
  stopAll(error: Error): void {
    for (const watch of [...this.watches.values()]) this.finish(watch, { error })
  }

  /** One wait gives up; the job's checks stop when no one waits any more. */
  private leave(watch: Watch, subscriber: Subscriber, error: unknown): void {
    if (!watch.subscribers.delete(subscriber)) return
    subscriber.detach()
    subscriber.reject(error)
    if (watch.subscribers.size === 0) this.end(watch)
  }

  private end(watch: Watch): void {
    if (this.watches.get(watch.id) === watch) this.watches.delete(watch.id)
    if (this.watches.size === 0) this.batchLatencies = []
    watch.controller.abort()
    this.wake()
  }

  private finish(watch: Watch, outcome: { data: JobData } | { error: unknown }): void {
    if (this.watches.get(watch.id) !== watch) return
    for (const subscriber of watch.subscribers) {
      subscriber.detach()
      if ('data' in outcome) subscriber.resolve(outcome.data)
      else subscriber.reject(outcome.error)
    }
    watch.subscribers.clear()
    this.end(watch)
  }

  /** The latest deadline of those waiting; undefined when one of them has none. */
  private scopeOf(watches: Watch[]): { deadline: number | undefined } {
    let latest = Number.NEGATIVE_INFINITY
    for (const watch of watches) {
      for (const subscriber of watch.subscribers) {
        if (subscriber.deadline === undefined) return { deadline: undefined }
        latest = Math.max(latest, subscriber.deadline)
      }
    }
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
      // The earliest due job waits a little for others due just after it (a build's jobs,
      // accepted a few ms apart), so that one list call finds them all done.
      const earliest = waiting.reduce((a, b) => (b.nextCheckAt < a.nextCheckAt ? b : a))
      const groupDue = Math.max(...waiting.filter((w) => w.nextCheckAt <= earliest.nextCheckAt + earliest.slackMs).map((w) => w.nextCheckAt))
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
      const candidates = this.pending()
      if (!candidates.some((w) => w.nextCheckAt <= now)) {
        ticket.release({ counted: false })
        continue
      }
      const alone = candidates.find((w) => w.checkAlone && w.nextCheckAt <= now)
      // One job due on its own, when the service said it would be done: its jobData is one
      // request and brings the CSS, where a list would be one more.
      const due = candidates.filter((w) => w.nextCheckAt <= now)
      const hintedAlone = due.length === 1 && due[0]!.hinted ? due[0] : undefined
      if (candidates.length === 1 || alone || this.listUnsupported || hintedAlone) {
        const watch = alone ?? hintedAlone ?? candidates.reduce((a, b) => (b.nextCheckAt < a.nextCheckAt ? b : a))
        await this.checkOne(watch, ticket)
      } else {
        await this.checkMany(candidates, ticket)
      }
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
    if (error instanceof TimeoutError) this.postpone(watch, null)
    else this.finish(watch, { error })
  }

  /** Sets when a job found pending is checked next: see the module's header for the order of evidence. */
  private postpone(watch: Watch, retryAfterMs: number | null): void {
    const { factor, maxMs } = this.deps.checkInterval
    watch.intervalMs = Math.min(maxMs, watch.intervalMs * factor)
    watch.hinted = retryAfterMs !== null
    const now = this.deps.now()
    if (retryAfterMs !== null) {
      watch.nextCheckAt = now + retryAfterMs
      watch.slackMs = 0
      return
    }
    const elapsed = now - watch.acceptedAt
    const learnt = this.deps.times.waitAfter(elapsed) ?? this.batchWait(elapsed)
    const wait = learnt === null ? watch.intervalMs : learntWait(learnt, this.deps.checkInterval)
    watch.nextCheckAt = now + wait
    watch.slackMs = wait * GROUP_SLACK
  }

  /**
   * When the rest of this batch should be done, at the pace its jobs have been finishing
   * (the share done grows from the quickest job's time on, as it has so far): a build waits
   * for all of its pages, so a list call that finds only a few more done buys it nothing.
   * Null before a job of the batch is done.
   */
  private batchWait(elapsed: number): number | null {
    const done = this.batchLatencies.length
    if (done === 0) return null
    const quickest = Math.min(...this.batchLatencies)
    if (elapsed <= quickest) return null
    const pending = [...this.watches.values()].filter((w) => !w.counted).length
    const share = done / (done + pending)
    const end = quickest + (elapsed - quickest) / share
    return end - elapsed + checkMargin(end)
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
      this.learn(watch, job)
      if ('css' in job && typeof job.css === 'string') this.finish(watch, { data: job })
      else this.fetch(watch)
      return
    }
    if (due) this.postpone(watch, retryAfterMs)
  }

  /** Adds a done job's time to its batch's (the client's times learnt it where the answer was read). */
  private learn(watch: Watch, job: Job): void {
    const latency = latencyOf(job)
    // Once per job: a list may see it done before its data is fetched.
    if (latency !== null && !watch.counted) {
      watch.counted = true
      this.batchLatencies.push(latency)
    }
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
