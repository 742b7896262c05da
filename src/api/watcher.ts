/**
 * Waits for many jobs at once at close to one request per job. Each pending job is checked
 * on a growing interval (1 s, ×1.5, up to 10 s, or the service's Retry-After); when several
 * are pending, one `jobs()` call reports all their states and only the finished ones are
 * fetched with `jobData`. With a single job pending its check is a `jobData`, which brings
 * the CSS along when the job is done.
 */
import type { Job, JobData } from './contract.ts'
import { JobFailedError, NotFoundError, TimeoutError, quoteServiceText } from './errors.ts'
import type { Now, Sleep } from './retry.ts'
import type { Ticket } from './scheduler.ts'

export const CHECK_INTERVAL = { firstMs: 1000, factor: 1.5, maxMs: 10_000 } as const

/** A list answer covers this many jobs at most (the contract's maximum `limit`). */
const LIST_LIMIT = 100

export interface Answered<T> {
  value: T
  retryAfterMs: number | null
}

export interface WatcherDeps {
  now: Now
  sleep: Sleep
  token: string
  /** Waits for a status-check slot of the pacer. */
  acquireCheck(signal: AbortSignal): Promise<Ticket>
  /** `jobData` at the given priority; with `ticket` the first attempt uses that slot. */
  fetchData(id: string, options: { ticket?: Ticket; urgent: boolean; signal: AbortSignal; deadline?: number | undefined }): Promise<Answered<JobData>>
  listJobs(options: { ticket: Ticket; limit: number }): Promise<Answered<Job[]>>
}

interface Watch {
  id: string
  url: string
  lastStatus: string
  intervalMs: number
  nextCheckAt: number
  deadline: number | undefined
  /** Set when a list answer did not include this job: check it on its own next time. */
  checkAlone: boolean
  fetching: boolean
  /** Aborted when the watch ends, to cancel its timers and requests. */
  controller: AbortController
  resolve(data: JobData): void
  reject(error: unknown): void
}

export function jobFailedError(job: Pick<Job, 'id' | 'url' | 'error'>, token: string): JobFailedError {
  const code = job.error?.code ?? 'internal'
  const detail = job.error ? quoteServiceText(job.error.message, token) : 'no reason given'
  return new JobFailedError(`The critical CSS job ${job.id} for ${job.url} failed (${code}): ${detail}`, { status: null, code }, job.id, job.url)
}

export class JobWatcher {
  private readonly watches = new Map<string, Watch>()
  private running = false
  private wakeUp: AbortController | null = null
  private listUnsupported = false

  constructor(private readonly deps: WatcherDeps) {}

  /**
   * Resolves with the job's data once it is done. `firstCheckAt` is when to look first
   * (a job just accepted: a second after; a bare id: now).
   */
  watch(job: { id: string; url: string; status: string }, options: { firstCheckAt: number; signal?: AbortSignal | undefined; deadline?: number | undefined }): Promise<JobData> {
    options.signal?.throwIfAborted()
    const existing = this.watches.get(job.id)
    if (existing) {
      // Two waits for one job share its checks.
      return new Promise<JobData>((resolve, reject) => {
        const previousResolve = existing.resolve
        const previousReject = existing.reject
        existing.resolve = (data) => {
          previousResolve(data)
          resolve(data)
        }
        existing.reject = (error) => {
          previousReject(error)
          reject(error)
        }
      })
    }
    return new Promise<JobData>((resolve, reject) => {
      const controller = new AbortController()
      const watch: Watch = {
        id: job.id,
        url: job.url,
        lastStatus: job.status,
        intervalMs: CHECK_INTERVAL.firstMs,
        nextCheckAt: options.firstCheckAt,
        deadline: options.deadline,
        checkAlone: false,
        fetching: false,
        controller,
        resolve,
        reject,
      }
      this.watches.set(job.id, watch)
      const signal = options.signal
      if (signal) {
        const onAbort = (): void => this.finish(watch, { error: signal.reason })
        signal.addEventListener('abort', onAbort, { once: true })
        controller.signal.addEventListener('abort', () => signal.removeEventListener('abort', onAbort), { once: true })
      }
      if (options.deadline !== undefined) this.armDeadline(watch, options.deadline)
      this.run()
    })
  }

  /** Ends every wait with `error` (the client is closing). */
  stopAll(error: Error): void {
    for (const watch of [...this.watches.values()]) this.finish(watch, { error })
  }

  private armDeadline(watch: Watch, deadline: number): void {
    this.deps.sleep(Math.max(0, deadline - this.deps.now()), watch.controller.signal).then(
      () => {
        this.finish(watch, {
          error: new TimeoutError(
            `Gave up waiting for the critical CSS of ${watch.url} (job ${watch.id}): the deadline passed while the job was ${watch.lastStatus}`,
            { status: null, code: 'timeout' },
          ),
        })
      },
      () => {
        // The watch ended first.
      },
    )
  }

  private finish(watch: Watch, outcome: { data: JobData } | { error: unknown }): void {
    if (this.watches.get(watch.id) !== watch) return
    this.watches.delete(watch.id)
    watch.controller.abort()
    if ('data' in outcome) watch.resolve(outcome.data)
    else watch.reject(outcome.error)
    this.wake()
  }

