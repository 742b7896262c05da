/**
 * The API's four endpoints over a store, the limits and the queue: one function from a
 * request (method, path, query, headers, body text) to an answer (status, headers, JSON).
 * The order of checks: path, method, token, rate (401 and 429 are not counted), then the
 * endpoint's own. A store that is busy (its database locked by another process) gets
 * 503 + Retry-After: the request was fine, the moment was not.
 */
import { randomBytes } from 'node:crypto'
import {
  API_PATHS,
  ContractViolation,
  IDEMPOTENCY_KEY_PATTERN,
  JOBS_LIMIT,
  JOB_ID_PATTERN,
  JOB_STATUSES,
  PLAN_MONTHLY_GENERATIONS,
  PLAN_REQUESTS_PER_MINUTE,
  DEFAULT_THIRD_PARTY,
  DEFAULT_VIEWPORTS,
  errorBodyToWire,
  jobDataToWire,
  jobToWire,
  parseGenerateRequest,
  usageToWire,
  type JobStatus,
} from '../contract/api-contract.ts'
import { bearerToken, hashToken, sameHash } from './auth.ts'
import { quotaPeriod, quotaResetsAt, type RateWindows } from './limits.ts'
import type { NetworkPolicy } from './network.ts'
import type { RenderQueue } from './shared-queue.ts'
import { StoreUnavailableError, type Store, type StoredJob, type TokenRecord } from './store/types.ts'

export interface ApiRequest {
  method: string
  /** Path without the query. */
  path: string
  query: URLSearchParams
  headers: Record<string, string | string[] | undefined>
  body: string
}

export interface ApiAnswer {
  status: number
  headers: Record<string, string>
  body: unknown
}

