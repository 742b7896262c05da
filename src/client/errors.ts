/**
 * One error class per kind of failure, each with `.status` (the HTTP status, or null when
 * no answer came) and `.code` (the error body's code, or ours). Messages say what to do
 * next and never contain the API token: everything the service says is passed through
 * {@link redact} before it becomes part of a message. They speak of createClient's own
 * fields (`baseUrl`, `token`) and of the request, never of how a wrapper sets them, and
 * end with a full sentence, so a wrapper can append its own hint.
 */
import { JOBS_LIMIT, JOB_STATUSES, type ContractViolation, type ErrorBody, type Usage } from '../contract/api-contract.ts'

export interface CriticalCssErrorDetails {
  status: number | null
  code: string
  cause?: unknown
  /** The last sentence of the message when it says which of createClient's options to check: appended to the message, and kept apart so a wrapper can say it in its own words ({@link rehint}). */
  hint?: string
}

export class CriticalCssError extends Error {
  override name = 'CriticalCssError'
  /** HTTP status of the answer, or null when there was none (network fault, deadline, job failure). */
  readonly status: number | null
  /** The service's error code (`rate_limited`, `plan_limit_reached`, …) or one of ours (`timeout`, `ECONNRESET`, …). */
  readonly code: string
  /** The message's closing advice about createClient's options (`baseUrl`, `token`, …), or null: see {@link rehint}. */
  readonly hint: string | null

  constructor(message: string, details: CriticalCssErrorDetails) {
    super(details.hint === undefined ? message : `${message} ${details.hint}`, details.cause === undefined ? undefined : { cause: details.cause })
    this.status = details.status
    this.code = details.code
    this.hint = details.hint ?? null
  }
}

/**
 * The message with its closing advice replaced by `hint`: a wrapper that sets createClient's
 * options its own way (env vars, plugin options) says where to look once, not twice.
 */
export function rehint(error: CriticalCssError, hint: string): string {
  const { message } = error
  if (error.hint !== null && message.endsWith(error.hint)) return `${message.slice(0, message.length - error.hint.length)}${hint}`
  return `${message} ${hint}`
}

/** 400: the request itself is wrong (usually the page URL). Never retried. */
export class BadRequestError extends CriticalCssError {
  override name = 'BadRequestError'
}

/** 401: the token is missing, malformed or unknown. Never retried. */
export class UnauthorizedError extends CriticalCssError {
  override name = 'UnauthorizedError'
}

/** 402: the plan's monthly limit is used up (`plan_limit_reached`) or the subscription expired (`subscription_expired`). */
export class PaymentRequiredError extends CriticalCssError {
  override name = 'PaymentRequiredError'
}

/** 404: unknown path, or a job that does not exist for this token. */
export class NotFoundError extends CriticalCssError {
  override name = 'NotFoundError'
}

/** An answer that may say when to come back: `retryAfterMs` is the wait the service gave, or null. */
export abstract class WaitingAnswerError extends CriticalCssError {
  constructor(
    message: string,
    details: CriticalCssErrorDetails,
    readonly retryAfterMs: number | null,
  ) {
    super(message, details)
  }
}

/** 429: over the plan's request rate. */
export class RateLimitedError extends WaitingAnswerError {
  override name = 'RateLimitedError'
}

/** 5xx: a fault of the service. 502, 503 and 504 are retried. */
export class ServerError extends WaitingAnswerError {
  override name = 'ServerError'
}

/** Any other answer the contract does not expect for the request (405, 413, …). */
export class UnexpectedStatusError extends CriticalCssError {
  override name = 'UnexpectedStatusError'
}

/** No answer: connection refused or reset, socket timeout, DNS failure. `code` is the system or undici code. */
export class NetworkError extends CriticalCssError {
  override name = 'NetworkError'
}

/**
 * The base URL leads nowhere, or to something that is not the API, and nothing has yet
 * answered this client as the API does: with `failFastOnWrongAddress`, the first requests
 * fail with this at once instead of being retried. `code`: `ECONNREFUSED`, `ENOTFOUND`, or
 * `not_the_api` (an answer that is not the contract's, `status` its status).
 */
export class WrongAddressError extends CriticalCssError {
  override name = 'WrongAddressError'
}

/** The caller's deadline passed (or would pass before the next attempt could be made). */
export class TimeoutError extends CriticalCssError {
  override name = 'TimeoutError'
}