  private pending(): Watch[] {
    return [...this.watches.values()].filter((w) => !w.fetching)
  }

  private wake(): void {
    this.wakeUp?.abort()
  }

  private run(): void {
    if (this.running) {
      this.wake()
      return
    }
    this.running = true
    void this.loop().finally(() => {
      this.running = false
      if (this.pending().length > 0) this.run()
    })
  }

  private async sleepUntil(time: number): Promise<void> {
    const controller = new AbortController()
    this.wakeUp = controller
    try {
      await this.deps.sleep(Math.max(0, time - this.deps.now()), controller.signal)
    } catch {
      // Woken: a watch came or went.
    } finally {
      if (this.wakeUp === controller) this.wakeUp = null
    }
  }

  private async loop(): Promise<void> {
    for (;;) {
      const waiting = this.pending()
      if (waiting.length === 0) return
      const nextDue = Math.min(...waiting.map((w) => w.nextCheckAt))
      if (nextDue > this.deps.now()) {
        await this.sleepUntil(nextDue)
        continue
      }
      // Give the slot back if every pending watch ends while we queue for it.
      const idle = new AbortController()
      this.wakeUp = idle
      let ticket: Ticket
      try {
        ticket = await this.deps.acquireCheck(idle.signal)
      } catch {
        continue
      } finally {
        if (this.wakeUp === idle) this.wakeUp = null
      }
      const now = this.deps.now()
      const candidates = this.pending()
      if (!candidates.some((w) => w.nextCheckAt <= now)) {
        // Whatever was due ended while we queued for the slot.
        ticket.release({ counted: false })
        continue
      }
      const alone = candidates.find((w) => w.checkAlone && w.nextCheckAt <= now)
      if (candidates.length === 1 || alone || this.listUnsupported) {
        const watch = alone ?? candidates.reduce((a, b) => (b.nextCheckAt < a.nextCheckAt ? b : a))
        await this.checkOne(watch, ticket)
      } else {
        await this.checkMany(candidates, ticket)
      }
    }
  }

  private async checkOne(watch: Watch, ticket: Ticket): Promise<void> {
    watch.checkAlone = false
    try {
      const answer = await this.deps.fetchData(watch.id, { ticket, urgent: false, signal: watch.controller.signal, deadline: watch.deadline })
      this.apply(watch, answer.value, answer.retryAfterMs, true)
    } catch (error) {
      this.finish(watch, { error })
    }
  }

  private async checkMany(candidates: Watch[], ticket: Ticket): Promise<void> {
    let answer: Answered<Job[]>
    try {
      answer = await this.deps.listJobs({ ticket, limit: LIST_LIMIT })
    } catch (error) {
      if (error instanceof NotFoundError) {
        // A service without the list endpoint: check jobs one by one from now on.
        this.listUnsupported = true
        return
      }
      const now = this.deps.now()
      for (const watch of candidates) if (watch.nextCheckAt <= now) this.finish(watch, { error })
      return
    }
    const byId = new Map(answer.value.map((job) => [job.id, job]))
    const now = this.deps.now()
    for (const watch of candidates) {
      const job = byId.get(watch.id)
      if (job) this.apply(watch, job, answer.retryAfterMs, watch.nextCheckAt <= now + watch.intervalMs / 2)
      else if (watch.nextCheckAt <= now) watch.checkAlone = true
    }
  }

  /** Acts on a job's state as a check reported it; `due` says whether this counts as its scheduled check. */
  private apply(watch: Watch, job: Job | JobData, retryAfterMs: number | null, due: boolean): void {
    if (this.watches.get(watch.id) !== watch) return
    watch.lastStatus = job.status
    if (job.status === 'failed') {
      this.finish(watch, { error: jobFailedError({ id: watch.id, url: watch.url || job.url, error: job.error }, this.deps.token) })
      return
    }
    if (job.status === 'done') {
      if ('css' in job && typeof job.css === 'string') this.finish(watch, { data: job })
      else this.fetch(watch)
      return
    }
    if (due) {
      watch.intervalMs = Math.min(CHECK_INTERVAL.maxMs, watch.intervalMs * CHECK_INTERVAL.factor)
      watch.nextCheckAt = this.deps.now() + (retryAfterMs ?? watch.intervalMs)
    }
  }

  /** Fetches the data of a job a list reported done, ahead of generates and checks. */
  private fetch(watch: Watch): void {
    watch.fetching = true
    this.deps.fetchData(watch.id, { urgent: true, signal: watch.controller.signal, deadline: watch.deadline }).then(
      (answer) => {
        watch.fetching = false
        if (answer.value.status === 'done') this.apply(watch, answer.value, answer.retryAfterMs, false)
        else {
          // The list said done but the data does not (yet): back to regular checks.
          this.apply(watch, answer.value, answer.retryAfterMs, true)
          this.run()
        }
      },
      (error: unknown) => {
        watch.fetching = false
        this.finish(watch, { error })
      },
    )
  }
}