export interface RouteContext {
  store: Store
  windows: RateWindows
  queue: RenderQueue
  now: () => number
  policy: NetworkPolicy
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** A lock held elsewhere is usually a short write (a `token create` in another shell): worth asking again soon. */
const STORE_BUSY_RETRY_AFTER_S = 2
const JOB_DATA_PATH = /^\/api\/critical-css\/job\/([^/]*)\/data$/

function error(status: number, code: string, message: string, headers: Record<string, string> = {}): ApiAnswer {
  return { status, headers, body: errorBodyToWire({ code, message }) }
}

function header(request: ApiRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Which endpoint a path is, and the methods it allows. */
function routeOf(path: string): { name: 'generate' | 'data' | 'jobs' | 'usage'; allow: string; jobId?: string } | null {
  if (path === API_PATHS.generate) return { name: 'generate', allow: 'POST' }
  if (path === API_PATHS.jobs) return { name: 'jobs', allow: 'GET' }
  if (path === API_PATHS.usage) return { name: 'usage', allow: 'GET' }
  const data = JOB_DATA_PATH.exec(path)
  if (data) {
    let jobId: string
    try {
      jobId = decodeURIComponent(data[1]!)
    } catch {
      jobId = ''
    }
    return { name: 'data', allow: 'GET', jobId }
  }
  return null
}

function limitOf(token: TokenRecord): number | null {
  return PLAN_REQUESTS_PER_MINUTE[token.plan]
}

function quotaOf(token: TokenRecord): number | null {
  return token.quota ?? PLAN_MONTHLY_GENERATIONS[token.plan]
}

function isExpired(token: TokenRecord, now: number): boolean {
  return token.expiresAt !== null && Date.parse(token.expiresAt) <= now
}

function newJobId(): string {
  return `j_${randomBytes(12).toString('base64url')}`
}

/** Looks the token up by its hash and confirms it in constant time. */
async function authenticate(request: ApiRequest, store: Store): Promise<TokenRecord | null> {
  const token = bearerToken(header(request, 'authorization'))
  if (token === null) return null
  const hash = hashToken(token)
  const record = await store.tokenByHash(hash)
  return record && sameHash(record.hash, hash) ? record : null
}

export async function handleApiRequest(request: ApiRequest, context: RouteContext): Promise<ApiAnswer> {
  try {
    return await answerRequest(request, context)
  } catch (caught) {
    if (!(caught instanceof StoreUnavailableError)) throw caught
    // The store's message names its file: the client gets only what it can act on.
    return error(503, 'unavailable', `The service cannot store this request now; retry after ${STORE_BUSY_RETRY_AFTER_S} s.`, {
      'retry-after': String(STORE_BUSY_RETRY_AFTER_S),
    })
  }
}

async function answerRequest(request: ApiRequest, context: RouteContext): Promise<ApiAnswer> {
  const route = routeOf(request.path)
  if (route === null) return error(404, 'not_found', `No endpoint at ${request.path.slice(0, 200)}.`)
  if (request.method !== route.allow) {
    return error(405, 'method_not_allowed', `Use ${route.allow} for ${request.path.slice(0, 200)}.`, { allow: route.allow })
  }
  const token = await authenticate(request, context.store)
  if (token === null) return error(401, 'unauthorized', 'Missing, malformed or unknown API token.')

  const now = context.now()
  const decision = await context.windows.take(token.id, limitOf(token), now)
  if (!decision.allowed) {
    return error(429, 'rate_limited', `Rate limit of ${limitOf(token)} requests per minute reached; retry after ${decision.retryAfterSeconds} s.`, {
      'retry-after': String(decision.retryAfterSeconds),
    })
  }
  const rateHeaders: Record<string, string> =
    decision.remaining === null
      ? {}
      : { 'ratelimit-limit': String(limitOf(token)), 'ratelimit-remaining': String(decision.remaining), 'ratelimit-reset': String(decision.resetSeconds) }
  const answer = await answerRoute(route, request, token, context, now)
  return { ...answer, headers: { ...rateHeaders, ...answer.headers } }
}

async function answerRoute(
  route: NonNullable<ReturnType<typeof routeOf>>,
  request: ApiRequest,
  token: TokenRecord,
  context: RouteContext,
  now: number,
): Promise<ApiAnswer> {
  switch (route.name) {
    case 'generate':
      return generate(request, token, context, now)
    case 'data': {
      const job = JOB_ID_PATTERN.test(route.jobId ?? '') ? await context.store.job(route.jobId!) : null
      if (!job || job.tokenId !== token.id) return error(404, 'not_found', 'No such job.')
      return { status: 200, headers: pendingHint([job], context), body: jobDataToWire(job) }
    }
    case 'jobs':
      return listJobs(request, token, context)
    case 'usage':
      return usage(token, context, now)
  }
}

async function generate(request: ApiRequest, token: TokenRecord, context: RouteContext, now: number): Promise<ApiAnswer> {
  const { store, queue } = context
  let input: unknown
  try {
    input = JSON.parse(request.body)
  } catch {
    return error(400, 'invalid_request', 'The body is not JSON.')
  }
  let parsed: ReturnType<typeof parseGenerateRequest>
  try {
    parsed = parseGenerateRequest(input)
  } catch (caught) {
    if (caught instanceof ContractViolation) return error(400, 'invalid_request', caught.message)
    throw caught
  }
  const refused = context.policy.refusedUrl(new URL(parsed.url))
  if (refused) return error(400, 'invalid_request', `The url is not fetched: ${refused}.`)
  const key = header(request, 'idempotency-key')
  if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return error(400, 'invalid_request', 'Idempotency-Key must be 1–255 printable ASCII characters.')
  }
  const stamp = new Date(now).toISOString()
  const thirdParty = parsed.thirdParty ?? DEFAULT_THIRD_PARTY
  const idempotency = key === undefined ? undefined : { key, notBefore: new Date(now - IDEMPOTENCY_TTL_MS).toISOString() }
  if (idempotency) {
    const known = await store.idempotentJob(token.id, idempotency.key, idempotency.notBefore)
    const job = known === null ? null : await store.job(known)
    if (job) return jobAnswer(job, context)
  }
  if (isExpired(token, now)) return error(402, 'subscription_expired', `The subscription expired on ${token.expiresAt}.`)
  const period = quotaPeriod(now)
  const quota = quotaOf(token)
  const quotaUsed = (): ApiAnswer => error(402, 'plan_limit_reached', `The plan's ${quota} generation${quota === 1 ? '' : 's'} for ${period} are used up; the quota resets at ${quotaResetsAt(now)}.`)
  if (quota !== null && (await store.generations(token.id, period)) >= quota) return quotaUsed()
  const full = await queue.refusal(token.id)
  if (full) return error(503, 'unavailable', `${full} Try again later.`, { 'retry-after': String(queue.retryAfterSeconds) })
  const job: StoredJob = {
    id: newJobId(),
    tokenId: token.id,
    url: parsed.url,
    status: 'queued',
    cssAvailable: false,
    createdAt: stamp,
    updatedAt: stamp,
    error: null,
    css: null,
    cssBytes: null,
    viewports: parsed.viewports ?? DEFAULT_VIEWPORTS.map((viewport) => ({ ...viewport })),
    durationMs: null,
    thirdParty,
    network: null,
    firstScreen: null,
    engine: null,
    ...(parsed.selection ? { selection: parsed.selection } : {}),
  }
  // One atomic step: a busy store refuses all of it, so a 503 leaves no job nobody runs and no
  // count nobody got; and another request with the key or the last of the quota, on this
  // process or another, cannot slip in between the checks above and the write.
  const accepted = await store.acceptJob({ job, period, quota, ...(idempotency ? { idempotency } : {}) })
  if (accepted.kind === 'existing') return jobAnswer(accepted.job, context)
  if (accepted.kind === 'over_quota') return quotaUsed()
  await queue.enqueue(job)
  return jobAnswer(job, context)
}

/** 202 with Location for a pending job; 200 with the data for a finished one (a repeated key). */
function jobAnswer(job: StoredJob, context: RouteContext): ApiAnswer {
  if (job.status === 'done' || job.status === 'failed') return { status: 200, headers: {}, body: jobDataToWire(job) }
  return { status: 202, headers: { location: `/api/critical-css/job/${job.id}/data`, ...pendingHint([job], context) }, body: jobToWire(job) }
}

/** The contract's pending-job hint: `Retry-After` for the earliest of the pending jobs an answer holds, when the queue can tell. */
function pendingHint(jobs: readonly StoredJob[], context: RouteContext): Record<string, string> {
  const pending = jobs.filter((job) => job.status === 'queued' || job.status === 'processing')
  const hints = pending.map((job) => context.queue.checkAgainIn(job.id))
  // One the queue cannot tell, or that is due soon, makes the earliest soon: no hint.
  if (hints.length === 0 || hints.some((seconds) => seconds === null)) return {}
  return { 'retry-after': String(Math.min(...(hints as number[]))) }
}

async function listJobs(request: ApiRequest, token: TokenRecord, context: RouteContext): Promise<ApiAnswer> {
  const limitText = request.query.get('limit')
  const limit = limitText === null ? JOBS_LIMIT.default : /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN
  if (!(limit >= JOBS_LIMIT.min && limit <= JOBS_LIMIT.max)) {
    return error(400, 'invalid_request', `limit must be a whole number from ${JOBS_LIMIT.min} to ${JOBS_LIMIT.max}.`)
  }
  const status = request.query.get('status')
  if (status !== null && !(JOB_STATUSES as readonly string[]).includes(status)) {
    return error(400, 'invalid_request', `status must be one of ${JOB_STATUSES.join(', ')}.`)
  }
  const jobs = await context.store.listJobs(token.id, { limit, status: (status ?? undefined) as JobStatus | undefined })
  return { status: 200, headers: pendingHint(jobs, context), body: { jobs: jobs.map(jobToWire) } }
}

async function usage(token: TokenRecord, context: RouteContext, now: number): Promise<ApiAnswer> {
  const limit = limitOf(token)
  const period = quotaPeriod(now)
  const [window, generationsUsed, stats] = await Promise.all([
    context.windows.peek(token.id, limit, now),
    context.store.generations(token.id, period),
    context.store.stats(token.id),
  ])
  return {
    status: 200,
    headers: {},
    body: usageToWire({
      plan: token.plan,
      subscription: { status: isExpired(token, now) ? 'expired' : 'active', expiresAt: token.expiresAt },
      rateLimit: { requestsPerMinute: limit, remaining: window.remaining, resetSeconds: window.resetSeconds },
      quota: { period: 'month', generationsLimit: quotaOf(token), generationsUsed, resetsAt: quotaResetsAt(now) },
      stats,
    }),
  }
}
