/** Store calls that wait out a busy store on timers instead of failing the job they serve. */
import { setTimeout as sleep } from 'node:timers/promises'
import { StoreUnavailableError } from './store/types.ts'

/** Waits between tries of a busy write: the first catches a short lock soon, the longest keeps a long one from costing a spin. */
const BUSY_FIRST_WAIT_MS = 10
const BUSY_LONGEST_WAIT_MS = 1000

/**
 * Runs a store call, and while the store cannot answer tries again on timers, backing off,
 * so the event loop keeps serving. Gives up only when `stop` aborts. `firstWait` is said
 * once per wait, not per try: a lock held for minutes would flood the log.
 */
export async function whileUnavailable<T>(call: () => Promise<T>, stop: AbortSignal, firstWait: () => void): Promise<T> {
  for (let wait = BUSY_FIRST_WAIT_MS, tries = 1; ; wait = Math.min(wait * 2, BUSY_LONGEST_WAIT_MS), tries++) {
    try {
      return await call()
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || stop.aborted) throw error
      if (tries === 1) firstWait()
    }
    await sleep(wait, undefined, { signal: stop })
  }
}
