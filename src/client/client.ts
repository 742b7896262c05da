/**
 * The client of the Critical CSS Generation API. Every request goes through one undici
 * keep-alive Agent, takes a slot from the pacer, is retried by the one retry loop and has
 * its answer parsed by the contract's schemas.
 */
import { randomUUID } from 'node:crypto'
import type { Dispatcher } from 'undici'
import {
  API_PATHS,
  ContractViolation,
  IDEMPOTENCY_KEY_PATTERN,
  JOBS_LIMIT,
  JOB_ID_PATTERN,
  JOB_STATUSES,
  PLAN_REQUESTS_PER_MINUTE,
  RATE_WINDOW_MS,
  TOKEN_PATTERN,
  checkPageUrl,
  checkViewports,
  parseErrorBody,
  parseJob,
  parseJobData,
  parseJobsList,
  parseJobsListEntries,
  parseUsage,
  type Job,
  type JobData,
  type JobStatus,
  type Plan,
  type Usage,
  type Viewport,
} from '../contract/api-contract.ts'
import { CriticalCssError, InvalidResponseError, NetworkError, NotFoundError, TimeoutError, describeBaseUrl, errorFromResponse, quoteServiceText } from './errors.ts'
import { parseRetryAfter, realSleep, withRetries, type Now, type Sleep } from './retry.ts'
import { PRIORITY, Pacer, readRateLimitHeaders, type PaceLimit, type Priority, type Ticket } from './scheduler.ts'
import { createAgent, exchange, reachedService, type Answer } from './transport.ts'
import { CHECK_INTERVAL, JobWatcher, jobFailedError, type Answered, type CheckInterval } from './watcher.ts'

/** Override of the plan's pace, for self-hosted services with limits of their own. */
export interface RateLimitOption {
  /** Requests the service accepts per window; `null` for no limit. */
  requestsPerMinute: number | null
  /** Length of the service's sliding window in ms. Default 60 000 (the contract's minute). */
  windowMs?: number
}

export interface ClientEvent {
  type: 'retry'
  /** What was attempted: `POST /api/critical-css/generate`. */
  request: string
  attempt: number
  waitMs: number
  error: CriticalCssError
}

export interface CreateClientOptions {
  /** Base URL of the service, e.g. `https://critical.example.com` (paths start with `/api/critical-css/`). */
  baseUrl: string
  /** API token (printable ASCII, 16–256 characters). Never logged or put in a message. */
  token: string
  /** Pace to keep instead of the one the plan implies (`usage()` and `RateLimit-*` headers). */
  rateLimit?: RateLimitOption
  /** undici dispatcher to send through (a proxy agent, a mock); default: a keep-alive Agent of this client. */
  dispatcher?: Dispatcher
  /** Waits `ms`; rejects when `signal` aborts. Injectable so tests never wait for real. */
  sleep?: Sleep
  /** Current time in ms since the epoch; deadlines are on this clock. */
  now?: Now
  /** Source of jitter in [0, 1). */
  random?: () => number
  /** How often a fault (5xx, network) is retried before giving up. Default 8. */
  maxRetries?: number
  /** Per-exchange limit on waiting for headers and body, in ms. Default 30 000. */
  requestTimeoutMs?: number
  /** Called on every retry, e.g. to log "rate limited, waiting 12 s". */
  onEvent?: (event: ClientEvent) => void
  /**
   * How often pending jobs are checked (a service's Retry-After still wins). Default: 1 s,
   * growing ×1.5 up to 10 s. A service on this machine can be asked far more often.
   */
  checkInterval?: CheckInterval
}

export interface RequestOptions {
  signal?: AbortSignal
  /** Absolute time (ms, on the client's clock) after which the call fails with a TimeoutError. */
  deadline?: number
}

export interface GenerateOptions extends RequestOptions {
  viewports?: Viewport[]
  /** Same key + token within 24 h returns the first job. Default: a fresh key per call, reused by its retries. */
  idempotencyKey?: string
}

export interface WaitOptions extends RequestOptions {}

/** What generate answers: a pending job (202), or the finished job data at once (200). */
export type GenerateResult = Job | JobData

