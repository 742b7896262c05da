/**
 * The waits on one job. Every `waitForCss` call on a job shares that job's checks, and each
 * keeps its own deadline and signal: one that gives up leaves the others waiting.
 */
import type { JobData } from '../contract/api-contract.ts'
import { DONE } from '../shared/abortable.ts'
import type { Now, Sleep } from './retry.ts'

/** One `waitForCss` call: its own deadline and signal. */
interface Subscriber {
  deadline: number | undefined
  resolve(data: JobData): void
  reject(error: unknown): void
  /** Cancels the deadline timer and the abort listener. */
  detach(): void
}

export type WaitOutcome = { data: JobData } | { error: unknown }

export class JobWaits {
  private readonly subscribers = new Set<Subscriber>()

  /** @param onLastLeft Called when the last wait gives up, so the job's checks stop. */
  constructor(
    private readonly clock: { now: Now; sleep: Sleep },
    private readonly onLastLeft: () => void,
  ) {}

  /** Adds a wait. It ends when settled, when its signal aborts, or at its deadline with `timedOut()`'s error. */
  add(options: { signal?: AbortSignal | undefined; deadline?: number | undefined }, timedOut: () => Error): Promise<JobData> {
    return new Promise<JobData>((resolve, reject) => {
      const timer = new AbortController()
      // A signal of its own per wait: a build's one signal shared by a hundred waits must not
      // collect a hundred listeners.
      const signal = options.signal ? AbortSignal.any([options.signal]) : undefined
      const subscriber: Subscriber = {
        deadline: options.deadline,
        resolve,
        reject,
        detach: () => {
          timer.abort(DONE)
          signal?.removeEventListener('abort', onAbort)
        },
      }
      const onAbort = (): void => this.leave(subscriber, signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      if (options.deadline !== undefined) {
        this.clock.sleep(Math.max(0, options.deadline - this.clock.now()), timer.signal).then(
          () => this.leave(subscriber, timedOut()),
          () => {
            // The wait ended first.
          },
        )
      }
      this.subscribers.add(subscriber)
    })
  }

  /** Ends every wait with the job's data or an error. */
  settle(outcome: WaitOutcome): void {
    for (const subscriber of this.subscribers) {
      subscriber.detach()
      if ('data' in outcome) subscriber.resolve(outcome.data)
      else subscriber.reject(outcome.error)
    }
    this.subscribers.clear()
  }

  /** The latest deadline of these waits: Infinity when one of them has none, -Infinity when none is left. */
  latestDeadline(): number {
    let latest = Number.NEGATIVE_INFINITY
    for (const subscriber of this.subscribers) {
      if (subscriber.deadline === undefined) return Number.POSITIVE_INFINITY
      latest = Math.max(latest, subscriber.deadline)
    }
    return latest
  }

  /** One wait gives up; the job's checks stop when no one waits any more. */
  private leave(subscriber: Subscriber, error: unknown): void {
    if (!this.subscribers.delete(subscriber)) return
    subscriber.detach()
    subscriber.reject(error)
    if (this.subscribers.size === 0) this.onLastLeft()
  }
}