/** The job ended in `failed`; `code` is the job's failure code (`fetch_failed`, `render_failed`, …). */
export class JobFailedError extends CriticalCssError {
  override name = 'JobFailedError'
  constructor(
    message: string,
    details: CriticalCssErrorDetails,
    readonly jobId: string,
    readonly url: string,
    /** The service's own words for the failure, redacted. */
    readonly reason: string,
  ) {
    super(message, details)
  }
}

/** The answer does not follow the contract (missing field, unknown job status, not JSON). */
export class InvalidResponseError extends CriticalCssError {
  override name = 'InvalidResponseError'
}

// ---------------------------------------------------------------------------------------

const REDACTED = '[redacted]'
const MAX_QUOTED = 300

/** A part of a secret this long is as good as the secret. */
const MIN_SECRET_PART = 12

/**
 * What a service may echo of `secret`: the secret itself, the part after each `_` of its
 * prefix (`tok_live_…` → `live_…`, `…`), and its base64 and base64url forms.
 */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')])
  for (let at = secret.indexOf('_'); at !== -1; at = secret.indexOf('_', at + 1)) {
    const rest = secret.slice(at + 1)
    if (rest.length >= MIN_SECRET_PART) forms.add(rest)
  }
  // Longest first: a form inside another is replaced after it.
  return [...forms].sort((a, b) => b.length - a.length)
}

/** Removes every occurrence of `secret` from `text`, in any letter case, also without its prefix or base64-encoded. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text
  const pattern = new RegExp(secretForms(secret).map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi')
  return text.replace(pattern, REDACTED)
}

/** Text the service sent, made safe to put in a message: no token, bounded length, one line. */
export function quoteServiceText(text: string, token: string | undefined): string {
  const oneLine = redact(text, token).replace(/\s+/g, ' ').trim()
  return oneLine.length > MAX_QUOTED ? `${oneLine.slice(0, MAX_QUOTED)}…` : oneLine
}

/** `https://user:pass@host/x` → `https://host/x`: credentials in a base URL must not reach a message either. */
export function describeBaseUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl)
    url.username = ''
    url.password = ''
    return url.toString().replace(/\/$/, '')
  } catch {
    return '(invalid base URL)'
  }
}

export interface ResponseContext {
  /** `POST /api/critical-css/generate`: which request got this answer. */
  request: string
  baseUrl: string
  token: string
  /** The page the request was about, when there is one. */
  pageUrl?: string | undefined
  /** True when the request sent viewports of its own along with the page URL. */
  viewportsSent?: boolean | undefined
  /** The query string the request sent (`?limit=5`), when it had one. */
  query?: string | undefined
  /** The job the request was about, when there is one. */
  jobId?: string | undefined
  retryAfterMs: number | null
  /** The latest usage the client read, to explain a 402. */
  usage: Usage | null
}

function formatDay(iso: string | null | undefined): string | null {
  if (!iso) return null
  const time = Date.parse(iso)
  return Number.isNaN(time) ? null : new Date(time).toISOString().slice(0, 10)
}

function explainPaymentRequired(code: string, usage: Usage | null, serverMessage: string): string {
  if (code === 'subscription_expired') {
    const day = formatDay(usage?.subscription.expiresAt)
    return `Your critical CSS subscription ${day ? `expired on ${day}` : 'has expired'}; renew it to generate critical CSS again (402 subscription_expired).`
  }
  if (code === 'plan_limit_reached') {
    const limit = usage?.quota.generationsLimit
    const resets = formatDay(usage?.quota.resetsAt)
    const what = limit != null ? `Your plan's monthly limit of ${limit} generation${limit === 1 ? '' : 's'}` : "Your plan's monthly generation limit"
    return `${what} is used up${resets ? `; it resets on ${resets} (UTC)` : ''}. Upgrade the plan or wait for the reset (402 plan_limit_reached).`
  }
  return `The critical CSS service refused to generate (402 ${code}): ${serverMessage}.`
}

/** What a 400 is likely about: only what the request carried from its caller. */
function badRequestHint(context: ResponseContext): string | undefined {
  if (context.pageUrl !== undefined) {
    return context.viewportsSent ? 'Check the page URL and the `viewports` given to generate().' : 'Check the page URL given to generate().'
  }
  if (context.query !== undefined) {
    return `Check the query sent (${context.query}): limit must be a whole number from ${JOBS_LIMIT.min} to ${JOBS_LIMIT.max}, status one of ${JOB_STATUSES.join(', ')}.`
  }
  return undefined
}