export interface CriticalCssClient {
  /** The service's base URL, without credentials. */
  readonly baseUrl: string
  /** Starts a job for `url`. Reads `usage()` once before the first generate, to learn the pace, unless the caller read it already. */
  generate(url: string, options?: GenerateOptions): Promise<GenerateResult>
  /** The job's current data (its CSS when done). */
  jobData(id: string, options?: RequestOptions): Promise<JobData>
  /** This token's jobs, newest first, without CSS. */
  jobs(query?: { limit?: number; status?: JobStatus }, options?: RequestOptions): Promise<Job[]>
  /** Plan, rate limit, quota and stats of this token. */
  usage(options?: RequestOptions): Promise<Usage>
  /** Resolves to the finished job data; rejects with JobFailedError, TimeoutError at `deadline`, or the abort reason. */
  waitForCss(jobOrId: GenerateResult | string, options?: WaitOptions): Promise<JobData>
  /** The usage read most recently, if any. */
  readonly lastUsage: Usage | null
  /** Closes the client's own connections (not a dispatcher that was passed in). */
  close(): Promise<void>
}

/** True when generate answered with the finished data at once. */
export function isJobData(result: GenerateResult): result is JobData {
  return 'css' in result
}

interface Call<T> {
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  headers?: Record<string, string>
  expected: readonly number[]
  parse: (answer: Answer) => T
  priority: Priority
  pageUrl?: string | undefined
  jobId?: string | undefined
  ticket?: Ticket | undefined
  signal?: AbortSignal | undefined
  deadline?: number | undefined
  /** False for usage: its body sets the pace. */
  teachesPace?: boolean
}

const DEFAULT_MAX_RETRIES = 8
const MAX_REMEMBERED_JOBS = 10_000
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000

