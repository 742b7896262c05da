/**
 * The one path every request takes: a slot from the pacer, one exchange, the slot given
 * back with what the answer taught it, and the answer turned into a value or an error;
 * all of it inside the one retry loop, so that each retry queues for its slot like any
 * other request.
 */
import type { Dispatcher } from 'undici'
import { ContractViolation, parseErrorBody, type ErrorBody, type Usage } from '../contract/api-contract.ts'
import {
  InvalidResponseError,
  NetworkError,
  TimeoutError,
  contractError,
  errorFromResponse,
  formatSeconds,
  quoteServiceText,
  wrongAddressError,
  type CriticalCssError,
} from './errors.ts'
import { parseRetryAfter, withRetries, type Now, type Sleep } from './retry.ts'
import { readRateLimitHeaders } from './rate-window.ts'
import type { Pacer, Priority, Ticket } from './scheduler.ts'
import { joinSignal } from './scope.ts'
import { exchange, reachedService, type Answer } from './transport.ts'
import type { ClientEvent } from './types.ts'

export interface Clock {
  now: Now
  sleep: Sleep
  /** Source of jitter in [0, 1). */
  random: () => number
}

export interface Call<T> {
  method: 'GET' | 'POST'
  /** Path and query: `/api/critical-css/jobs?limit=5`. */
  path: string
  body?: unknown
  headers?: Record<string, string>
  expected: readonly number[]
  parse: (answer: Answer) => T
  priority: Priority
  /** The page a generate is for, so its errors can name it. */
  pageUrl?: string | undefined
  /** True when a generate sends viewports of its own: a 400 may be about them. */
  viewportsSent?: boolean | undefined
  jobId?: string | undefined
  /** A slot already granted, for the first attempt (a status check that queued for it). */
  ticket?: Ticket | undefined
  signal?: AbortSignal | undefined
  deadline?: number | undefined
  /** False for usage: its body sets the pace. */
  teachesPace?: boolean
  /** Called once, as the first attempt is sent (after its wait for a slot). */
  onSent?: (() => void) | undefined
}

/** What the client knows of its usage, so a 402 can say when the quota resets. */
export interface PaymentExplainer {
  readonly last: Usage | null
  /** Called before a 402 becomes an error; may read usage first. */
  beforePaymentRequired(scope: { signal: AbortSignal | undefined; deadline: number | undefined }): Promise<void>
}

export interface RequestDeps {
  /** The checked base URL; may hold credentials, so messages use `shownBaseUrl`. */
  baseUrl: string
  shownBaseUrl: string
  token: string
  dispatcher: Dispatcher
  pacer: Pacer
  clock: Clock
  maxRetries: number
  requestTimeoutMs: number
  /** Longest single wait: a Retry-After past it fails the call, a hint is shortened to it. */
  maxWaitMs: number
  /** Aborted by close(): every request of the client ends with it. */
  closed: AbortSignal
  onEvent: ((event: ClientEvent) => void) | undefined
  usage: PaymentExplainer
  /** Null unless `failFastOnWrongAddress`: then whether the service has answered as the API yet. */
  firstContact: FirstContact | null
}

/**
 * Whether an answer in the contract's words (a parsed body, or the contract's error body)
 * has come yet. Until then a refused connection, an unknown host or an answer that is not
 * the API's says the base URL is wrong, and is not retried; after it, the same faults are a
 * service that went away, and retried.
 */
export interface FirstContact {
  answered: boolean
}

/** Faults that mean no service is at the address at all: a service that is merely restarting or overloaded is reached, or answers 5xx. */
const WRONG_ADDRESS_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND'])

/** An answer's parsed value, and the pending-job hint it carried (its `Retry-After`, in ms). */
export interface Answered<T> {
  value: T
  retryAfterMs: number | null
}

export type Send = <T>(spec: Call<T>) => Promise<Answered<T>>

export function createSend(deps: RequestDeps): Send {
  return (spec) => sendWithRetries(deps, spec)
}

interface Attempt {
  slot: Ticket
  signal: AbortSignal
  describe: string
}

async function sendWithRetries<T>(deps: RequestDeps, spec: Call<T>): Promise<Answered<T>> {
  const describe = `${spec.method} ${spec.path.split('?')[0]}`
  const signal = joinSignal(deps.closed, spec.signal)
  let ticket = spec.ticket
  // Retries are not news: the caller hears of the first attempt only.
  let onSent = spec.onSent
  const once: Call<T> = {
    ...spec,
    onSent: () => {
      const call = onSent
      onSent = undefined
      call?.()
    },
  }
  return withRetries(
    async () => {
      const slot = ticket ?? (await deps.pacer.acquire(spec.priority, { signal, deadline: spec.deadline, describe }))
      ticket = undefined
      return attempt(deps, once, { slot, signal, describe })
    },
    {
      ...deps.clock,
      maxRetries: deps.maxRetries,
      maxWaitMs: deps.maxWaitMs,
      deadline: spec.deadline,
      signal,
      describe,
      onRetry: (info) => deps.onEvent?.({ type: 'retry', request: describe, ...info }),
    },
  )
}

