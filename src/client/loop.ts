/**
 * One async loop at a time over some shared state, woken early when that state changes.
 * The pacer and the job watcher each run one: a single sleeper that recomputes what to do
 * after every change, instead of a timer per waiter.
 */
import type { Sleep } from './retry.ts'

export class WakeableLoop {
  private running = false
  private wakeUp: AbortController | null = null

  /**
   * @param body Runs until there is nothing left to do for now.
   * @param hasWork Checked when the body returns: work that came meanwhile starts it again.
   */
  constructor(
    private readonly body: () => Promise<void>,
    private readonly hasWork: () => boolean,
    private readonly sleep: Sleep,
  ) {}

  /** Starts the loop, or wakes it when it runs. */
  kick(): void {
    if (this.running) {
      this.wake()
      return
    }
    this.running = true
    void this.body().finally(() => {
      this.running = false
      if (this.hasWork()) this.kick()
    })
  }

  /** Ends the current wait early. */
  wake(): void {
    this.wakeUp?.abort()
  }

  /** Sleeps `ms` (null: until woken); a wake ends it early, without an error. */
  async pause(ms: number | null): Promise<void> {
    await this.interruptible(async (signal) => {
      if (ms === null) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
      else await this.sleep(ms, signal)
    }).catch(() => {})
  }

  /** Runs `wait` with a signal that a wake aborts; rejects when woken. */
  async interruptible<T>(wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController()
    this.wakeUp = controller
    try {
      return await wait(controller.signal)
    } finally {
      if (this.wakeUp === controller) this.wakeUp = null
    }
  }
}
