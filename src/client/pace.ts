/**
 * Where the pacer's limit comes from: the `rateLimit` option pins it, else usage states it
 * (its own numbers, else the plan's default rate). Callers ask the client for it (`pace()`).
 */
import { PLAN_REQUESTS_PER_MINUTE, RATE_WINDOW_MS, type Usage } from '../contract/api-contract.ts'
import type { PaceLimit } from './rate-window.ts'
import type { RateLimitOption } from './types.ts'

/** The pace a `rateLimit` option sets; throws a TypeError for a bad one. */
export function paceFromOption(option: RateLimitOption): PaceLimit {
  const { requestsPerMinute, windowMs = RATE_WINDOW_MS } = option
  if (requestsPerMinute !== null && (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1)) {
    throw new TypeError('rateLimit.requestsPerMinute must be a whole number ≥ 1, or null for no limit.')
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new TypeError('rateLimit.windowMs must be a positive number of milliseconds.')
  return { requests: requestsPerMinute, windowMs }
}

/** The pace usage implies: its own numbers, else the plan's. */
export function paceFromUsage(usage: Usage): PaceLimit {
  return { requests: usage.rateLimit.requestsPerMinute ?? PLAN_REQUESTS_PER_MINUTE[usage.plan], windowMs: RATE_WINDOW_MS }
}
