/**
 * Checks of what a caller passes, made before anything is sent: a bad argument is a
 * TypeError at the call, not a request the service has to refuse (and count). Messages
 * name createClient's own fields only, so that whoever wraps the client can add its own
 * way of setting them in one more sentence.
 */
import {
  IDEMPOTENCY_KEY_PATTERN,
  JOBS_LIMIT,
  JOB_ID_PATTERN,
  JOB_STATUSES,
  TOKEN_PATTERN,
  checkPageUrl,
  checkViewports,
  checkThirdParty,
  checkSelection,
} from '../contract/api-contract.ts'
import type { GenerateOptions, JobsQuery } from './types.ts'

/** The base URL without query, fragment or trailing slash, so paths can be appended as they are. */
export function checkBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl.length === 0) {
    throw new TypeError('No critical CSS service address: `baseUrl` is missing or empty.')
  }
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new TypeError('The critical CSS service address (`baseUrl`) is not an absolute URL.')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('The critical CSS service address (`baseUrl`) must be an http:// or https:// URL.')
  }
  url.search = ''
  url.hash = ''
  return url.toString().replace(/\/+$/, '')
}

/** A duration option: a positive number of ms. */
export function checkDuration(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new TypeError(`\`${name}\` must be a positive number of milliseconds.`)
  return value
}

export function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0) {
    throw new TypeError('No API token: `token` is missing or empty.')
  }
  if (!TOKEN_PATTERN.test(token)) {
    // Say what is wrong with it without repeating any of it.
    throw new TypeError(`The API token (\`token\`) must be 16–256 printable ASCII characters without spaces; the one given has ${token.length} characters.`)
  }
  return token
}

/** The `jobTimes` option: the last 100 of them, each a number of ms ≥ 0. */
export function checkJobTimes(value: unknown, kept: number): number[] {
  if (!Array.isArray(value) || !value.every((ms) => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)) {
    throw new TypeError('`jobTimes` must be an array of job durations in milliseconds (numbers ≥ 0), as `client.jobTimes` gives them.')
  }
  return (value as number[]).slice(-kept)
}

/** Deadlines are absolute ms on the client's clock; Infinity means none. */
export function checkDeadline(deadline: unknown): number | undefined {
  if (deadline === undefined || deadline === Number.POSITIVE_INFINITY) return undefined
  if (typeof deadline !== 'number' || Number.isNaN(deadline)) throw new TypeError('deadline must be a time in ms (as Date.now() gives), or undefined.')
  return deadline
}

export function checkJobId(id: unknown, method: string): void {
  if (typeof id !== 'string' || !JOB_ID_PATTERN.test(id)) throw new TypeError(`${method}(): a job id is 1–64 characters of A–Z, a–z, 0–9, _ and -.`)
}

/** Checks generate's arguments; returns the idempotency key every attempt of the call will carry. */
export function checkGenerate(url: string, options: GenerateOptions, freshKey: () => string): string {
  const urlProblem = checkPageUrl(url)
  if (urlProblem) throw new TypeError(`generate(): ${urlProblem}.`)
  const viewportProblem = checkViewports(options.viewports)
  if (viewportProblem) throw new TypeError(`generate(): ${viewportProblem}.`)
  const thirdPartyProblem = checkThirdParty(options.thirdParty)
  if (thirdPartyProblem) throw new TypeError(`generate(): ${thirdPartyProblem.replace(/^third_party/, 'thirdParty')}.`)
  const selection = (options.selection ?? {}) as Record<string, unknown>
  if (options.selection !== undefined && (options.selection === null || typeof options.selection !== 'object' || Array.isArray(options.selection))) {
    throw new TypeError('generate(): selection must be an object ({ keep, drop, states, fontFaces, keyframes }).')
  }
  const selectionProblem = checkSelection(
    { keep: selection.keep, drop: selection.drop, states: selection.states, fontFaces: selection.fontFaces, keyframes: selection.keyframes },
    { keep: 'selection.keep', drop: 'selection.drop', states: 'selection.states', fontFaces: 'selection.fontFaces', keyframes: 'selection.keyframes' },
  )
  if (selectionProblem) throw new TypeError(`generate(): ${selectionProblem}.`)
  const key = options.idempotencyKey ?? freshKey()
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new TypeError('generate(): idempotencyKey must be 1–255 printable ASCII characters.')
  return key
}

/** The query string of a `jobs()` call (`?limit=5&status=done`, or empty), once its values are checked. */
export function jobsSearch(query: JobsQuery): string {
  const params = new URLSearchParams()
  if (query.limit !== undefined) {
    if (!Number.isInteger(query.limit) || query.limit < JOBS_LIMIT.min || query.limit > JOBS_LIMIT.max) {
      throw new TypeError(`jobs(): limit must be a whole number from ${JOBS_LIMIT.min} to ${JOBS_LIMIT.max}.`)
    }
    params.set('limit', String(query.limit))
  }
  if (query.status !== undefined) {
    if (!(JOB_STATUSES as readonly string[]).includes(query.status)) throw new TypeError(`jobs(): status must be one of ${JOB_STATUSES.join(', ')}.`)
    params.set('status', query.status)
  }
  return params.size > 0 ? `?${params}` : ''
}
