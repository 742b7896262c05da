/**
 * When each pending job is worth checking. A job is checked when the evidence says it is
 * likely done: the service's pending-job hint first, then how long the jobs seen took
 * (job-times.ts), then when the rest of this batch should be done at the pace its jobs have
 * been finishing, and with no evidence at all on a growing interval (2 s, ×1.5, up to 10 s).
 * Jobs due close together wait for each other, so that one list call covers them all.
 */
import type { Job } from '../contract/api-contract.ts'
import { checkMargin, latencyOf, type JobTimes } from './job-times.ts'
import type { Now } from './retry.ts'

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

/** When one job is checked next, and what that rests on. */
export interface CheckTiming {
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
  /** Its time is in the batch's. */
  counted: boolean
}

/** What a free slot is spent on: one job's `jobData`, or a list call over all the candidates. */
export type NextCheck<T> = { one: T } | { many: T[] }

export interface PlannerDeps {
  now: Now
  checkInterval: Readonly<CheckInterval>
  /** What the client learnt of how long jobs take. */
  times: JobTimes
  /** Every job watched, pending or being fetched: the batch whose pace `batchWait` reads. */
  watched(): Iterable<CheckTiming>
}

const earliestOf = <T extends CheckTiming>(timings: T[]): T => timings.reduce((a, b) => (b.nextCheckAt < a.nextCheckAt ? b : a))

export class CheckPlanner {
  /** How long the jobs of this batch (since no job was waited for) took, as they finished. */
  private batchLatencies: number[] = []

  constructor(private readonly deps: PlannerDeps) {}

  /** The timing of a job first waited for; `firstCheckAt` is when to look first. */
  first(options: { firstCheckAt: number; acceptedAt?: number | undefined; hinted?: boolean | undefined }): CheckTiming {
    const acceptedAt = Math.min(options.acceptedAt ?? this.deps.now(), options.firstCheckAt)
    return {
      acceptedAt,
      intervalMs: this.deps.checkInterval.firstMs,
      nextCheckAt: options.firstCheckAt,
      slackMs: options.hinted ? 0 : (options.firstCheckAt - acceptedAt) * GROUP_SLACK,
      checkAlone: false,
      hinted: options.hinted === true,
      counted: false,
    }
  }

  /** Another wait on a job already watched: its first check moves up when this one asks for an earlier one. */
  join(timing: CheckTiming, options: { firstCheckAt: number; hinted?: boolean | undefined }): void {
    if (options.firstCheckAt < timing.nextCheckAt) {
      timing.nextCheckAt = options.firstCheckAt
      timing.hinted = options.hinted === true
    }
  }

  /**
   * When the earliest due job is checked. It waits a little for others due just after it (a
   * build's jobs, accepted a few ms apart), so that one list call finds them all done.
   */
  groupDue(waiting: CheckTiming[]): number {
    const earliest = earliestOf(waiting)
    return Math.max(...waiting.filter((w) => w.nextCheckAt <= earliest.nextCheckAt + earliest.slackMs).map((w) => w.nextCheckAt))
  }

  /** What a slot taken at `now` is spent on; null when no candidate is due any more. */
  nextCheck<T extends CheckTiming>(candidates: T[], now: number, listUnsupported: boolean): NextCheck<T> | null {
    if (!candidates.some((w) => w.nextCheckAt <= now)) return null
    const alone = candidates.find((w) => w.checkAlone && w.nextCheckAt <= now)
    // One job due on its own, when the service said it would be done: its jobData is one
    // request and brings the CSS, where a list would be one more.
    const due = candidates.filter((w) => w.nextCheckAt <= now)
    const hintedAlone = due.length === 1 && due[0]!.hinted ? due[0] : undefined
    if (candidates.length === 1 || alone || listUnsupported || hintedAlone) {
      return { one: alone ?? hintedAlone ?? earliestOf(candidates) }
    }
    return { many: candidates }
  }

  /** Sets when a job found pending is checked next: see the module's header for the order of evidence. */
  postpone(timing: CheckTiming, retryAfterMs: number | null): void {
    const { factor, maxMs } = this.deps.checkInterval
    timing.intervalMs = Math.min(maxMs, timing.intervalMs * factor)
    timing.hinted = retryAfterMs !== null
    const now = this.deps.now()
    if (retryAfterMs !== null) {
      timing.nextCheckAt = now + retryAfterMs
      timing.slackMs = 0
      return
    }
    const elapsed = now - timing.acceptedAt
    const learnt = this.deps.times.waitAfter(elapsed) ?? this.batchWait(elapsed)
    const wait = learnt === null ? timing.intervalMs : learntWait(learnt, this.deps.checkInterval)
    timing.nextCheckAt = now + wait
    timing.slackMs = wait * GROUP_SLACK
  }

  /** Adds a done job's time to its batch's (the client's times learnt it where the answer was read). */
  countDone(timing: CheckTiming, job: Job): void {
    const latency = latencyOf(job)
    // Once per job: a list may see it done before its data is fetched.
    if (latency !== null && !timing.counted) {
      timing.counted = true
      this.batchLatencies.push(latency)
    }
  }

  /** No job is waited for any more: the next one starts a new batch. */
  endBatch(): void {
    this.batchLatencies = []
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
    const pending = [...this.deps.watched()].filter((w) => !w.counted).length
    const share = done / (done + pending)
    const end = quickest + (elapsed - quickest) / share
    return end - elapsed + checkMargin(end)
  }
}