async function attempt<T>(deps: RequestDeps, spec: Call<T>, at: Attempt): Promise<Answered<T>> {
  const { now } = deps.clock
  if (spec.deadline !== undefined && now() >= spec.deadline) {
    // A slot handed over by a check whose deadline has passed in the meantime.
    at.slot.release({ counted: false })
    throw new TimeoutError(`Gave up on ${at.describe}: the deadline passed before it could be sent`, { status: null, code: 'timeout' })
  }
  try {
    spec.onSent?.()
  } catch {
    // The caller's callback; it must not cost the slot taken for this request.
  }
  const answer = await exchangeOnce(deps, spec, at).catch((error: unknown) => {
    throw deps.firstContact?.answered === false && error instanceof NetworkError && WRONG_ADDRESS_CODES.has(error.code)
      ? wrongAddressError(deps.shownBaseUrl, { code: error.code as 'ECONNREFUSED' | 'ENOTFOUND' })
      : error
  })
  const askedMs = parseRetryAfter(answer.headers['retry-after'], now())
  const retryAfterMs = askedMs === null ? null : Math.min(askedMs, deps.maxWaitMs)
  at.slot.release({
    counted: answer.status !== 401 && answer.status !== 429,
    success: answer.status >= 200 && answer.status < 300,
    teaches: spec.teachesPace !== false,
    rateLimit: readRateLimitHeaders(answer.headers),
    refused: answer.status === 429 ? { retryAfterMs } : undefined,
  })
  if ((answer.status === 429 || answer.status === 503) && retryAfterMs !== null) deps.pacer.blockUntil(now() + retryAfterMs)
  if (!spec.expected.includes(answer.status)) {
    if (askedMs !== null && askedMs > deps.maxWaitMs && (answer.status === 429 || answer.status >= 500)) {
      throw new TimeoutError(
        `Gave up on ${at.describe}: the service answered ${answer.status} and asks to come back in ${formatSeconds(askedMs)}, longer than the client waits at once (\`maxWaitMs\`, ${formatSeconds(deps.maxWaitMs)}). Raise \`maxWaitMs\` to wait that long.`,
        { status: answer.status, code: 'timeout' },
      )
    }
    const body = answer.notJson ? null : parseErrorBody(answer.json)
    // A 429 or a 5xx may come from a gateway in front of the service: retried, whatever its body.
    if (body === null && answer.status !== 429 && answer.status < 500) notTheApi(deps, at.describe, answer, describeBody(answer))
    if (body !== null && deps.firstContact) deps.firstContact.answered = true
    throw await answerError(deps, spec, answer, body, at.describe, retryAfterMs)
  }
  const value = readValue(deps, spec, answer, at.describe)
  if (deps.firstContact) deps.firstContact.answered = true
  return { value, retryAfterMs }
}

/** Throws a WrongAddressError when this answer, not in the contract's words, is the first the service gave. */
function notTheApi(deps: RequestDeps, describe: string, answer: Answer, what: string): void {
  if (deps.firstContact?.answered !== false) return
  throw wrongAddressError(deps.shownBaseUrl, { code: 'not_the_api', request: describe, status: answer.status, what })
}

/** What an answer's body was, for a message: the reason it is not the API's. */
function describeBody(answer: Answer): string {
  const type = answer.headers['content-type']
  if (answer.notJson) return /html/i.test(String(type ?? '')) ? 'an HTML page' : 'a body that is not JSON'
  if (answer.json === undefined) return 'no body'
  return "JSON that is not the API's"
}

/** Sends once; on a failure without an answer, gives the slot back as the service may have seen it. */
async function exchangeOnce(deps: RequestDeps, spec: Call<unknown>, at: Attempt): Promise<Answer> {
  try {
    return await exchange(
      deps.dispatcher,
      deps.shownBaseUrl,
      {
        method: spec.method,
        url: deps.baseUrl + spec.path,
        headers: {
          authorization: `Bearer ${deps.token}`,
          accept: 'application/json',
          'user-agent': 'unplugin-critical-css',
          ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...spec.headers,
        },
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: at.signal,
        deadline: spec.deadline,
        describe: at.describe,
        timeoutMs: deps.requestTimeoutMs,
      },
      deps.clock,
    )
  } catch (error) {
    at.slot.release({ counted: reachedService(error), abandoned: abandonedInFlight(error) })
    throw error
  }
}

/** Given up in flight: the service may still count the request after we stopped waiting. */
function abandonedInFlight(error: unknown): boolean {
  if (!(error instanceof NetworkError)) return true
  return error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT'
}

async function answerError(
  deps: RequestDeps,
  spec: Call<unknown>,
  answer: Answer,
  body: ErrorBody | null,
  describe: string,
  retryAfterMs: number | null,
): Promise<CriticalCssError> {
  if (answer.status === 402) await deps.usage.beforePaymentRequired({ signal: spec.signal, deadline: spec.deadline })
  const queryStart = spec.path.indexOf('?')
  return errorFromResponse(answer.status, body, {
    request: describe,
    baseUrl: deps.baseUrl,
    token: deps.token,
    pageUrl: spec.pageUrl,
    viewportsSent: spec.viewportsSent,
    query: queryStart === -1 ? undefined : spec.path.slice(queryStart),
    jobId: spec.jobId,
    retryAfterMs,
    usage: deps.usage.last,
  })
}

function readValue<T>(deps: RequestDeps, spec: Call<T>, answer: Answer, describe: string): T {
  if (answer.notJson || answer.json === undefined) {
    notTheApi(deps, describe, answer, describeBody(answer))
    throw new InvalidResponseError(`The critical CSS service answered ${describe} with a body that is not JSON (status ${answer.status}).`, {
      status: answer.status,
      code: 'invalid_response',
    })
  }
  try {
    return spec.parse(answer)
  } catch (error) {
    if (!(error instanceof ContractViolation)) throw error
    notTheApi(deps, describe, answer, `JSON that does not follow the API contract (${quoteServiceText(error.message, deps.token)})`)
    throw contractError(describe, answer.status, error, deps.token)
  }
}