export function createClient(options: CreateClientOptions): CriticalCssClient {
  const baseUrl = checkBaseUrl(options.baseUrl)
  const token = checkToken(options.token)
  const now = options.now ?? Date.now
  const sleep = options.sleep ?? realSleep
  const random = options.random ?? Math.random
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const ownAgent = options.dispatcher ? null : createAgent()
  const dispatcher: Dispatcher = options.dispatcher ?? (ownAgent as Dispatcher)
  const shownBaseUrl = describeBaseUrl(baseUrl)
  const pinned = options.rateLimit ? paceFromOption(options.rateLimit) : undefined
  const pacer = new Pacer({ now, sleep }, pinned, requestTimeoutMs)
  /** Aborted by close(): every call and wait of the client ends with it. */
  const closed = new AbortController()
  /** When each job was accepted, so its first check comes a second after that, not after waitForCss. */
  const acceptedAt = new Map<string, number>()
  const rememberAccepted = (id: string): void => {
    acceptedAt.set(id, now())
    // Jobs nobody waits for must not pile up here for the life of the client.
    if (acceptedAt.size > MAX_REMEMBERED_JOBS) acceptedAt.delete(acceptedAt.keys().next().value as string)
  }
  let lastUsage: Usage | null = null
  let usageBeforeGenerate: Promise<void> | null = null
  let explainedPaymentRequired = false
  let closing: Promise<void> | null = null

  /**
   * The caller's signal joined with the client's own, so close() ends the call too. Always
   * a new signal: the listeners each call adds must not pile up on a long-lived one.
   */
  function scopedSignal(signal: AbortSignal | undefined): AbortSignal {
    return AbortSignal.any(signal ? [signal, closed.signal] : [closed.signal])
  }

  async function call<T>(spec: Call<T>): Promise<Answered<T>> {
    const describe = `${spec.method} ${spec.path.split('?')[0]}`
    const signal = scopedSignal(spec.signal)
    let ticket = spec.ticket
    return withRetries(
      async () => {
        const slot = ticket ?? (await pacer.acquire(spec.priority, { signal, deadline: spec.deadline, describe }))
        ticket = undefined
        if (spec.deadline !== undefined && now() >= spec.deadline) {
          // A slot handed over by a check whose deadline has passed in the meantime.
          slot.release({ counted: false })
          throw new TimeoutError(`Gave up on ${describe}: the deadline passed before it could be sent`, { status: null, code: 'timeout' })
        }
        let answer: Answer
        try {
          answer = await exchange(
            dispatcher,
            shownBaseUrl,
            {
              method: spec.method,
              url: baseUrl + spec.path,
              headers: {
                authorization: `Bearer ${token}`,
                accept: 'application/json',
                'user-agent': 'unplugin-critical-css',
                ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
                ...spec.headers,
              },
              body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
              signal,
              deadline: spec.deadline,
              describe,
              timeoutMs: requestTimeoutMs,
            },
            { now, sleep },
          )
        } catch (error) {
          slot.release({ counted: reachedService(error), abandoned: abandonedInFlight(error) })
          throw error
        }
        const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], now())
        slot.release({
          counted: answer.status !== 401 && answer.status !== 429,
          success: answer.status >= 200 && answer.status < 300,
          teaches: spec.teachesPace !== false,
          rateLimit: readRateLimitHeaders(answer.headers),
          refused: answer.status === 429 ? { retryAfterMs } : undefined,
        })
        if ((answer.status === 429 || answer.status === 503) && retryAfterMs !== null) pacer.blockUntil(now() + retryAfterMs)
        if (!spec.expected.includes(answer.status)) {
          if (answer.status === 402 && !explainedPaymentRequired) await refreshUsageToExplain(spec)
          throw errorFromResponse(answer.status, answer.notJson ? null : parseErrorBody(answer.json), {
            request: describe,
            baseUrl,
            token,
            pageUrl: spec.pageUrl,
            jobId: spec.jobId,
            retryAfterMs,
            usage: lastUsage,
          })
        }
        if (answer.notJson || answer.json === undefined) {
          throw new InvalidResponseError(`The critical CSS service answered ${describe} with a body that is not JSON (status ${answer.status}).`, {
            status: answer.status,
            code: 'invalid_response',
          })
        }
        try {
          return { value: spec.parse(answer), retryAfterMs }
        } catch (error) {
          if (!(error instanceof ContractViolation)) throw error
          throw contractError(describe, answer.status, error, token)
        }
      },
      {
        sleep,
        now,
        random,
        maxRetries,
        deadline: spec.deadline,
        signal,
        describe,
        onRetry: (info) => options.onEvent?.({ type: 'retry', request: describe, ...info }),
      },
    )
  }

  /** A 402's message says when the quota resets or when the subscription ended: usage knows. */
  async function refreshUsageToExplain(spec: Call<unknown>): Promise<void> {
    explainedPaymentRequired = true
    try {
      await readUsage({ signal: spec.signal, deadline: spec.deadline })
    } catch {
      // The 402 is what matters; explain it with what we have.
    }
  }

  async function readUsage(requestOptions: RequestOptions): Promise<Usage> {
    const { value } = await call({
      method: 'GET',
      path: API_PATHS.usage,
      expected: [200],
      parse: (answer) => parseUsage(answer.json),
      priority: PRIORITY.urgent,
      // The body states the pace; the pacer must not guess it from the headers first.
      teachesPace: false,
      signal: requestOptions.signal,
      deadline: requestOptions.deadline,
    })
    lastUsage = value
    const pace = paceFromUsage(value)
    if (pace) pacer.setLimit(pace)
    return value
  }

  /**
   * Reads usage once before the first generate. Concurrent generates share the one read,
   * so it runs on no caller's signal or deadline; each caller waits for it within its own.
   */
  function learnPace(requestOptions: RequestOptions): Promise<void> {
    if (!usageBeforeGenerate) {
      const read = readUsage({}).then(
        () => {},
        (error: unknown) => {
          // A service without the usage endpoint is still usable: answers tell the pace.
          if (error instanceof NotFoundError) return
          usageBeforeGenerate = null
          throw error
        },
      )
      // Whoever waits for it sees its failure; a caller that gave up first must not leave it unhandled.
      read.catch(() => {})
      usageBeforeGenerate = read
    }
    return settleWithin(usageBeforeGenerate, { ...requestOptions, now, sleep, describe: `GET ${API_PATHS.usage}` })
  }

  /**
   * A public call's signal and checked deadline; fails at once for a client that was
   * closed, a signal already aborted or a deadline already passed.
   */
  function start(requestOptions: RequestOptions, describe: string): { signal: AbortSignal | undefined; deadline: number | undefined } {
    const scope = { signal: requestOptions.signal, deadline: checkDeadline(requestOptions.deadline) }
    if (closed.signal.aborted) throw closed.signal.reason
    scope.signal?.throwIfAborted()
    if (scope.deadline !== undefined && now() >= scope.deadline) {
      throw new TimeoutError(`Gave up on ${describe}: the deadline had passed before it started`, { status: null, code: 'timeout' })
    }
    return scope
  }

  async function jobDataCall(id: string, extra: { ticket?: Ticket | undefined; priority: Priority; signal?: AbortSignal | undefined; deadline?: number | undefined }): Promise<Answered<JobData>> {
    return call({
      method: 'GET',
      path: API_PATHS.jobData(encodeURIComponent(id)),
      jobId: id,
      expected: [200],
      parse: (answer) => parseJobData(answer.json),
      ...extra,
    })
  }

  const checkInterval = options.checkInterval ?? CHECK_INTERVAL
  const watcher = new JobWatcher({
    now,
    sleep,
    token,
    checkInterval,
    acquireCheck: (signal) => pacer.acquire(PRIORITY.background, { signal, describe: 'a status check' }),
    fetchData: (id, extra) => jobDataCall(id, { ...extra, priority: extra.urgent ? PRIORITY.urgent : PRIORITY.background }),
    listJobs: ({ limit, ...scope }) =>
      call({
        method: 'GET',
        path: `${API_PATHS.jobs}?limit=${limit}`,
        expected: [200],
        parse: (answer) => {
          const { jobs, invalid } = parseJobsListEntries(answer.json)
          return { jobs, invalid: invalid.map(({ id, violation }) => ({ id, error: contractError(`GET ${API_PATHS.jobs}`, answer.status, violation, token) })) }
        },
        priority: PRIORITY.background,
        ...scope,
      }),
  })

  return {
    baseUrl: shownBaseUrl,

    get lastUsage() {
      return lastUsage
    },

    async generate(url, generateOptions = {}) {
      const urlProblem = checkPageUrl(url)
      if (urlProblem) throw new TypeError(`generate(): ${urlProblem}.`)
      const viewportProblem = checkViewports(generateOptions.viewports)
      if (viewportProblem) throw new TypeError(`generate(): ${viewportProblem}.`)
      const key = generateOptions.idempotencyKey ?? `ucc_${randomUUID()}`
      if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new TypeError('generate(): idempotencyKey must be 1–255 printable ASCII characters.')
      const requestOptions = start(generateOptions, `POST ${API_PATHS.generate}`)
      await learnPace(requestOptions)
      const body = generateOptions.viewports ? { url, viewports: generateOptions.viewports } : { url }
      // Every attempt of this call carries the same key, so a retry after a lost answer
      // finds the job the first attempt created instead of paying for a second one.
      const { value } = await call<GenerateResult>({
        method: 'POST',
        path: API_PATHS.generate,
        body,
        headers: { 'idempotency-key': key },
        expected: [200, 202],
        parse: (answer) => (answer.status === 200 ? parseJobData(answer.json) : parseJob(answer.json)),
        priority: PRIORITY.normal,
        pageUrl: url,
        ...requestOptions,
      })
      rememberAccepted(value.id)
      return value
    },

    async jobData(id, requestOptions = {}) {
      checkJobId(id, 'jobData')
      const scope = start(requestOptions, 'GET /api/critical-css/job/…/data')
      return (await jobDataCall(id, { priority: PRIORITY.normal, ...scope })).value
    },

    async jobs(query = {}, requestOptions = {}) {
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
      const search = params.size > 0 ? `?${params}` : ''
      const scope = start(requestOptions, `GET ${API_PATHS.jobs}`)
      const { value } = await call({
        method: 'GET',
        path: API_PATHS.jobs + search,
        expected: [200],
        parse: (answer) => parseJobsList(answer.json),
        priority: PRIORITY.normal,
        ...scope,
      })
      return value
    },

    async usage(requestOptions = {}) {
      const value = await readUsage(start(requestOptions, `GET ${API_PATHS.usage}`))
      // The caller's read already taught the pace: the first generate need not read it again.
      usageBeforeGenerate ??= Promise.resolve()
      return value
    },

    async waitForCss(jobOrId, waitOptions = {}) {
      if (typeof jobOrId === 'string') checkJobId(jobOrId, 'waitForCss')
      const scope = start(waitOptions, 'waiting for the critical CSS')
      if (typeof jobOrId === 'string') {
        return watcher.watch({ id: jobOrId, url: '', status: 'unknown' }, { firstCheckAt: now(), ...scope })
      }
      if (jobOrId.status === 'failed') throw jobFailedError(jobOrId, token)
      if (isJobData(jobOrId) && jobOrId.status === 'done' && typeof jobOrId.css === 'string') return jobOrId
      const accepted = acceptedAt.get(jobOrId.id) ?? now()
      acceptedAt.delete(jobOrId.id)
      const firstCheckAt = jobOrId.status === 'done' ? now() : accepted + checkInterval.firstMs
      return watcher.watch(jobOrId, { firstCheckAt, ...scope })
    },

    close() {
      closing ??= (async () => {
        const reason = new CriticalCssError('The critical CSS client was closed.', { status: null, code: 'client_closed' })
        closed.abort(reason)
        watcher.stopAll(reason)
        pacer.closeAll(reason)
        await ownAgent?.close()
      })()
      return closing
    },
  }
}

