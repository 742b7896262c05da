/**
 * The client of the Critical CSS Generation API, assembled from its parts: every request
 * goes through one undici keep-alive Agent, takes a slot from the pacer, is retried by the
 * one retry loop and has its answer parsed by the contract's schemas (request.ts); usage
 * sets the pace and explains 402s (usage.ts); jobs are read and waited for in jobs.ts.
 */
import { randomUUID } from 'node:crypto'
import type { Dispatcher } from 'undici'
import { API_PATHS, generateRequestToWire, parseJob, parseJobData } from '../contract/api-contract.ts'
import { CHECK_INTERVAL } from './check-planner.ts'
import { checkBaseUrl, checkDuration, checkGenerate, checkJobId, checkJobTimes, checkToken, jobsSearch } from './checks.ts'
import { CriticalCssError, describeBaseUrl } from './errors.ts'
import { JOB_TIMES_KEPT } from './job-times.ts'
import { Jobs } from './jobs.ts'
import { paceFromOption } from './pace.ts'
import { createSend, type Clock, type Send } from './request.ts'
import { realSleep } from './retry.ts'
import { PRIORITY, Pacer } from './scheduler.ts'
import { startCall, type CallScope } from './scope.ts'
import { createAgent } from './transport.ts'
import type { CreateClientOptions, CriticalCssClient, GenerateOptions, GenerateResult, RequestOptions } from './types.ts'
import { UsageReader } from './usage.ts'

const DEFAULT_MAX_RETRIES = 8
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
const DEFAULT_MAX_WAIT_MS = 300_000

/** The parts a client is made of; the public object only checks arguments and delegates. */
interface Parts {
  shownBaseUrl: string
  pacer: Pacer
  send: Send
  usage: UsageReader
  jobs: Jobs
  /** Aborted by close(): every call and wait of the client ends with it. */
  closed: AbortController
  /** Null when the caller passed a dispatcher: that one is theirs to close. */
  ownAgent: { close(): Promise<void> } | null
  /** The scope of a public call; throws when the call could not succeed. */
  start(options: RequestOptions, describe: string): CallScope
}

export function createClient(options: CreateClientOptions): CriticalCssClient {
  return publicClient(assemble(options))
}

function assemble(options: CreateClientOptions): Parts {
  const baseUrl = checkBaseUrl(options.baseUrl)
  const token = checkToken(options.token)
  const clock: Clock = { now: options.now ?? Date.now, sleep: options.sleep ?? realSleep, random: options.random ?? Math.random }
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const ownAgent = options.dispatcher ? null : createAgent()
  const dispatcher: Dispatcher = options.dispatcher ?? (ownAgent as Dispatcher)
  const shownBaseUrl = describeBaseUrl(baseUrl)
  const pinned = options.rateLimit ? paceFromOption(options.rateLimit) : undefined
  const pacer = new Pacer(clock, pinned, requestTimeoutMs)
  const closed = new AbortController()
  // Requests explain a 402 with usage, and usage is read by a request: the one refers to
  // the other lazily, once both exist.
  const usage: UsageReader = new UsageReader({ send: (spec) => send(spec), pacer, clock, pacePinned: pinned !== undefined })
  const send = createSend({
    baseUrl,
    shownBaseUrl,
    token,
    dispatcher,
    pacer,
    clock,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    requestTimeoutMs,
    maxWaitMs: checkDuration(options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, 'maxWaitMs'),
    closed: closed.signal,
    onEvent: options.onEvent,
    usage,
    firstContact: options.failFastOnWrongAddress ? { answered: false } : null,
  })
  const jobTimes = options.jobTimes === undefined ? [] : checkJobTimes(options.jobTimes, JOB_TIMES_KEPT)
  const jobs = new Jobs({ send, pacer, clock, token, checkInterval: options.checkInterval ?? CHECK_INTERVAL, jobTimes })
  const start = (callOptions: RequestOptions, describe: string): CallScope => startCall(closed.signal, clock.now, callOptions, describe)
  return { shownBaseUrl, pacer, send, usage, jobs, closed, ownAgent, start }
}

function publicClient(parts: Parts): CriticalCssClient {
  const { usage, jobs, start } = parts
  let closing: Promise<void> | null = null

  return {
    baseUrl: parts.shownBaseUrl,

    get lastUsage() {
      return usage.last
    },

    get jobTimes() {
      return jobs.times.all()
    },

    generate: (url, generateOptions = {}) => generate(parts, url, generateOptions),

    async jobData(id, requestOptions = {}) {
      checkJobId(id, 'jobData')
      const scope = start(requestOptions, 'GET /api/critical-css/job/…/data')
      return (await jobs.data(id, { priority: PRIORITY.normal, ...scope })).value
    },

    async jobs(query = {}, requestOptions = {}) {
      const search = jobsSearch(query)
      return jobs.list(search, start(requestOptions, `GET ${API_PATHS.jobs}`))
    },

    // Async: a call that could not start (closed client, aborted signal, passed deadline) rejects, never throws.
    async usage(requestOptions = {}) {
      return usage.read(start(requestOptions, `GET ${API_PATHS.usage}`))
    },

    async pace(requestOptions = {}) {
      return usage.pace(start(requestOptions, `GET ${API_PATHS.usage}`))
    },

    async waitForCss(jobOrId, waitOptions = {}) {
      if (typeof jobOrId === 'string') checkJobId(jobOrId, 'waitForCss')
      return jobs.waitFor(jobOrId, start(waitOptions, 'waiting for the critical CSS'))
    },

    checkNow(id) {
      jobs.checkNow(id)
    },

    close() {
      closing ??= (async () => {
        const reason = new CriticalCssError('The critical CSS client was closed.', { status: null, code: 'client_closed' })
        parts.closed.abort(reason)
        jobs.stopAll(reason)
        parts.pacer.closeAll(reason)
        await parts.ownAgent?.close()
      })()
      return closing
    },
  }
}

async function generate(parts: Parts, url: string, options: GenerateOptions): Promise<GenerateResult> {
  const key = checkGenerate(url, options, () => `ucc_${randomUUID()}`)
  const scope = parts.start(options, `POST ${API_PATHS.generate}`)
  await parts.usage.learnPace(scope)
  // Every attempt of this call carries the same key, so a retry after a lost answer
  // finds the job the first attempt created instead of paying for a second one.
  const { value, retryAfterMs } = await parts.send<GenerateResult>({
    method: 'POST',
    path: API_PATHS.generate,
    body: generateRequestToWire({ url, viewports: options.viewports, thirdParty: options.thirdParty, ...(options.selection ? { selection: options.selection } : {}) }),
    headers: { 'idempotency-key': key },
    expected: [200, 202],
    parse: (answer) => (answer.status === 200 ? parseJobData(answer.json) : parseJob(answer.json)),
    priority: PRIORITY.normal,
    pageUrl: url,
    viewportsSent: Boolean(options.viewports),
    onSent: options.onSent,
    ...scope,
  })
  parts.jobs.accepted(value.id, retryAfterMs)
  return value
}
