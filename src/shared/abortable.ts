/**
 * Async helpers every layer needs (the client, the service and the engine), kept below all
 * of them: this folder imports nothing of ours.
 */

/**
 * `promise`, settled early with `signal`'s reason once it aborts: the caller stops waiting
 * even for work that does not listen to the signal (an engine, a browser that does not
 * answer, a read shared by many callers). The work itself goes on; a late rejection of it
 * is handled here, never unhandled.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  // A signal of its own: many waits on one long-lived signal must not pile listeners on it.
  const own = AbortSignal.any([signal])
  return new Promise<T>((resolve, reject) => {
    own.addEventListener('abort', () => reject(own.reason), { once: true })
    promise.then(resolve, reject)
  })
}

/**
 * Whether `promise` settles (either way) within `ms`. Nothing is cancelled: a wait past its
 * bound just stops being waited for, and a late rejection is handled here, never unhandled.
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const settled = promise.then(
    () => true,
    () => true,
  )
  try {
    return await Promise.race([settled, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The reason a timer is stopped with once what it bounded is done (`timer.abort(DONE)`): a
 * waited sleep rejects with it and nobody reads it. `abort()` with no reason makes a
 * DOMException, stack and all, on every request a client sends.
 */
export const DONE: unknown = Object.freeze({ done: true })