/** Deadlines are absolute ms on the client's clock; Infinity means none. */
function checkDeadline(deadline: unknown): number | undefined {
  if (deadline === undefined || deadline === Number.POSITIVE_INFINITY) return undefined
  if (typeof deadline !== 'number' || Number.isNaN(deadline)) throw new TypeError('deadline must be a time in ms (as Date.now() gives), or undefined.')
  return deadline
}

/** Given up in flight: the service may still count the request after we stopped waiting. */
function abandonedInFlight(error: unknown): boolean {
  if (!(error instanceof NetworkError)) return true
  return error.code === 'UND_ERR_HEADERS_TIMEOUT' || error.code === 'UND_ERR_BODY_TIMEOUT'
}

function contractError(describe: string, status: number, violation: ContractViolation, token: string): InvalidResponseError {
  return new InvalidResponseError(
    `The critical CSS service answered ${describe} with a body that does not follow the API contract: ${quoteServiceText(violation.message, token)}.`,
    { status, code: 'invalid_response' },
  )
}

/** Waits for `promise` within the caller's own signal and deadline. */
async function settleWithin<T>(
  promise: Promise<T>,
  scope: RequestOptions & { now: Now; sleep: Sleep; describe: string },
): Promise<T> {
  if (!scope.signal && scope.deadline === undefined) return promise
  scope.signal?.throwIfAborted()
  const limits: Promise<never>[] = []
  if (scope.signal) {
    // A signal of its own: many calls sharing the caller's one must not pile listeners on it.
    const signal = AbortSignal.any([scope.signal])
    limits.push(new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })))
  }
  const timer = new AbortController()
  if (scope.deadline !== undefined) {
    limits.push(
      scope.sleep(Math.max(0, scope.deadline - scope.now()), timer.signal).then(() => {
        throw new TimeoutError(`Gave up on ${scope.describe}: the deadline passed before it answered`, { status: null, code: 'timeout' })
      }),
    )
  }
  try {
    return await Promise.race([promise, ...limits])
  } finally {
    timer.abort()
  }
}