/** The error for an answer with a non-success status. */
export function errorFromResponse(status: number, body: ErrorBody | null, context: ResponseContext): CriticalCssError {
  const code = body?.code ?? `http_${status}`
  const serverMessage = body ? quoteServiceText(body.message, context.token) : 'no error body'
  const where = describeBaseUrl(context.baseUrl)
  const about = context.pageUrl ? ` for ${context.pageUrl}` : ''
  const details = { status, code }

  switch (status) {
    case 400:
      return new BadRequestError(`The critical CSS service rejected ${context.request}${about} (400 ${code}): ${serverMessage}.`, {
        ...details,
        hint: badRequestHint(context),
      })
    case 401:
      return new UnauthorizedError(`The critical CSS service at ${where} rejected the API token (401 ${code}).`, {
        ...details,
        hint: 'Check that `token` is a valid API token for this service.',
      })
    case 402:
      return new PaymentRequiredError(explainPaymentRequired(code, context.usage, serverMessage), details)
    case 404:
      if (context.jobId !== undefined) {
        return new NotFoundError(
          `The critical CSS service does not know job ${context.jobId} (404 ${code}): it expired, or it belongs to another token.`,
          details,
        )
      }
      return new NotFoundError(`${context.request} at ${where} answered 404 ${code}: ${serverMessage}.`, {
        ...details,
        hint: 'Check that `baseUrl` points at a Critical CSS Generation API.',
      })
    case 429: {
      const wait = context.retryAfterMs == null ? 'it gave no Retry-After' : `it asks to retry after ${formatSeconds(context.retryAfterMs)}`
      return new RateLimitedError(
        `The critical CSS service rate-limited ${context.request}${about} (429 ${code}); ${wait}. If this keeps happening, another client may be sharing the token, or set the \`rateLimit\` option to the service's real limit.`,
        details,
        context.retryAfterMs,
      )
    }
    default:
      if (status >= 500) {
        return new ServerError(
          `The critical CSS service at ${where} failed on ${context.request}${about} (${status} ${code}): ${serverMessage}.`,
          details,
          context.retryAfterMs,
        )
      }
      return new UnexpectedStatusError(
        `The critical CSS service answered ${context.request}${about} with an unexpected ${status} ${code}: ${serverMessage}.`,
        details,
      )
  }
}

/** An answer whose body breaks the contract; the violation is quoted as service text, since it holds the service's values. */
export function contractError(describe: string, status: number, violation: ContractViolation, token: string): InvalidResponseError {
  return new InvalidResponseError(
    `The critical CSS service answered ${describe} with a body that does not follow the API contract: ${quoteServiceText(violation.message, token)}.`,
    { status, code: 'invalid_response' },
  )
}

/** What was found at the base URL instead of the API. */
export type WrongAddress =
  | { code: 'ECONNREFUSED' | 'ENOTFOUND' }
  /** `what` the answer's body was, in words: `an HTML page`, `no body`, … */
  | { code: 'not_the_api'; request: string; status: number; what: string }

/** The error of a base URL that leads nowhere or elsewhere; `shownBaseUrl` is without credentials. */
export function wrongAddressError(shownBaseUrl: string, found: WrongAddress): WrongAddressError {
  const check = "Check that `baseUrl` is the service's address."
  switch (found.code) {
    case 'ECONNREFUSED':
      return new WrongAddressError(`Nothing answers at ${shownBaseUrl}: the connection was refused (ECONNREFUSED).`, {
        status: null,
        code: found.code,
        hint: "Check that `baseUrl` is the service's address and that the service is running.",
      })
    case 'ENOTFOUND':
      return new WrongAddressError(`The host name ${new URL(shownBaseUrl).hostname} does not resolve (ENOTFOUND).`, { status: null, code: found.code, hint: check })
    case 'not_the_api':
      return new WrongAddressError(`${shownBaseUrl} is not a Critical CSS Generation API: ${found.request} answered ${found.status} with ${found.what}.`, {
        status: found.status,
        code: found.code,
        hint: check,
      })
  }
}

export function formatSeconds(ms: number): string {
  const seconds = ms / 1000
  return `${seconds >= 10 ? Math.round(seconds) : Math.round(seconds * 10) / 10} s`
}
