/**
 * What createClient takes and what it gives back: the client's public surface, apart from
 * the error classes. Kept apart from the code so that the contract of the library reads in
 * one place.
 */
import type { Dispatcher } from 'undici'
import type { Job, JobData, JobStatus, Selection, ThirdPartyPolicy, Usage, Viewport } from '../contract/api-contract.ts'
import type { CriticalCssError } from './errors.ts'
import type { Now, Sleep } from './retry.ts'
import type { PaceLimit } from './rate-window.ts'
import type { CheckInterval } from './check-planner.ts'

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
  /** Per-exchange limit on waiting for the headers, and for the whole body, in ms. Default 30 000. */
  requestTimeoutMs?: number
  /**
   * Longest single wait, in ms, even without a deadline. A service that asks to be retried
   * later than this (`Retry-After`) fails the call at once with a TimeoutError, instead of
   * the build sleeping for hours; a pending job's hint is shortened to it. Default 300 000 (5 min).
   */
  maxWaitMs?: number
  /** Called on every retry, e.g. to log "rate limited, waiting 12 s". */
  onEvent?: (event: ClientEvent) => void
  /**
   * Until the service has answered once in the API's words, take a refused connection, a
   * host name that does not resolve, or an answer that is not the API's (an HTML page, a
   * 404 without the API's error body, JSON of another kind) as a wrong `baseUrl`: fail at
   * once with a WrongAddressError instead of retrying. After that first answer the same
   * faults are a service that went away, retried as usual. Default false: retried from the
   * start, as the contract asks, for a service that may still be starting.
   */
  failFastOnWrongAddress?: boolean
  /**
   * How often pending jobs are checked while nothing tells when they will be done. A
   * service's Retry-After wins, then how long the jobs the client saw took. Default: 2 s,
   * growing ×1.5 up to 10 s; no wait is longer than `maxMs`, or shorter than a quarter of
   * `firstMs` unless the service asks. A service on this machine can be asked far more often.
   */
  checkInterval?: CheckInterval
  /**
   * How long this service's jobs took before, in ms from creation to done, as an earlier
   * client's `jobTimes` gave them: the first checks are timed by them from the start, not by
   * `checkInterval`. At most the last 100 count.
   */
  jobTimes?: readonly number[]
}

export interface RequestOptions {
  signal?: AbortSignal
  /** Absolute time (ms, on the client's clock) after which the call fails with a TimeoutError. */
  deadline?: number
}

export interface GenerateOptions extends RequestOptions {
  viewports?: Viewport[]
  /** What the render does with other hosts than the page's own (`third_party`); a service that does not know it ignores it. Default: the service's (`cut`). */
  thirdParty?: ThirdPartyPolicy
  /**
   * What the render keeps or drops beyond what the first screen uses, and other states of
   * `<html>` it reads too (`keep`, `drop`, `states`, `font_faces`, `keyframes`); only what
   * differs from the default is sent, and a service that does not know them ignores them.
   */
  selection?: Selection
  /** Same key + token within 24 h returns the first job. Default: a fresh key per call, reused by its retries. */
  idempotencyKey?: string
  /**
   * Called once, when the generate request is sent: after the plan's pace let it go (and
   * after the usage read of the first generate), so a page's time can be measured from it
   * rather than from when it began to wait.
   */
  onSent?: () => void
}

export interface WaitOptions extends RequestOptions {}

/** The filter of `jobs()`; both fields are checked against the contract before sending. */
export interface JobsQuery {
  limit?: number
  status?: JobStatus
}

/** What generate answers: a pending job (202), or the finished job data at once (200). */
export type GenerateResult = Job | JobData

export interface CriticalCssClient {
  /** The service's base URL, without credentials. */
  readonly baseUrl: string
  /** Starts a job for `url`. Reads `usage()` once before the first generate, to learn the pace, unless it is known already. */
  generate(url: string, options?: GenerateOptions): Promise<GenerateResult>
  /** The job's current data (its CSS when done). */
  jobData(id: string, options?: RequestOptions): Promise<JobData>
  /** This token's jobs, newest first, without CSS. */
  jobs(query?: JobsQuery, options?: RequestOptions): Promise<Job[]>
  /** Plan, rate limit, quota and stats of this token. A read also sets the pace. */
  usage(options?: RequestOptions): Promise<Usage>
  /**
   * The pace the client keeps: the `rateLimit` option's, else the one `usage()` states, read
   * once (the read the first generate would make). Null while it is not known: a service
   * without the usage endpoint, whose answers' `RateLimit-*` headers will tell it.
   */
  pace(options?: RequestOptions): Promise<PaceLimit | null>
  /** Resolves to the finished job data; rejects with JobFailedError, TimeoutError at `deadline`, or the abort reason. */
  waitForCss(jobOrId: GenerateResult | string, options?: WaitOptions): Promise<JobData>
  /**
   * Something beside the service's answers says the job has ended (a service running in this
   * process, whose jobs the caller sees end): its wait checks it now instead of at its next
   * planned check. Nothing is skipped: the check still asks the service.
   */
  checkNow(id: string): void
  /** The usage read most recently, if any. */
  readonly lastUsage: Usage | null
  /** How long the service's jobs took, as far as this client has seen (the last 100, oldest first): to pass to the next client's `jobTimes`. */
  readonly jobTimes: readonly number[]
  /** Closes the client's own connections (not a dispatcher that was passed in). */
  close(): Promise<void>
}

/** True when generate answered with the finished data at once. */
export function isJobData(result: GenerateResult): result is JobData {
  return 'css' in result
}