/** The pace a `rateLimit` option sets; throws a TypeError for a bad one. */
export function paceFromOption(option: RateLimitOption): PaceLimit {
  const { requestsPerMinute, windowMs = RATE_WINDOW_MS } = option
  if (requestsPerMinute !== null && (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1)) {
    throw new TypeError('rateLimit.requestsPerMinute must be a whole number ≥ 1, or null for no limit.')
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new TypeError('rateLimit.windowMs must be a positive number of milliseconds.')
  return { requests: requestsPerMinute, windowMs }
}

/** The pace usage implies: its own numbers, else the plan table; null for an unknown plan without numbers. */
export function paceFromUsage(usage: Usage): PaceLimit | null {
  const stated = usage.rateLimit.requestsPerMinute
  if (stated !== null) return { requests: stated, windowMs: RATE_WINDOW_MS }
  if (usage.plan in PLAN_REQUESTS_PER_MINUTE) return { requests: PLAN_REQUESTS_PER_MINUTE[usage.plan as Plan], windowMs: RATE_WINDOW_MS }
  return null
}

function checkBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl.length === 0) {
    throw new TypeError('No critical CSS service address: set CRITICAL_CSS_BASE_URL (or the `baseUrl` option).')
  }
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new TypeError('CRITICAL_CSS_BASE_URL (the `baseUrl` option) is not an absolute URL.')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('CRITICAL_CSS_BASE_URL (the `baseUrl` option) must be an http:// or https:// URL.')
  }
  url.search = ''
  url.hash = ''
  return url.toString().replace(/\/+$/, '')
}

function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token.length === 0) {
    throw new TypeError('No API token: set CRITICAL_CSS_API_TOKEN (or the `token` option).')
  }
  if (!TOKEN_PATTERN.test(token)) {
    // Say what is wrong with it without repeating any of it.
    throw new TypeError(`The API token (CRITICAL_CSS_API_TOKEN or the \`token\` option) must be 16–256 printable ASCII characters without spaces; the one given has ${token.length} characters.`)
  }
  return token
}

function checkJobId(id: unknown, method: string): void {
  if (typeof id !== 'string' || !JOB_ID_PATTERN.test(id)) throw new TypeError(`${method}(): a job id is 1–64 characters of A–Z, a–z, 0–9, _ and -.`)
}
