/**
 * The signal and deadline each call runs under. Every one also ends when the client
 * closes, and a call that could not succeed (client closed, signal aborted, deadline
 * passed) fails before it queues for a slot.
 */
import { DONE, abortable } from '../shared/abortable.ts'
import { checkDeadline } from './checks.ts'
import { TimeoutError } from './errors.ts'
import type { Now, Sleep } from './retry.ts'
import type { RequestOptions } from './types.ts'

export interface CallScope {
  signal: AbortSignal | undefined
  deadline: number | undefined
}

/** A public call's signal and checked deadline; throws at once when it is over before it began. */
export function startCall(closed: AbortSignal, now: Now, options: RequestOptions, describe: string): CallScope {
  const scope = { signal: options.signal, deadline: checkDeadline(options.deadline) }
  if (closed.aborted) throw closed.reason
  scope.signal?.throwIfAborted()
  if (scope.deadline !== undefined && now() >= scope.deadline) {
    throw new TimeoutError(`Gave up on ${describe}: the deadline had passed before it started`, { status: null, code: 'timeout' })
  }
  return scope
}

/**
 * The caller's signal joined with the client's own, so close() ends the call too. Always
 * a new signal: the listeners each call adds must not pile up on a long-lived one.
 */
export function joinSignal(closed: AbortSignal, signal: AbortSignal | undefined): AbortSignal {
  return AbortSignal.any(signal ? [signal, closed] : [closed])
}

/** Waits for `promise` within the caller's own signal and deadline. */
export async function settleWithin<T>(promise: Promise<T>, scope: RequestOptions & { now: Now; sleep: Sleep; describe: string }): Promise<T> {
  const watched = scope.signal ? abortable(promise, scope.signal) : promise
  if (scope.deadline === undefined) return watched
  const timer = new AbortController()
  const late = scope.sleep(Math.max(0, scope.deadline - scope.now()), timer.signal).then(() => {
    throw new TimeoutError(`Gave up on ${scope.describe}: the deadline passed before it answered`, { status: null, code: 'timeout' })
  })
  try {
    return await Promise.race([watched, late])
  } finally {
    timer.abort(DONE)
  }
}
