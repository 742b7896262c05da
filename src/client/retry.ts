/**
 * The single retry loop of the client. What is retried: 429, 502, 503, 504 and network
 * faults; never 400, 401, 402, 404. How long it waits: `Retry-After` when the service gave
 * one, else exponential backoff with full jitter. Every wait is abortable and bounded by
 * the caller's deadline: a wait that would end past it fails at once with a TimeoutError.
 */
import { CriticalCssError, NetworkError, RateLimitedError, TimeoutError, WaitingAnswerError, formatSeconds } from './errors.ts'

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>
export type Now = () => number

/** Node's timers hold at most 2^31-1 ms (about 24.8 days); longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Real-time sleep that rejects with the signal's reason when aborted. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    let timer: NodeJS.Timeout
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const arm = (left: number): void => {
      timer = setTimeout(() => {
        if (left > MAX_TIMER_MS) {
          arm(left - MAX_TIMER_MS)
          return
        }
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, Math.min(Math.max(0, left), MAX_TIMER_MS))
    }
    arm(ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })

/** First backoff ceiling, doubling per attempt up to the cap. */
const BACKOFF_BASE_MS = 1000
const BACKOFF_CAP_MS = 60_000

/** Full jitter: a uniform wait between 0 and min(cap, base·2^attempt). */
export function backoffDelay(attempt: number, random: () => number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30))
  return Math.floor(random() * ceiling)
}

const DELTA_SECONDS = /^\s*(\d+)\s*$/
/** An HTTP-date names its weekday or month; this keeps numbers like "-1" away from Date.parse. */
const HTTP_DATE_HINT = /[A-Za-z]{3}/

/**
 * `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP-date. Null when absent
 * or unreadable (the caller then backs off on its own).
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value
  if (text === undefined) return null
  const delta = DELTA_SECONDS.exec(text)
  if (delta?.[1] !== undefined) return Number(delta[1]) * 1000
  if (!HTTP_DATE_HINT.test(text)) return null
  const date = Date.parse(text)
  if (Number.isNaN(date)) return null
  return Math.max(0, date - now)
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504])
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

export function isRetryable(error: unknown): boolean {
  if (error instanceof WaitingAnswerError) return error.status !== null && RETRYABLE_STATUSES.has(error.status)
  if (error instanceof NetworkError) return RETRYABLE_NETWORK_CODES.has(error.code)
  return false
}

/** 429s with a Retry-After are retried until the deadline, but not forever. */
const MAX_PACED_RETRIES = 1000

export interface RetryContext {
  sleep: Sleep
  now: Now
  random: () => number
  /** Faults retried at most this many times (429s with a Retry-After that fits the deadline do not count). */
  maxRetries: number
  /** Longest single wait (a backoff is shortened to it). */
  maxWaitMs: number
  /** Absolute time (by `now`) after which nothing is attempted; undefined = no deadline. */
  deadline?: number | undefined
  signal?: AbortSignal | undefined
  /** What is being attempted, for the TimeoutError's message. */
  describe: string
  onRetry?: (info: { attempt: number; waitMs: number; error: CriticalCssError }) => void
}

/** Waits `ms`, but never past `deadline`: fails with a TimeoutError instead of sleeping uselessly. */
async function waitWithin(ms: number, context: Pick<RetryContext, 'sleep' | 'now' | 'deadline' | 'signal' | 'describe'>, cause?: unknown): Promise<void> {
  context.signal?.throwIfAborted()
  if (context.deadline !== undefined && context.now() + ms > context.deadline) {
    const reason = cause instanceof CriticalCssError ? ` (last error: ${cause.message})` : ''
    throw new TimeoutError(`Gave up on ${context.describe}: the next attempt would come ${formatSeconds(ms)} from now, past the deadline${reason}`, {
      status: null,
      code: 'timeout',
      cause,
    })
  }
  if (ms <= 0) return
  try {
    await context.sleep(ms, context.signal)
  } catch (error) {
    // An injected sleep may reject with its own AbortError; the caller's reason is what counts.
    if (context.signal?.aborted) throw context.signal.reason
    throw error
  }
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable, or the
 * retries or the deadline run out. `attempt` receives the attempt number (0 first).
 */
export async function withRetries<T>(attempt: (n: number) => Promise<T>, context: RetryContext): Promise<T> {
  let faults = 0
  let rateLimits = 0
  // Only waits we chose grow the backoff; a wait the service named does not.
  let backoffs = 0
  for (let n = 0; ; n++) {
    context.signal?.throwIfAborted()
    try {
      return await attempt(n)
    } catch (error) {
      if (!(error instanceof CriticalCssError) || !isRetryable(error)) throw error
      const given = error instanceof WaitingAnswerError ? error.retryAfterMs : null
      // A 429 that says when to come back is the service pacing us, not a fault: it is
      // retried for as long as the deadline allows (bounded without a deadline).
      const pacedByService = error instanceof RateLimitedError && given !== null && context.deadline !== undefined
      if (pacedByService) rateLimits++
      else faults++
      if (faults > context.maxRetries || rateLimits > MAX_PACED_RETRIES) throw error
      const waitMs = Math.min(given ?? backoffDelay(backoffs++, context.random), context.maxWaitMs)
      context.onRetry?.({ attempt: n + 1, waitMs, error })
      await waitWithin(waitMs, context, error)
    }
  }
}
