/**
 * Why pages were left unchanged, said once per cause: pages that fail for the same reason (a
 * used-up quota answers every page alike) are one warning with a count and the page list,
 * and the summary table shows each page's short outcome. The JSON report keeps each page's
 * full message; this module only decides what the log says.
 */
import {
  InvalidResponseError,
  JobFailedError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnexpectedStatusError,
} from '../client/errors.ts'
import { MissingStylesheetsError } from './base-check.ts'
import { describeError } from './errors.ts'
import { ENV, type OptionWords } from './options.ts'
import { formatMs } from './report.ts'

/** Pages named in one line; the summary table names every page with its outcome. */
const MAX_PAGES_NAMED = 10

/** A page's answer from the deployed site that means the page is not there (yet). */
const PAGE_GONE = /\bHTTP (404|410)\b/

/** What a run knows that changes what a failure means. */
export interface FailureContext {
  /** Remote mode: the service renders the site where it is deployed, not this build's output. */
  remote: boolean
  siteUrl: URL | null
  /** Time allowed for each page (the `timeout` option). */
  timeoutMs: number
  /** How the messages name the options the user can change. */
  words: OptionWords
}

/** The page a failure is about, as the client's messages name it and as the log names it. */
export interface FailedPage {
  /** The absolute URL the service was asked to render. */
  url: string
  /** What messages call the page: its path on the site. */
  name: string
}

/** One reason pages were left unchanged. */
export interface Cause {
  /** Pages with equal keys failed for the same reason and share one warning. */
  key: string
  /** The table's outcome, after `failed: ` ("quota used up"). */
  short: string
  /** The reason as a warning gives it for `count` pages, without naming them (the line lists them). */
  say(count: number): string
}

const pronoun = (count: number): string => (count === 1 ? 'it' : 'them')
const thePages = (count: number): string => (count === 1 ? 'the page' : 'the pages')

/**
 * The service's own words in a message the client built around them (`… failed (code): <words>`,
 * `Gave up on …: <words>`), or null when the message has another shape.
 */
function after(message: string, marker: string): string | null {
  const at = message.indexOf(marker)
  return at === -1 ? null : message.slice(at + marker.length)
}

/** A message without the page's address: the line lists the pages, and their URLs are the service's, not the user's. */
function withoutPage(message: string, page: FailedPage): string {
  return message.replaceAll(` for ${page.url}`, '').replaceAll(page.url, page.name)
}

/** The table's words for the contract's job failure codes. */
const JOB_FAILURES: Record<string, string> = {
  fetch_failed: 'page could not be loaded',
  render_failed: 'render failed',
  blocked_url: "refused by the service's network policy",
  timeout: "the service's job timed out",
  internal: 'fault of the service',
}

function jobFailure(error: JobFailedError, page: FailedPage, context: FailureContext): Cause {
  const { code } = error
  const reason = withoutPage(error.reason, page)
  const gone = code === 'fetch_failed' ? PAGE_GONE.exec(reason) : null
  if (gone && context.remote) {
    const status = gone[1]!
    // The page is new, or renamed, in this build: the deployed site does not have it yet.
    const url = new URL(page.url)
    const site = context.siteUrl !== null && context.siteUrl.origin === url.origin ? context.siteUrl.href : url.origin
    return {
      key: `gone:${status}:${site}`,
      short: `${status} on the deployed site`,
      say: (count) =>
        `the deployed site at ${site} answered ${status} for ${pronoun(count)}: remote mode renders the site where it is deployed (${context.words.name('siteUrl')}, ${ENV.siteUrl}), not this build's output. Deploy ${thePages(count)} first, or use embedded mode.`,
    }
  }
  return { key: `job:${code}:${reason}`, short: JOB_FAILURES[code] ?? `job failed (${code})`, say: () => `the service's job failed (${code}): ${reason}` }
}

/** The short outcome of a failure the client names by its class. */
function shortOf(error: unknown): string {
  if (error instanceof NetworkError) return `no answer from the service (${error.code})`
  if (error instanceof RateLimitedError) return 'rate-limited (429)'
  if (error instanceof ServerError) return `service error (${error.status})`
  if (error instanceof NotFoundError) return 'job lost (404)'
  if (error instanceof InvalidResponseError) return 'answer outside the API contract'
  if (error instanceof UnexpectedStatusError) return `unexpected answer (${error.status})`
  return 'error'
}

/** Why `page` failed: an error the run caught, or the run's own reason as text. */
export function causeOf(failure: unknown, page: FailedPage, context: FailureContext): Cause {
  if (typeof failure === 'string') return { key: `text:${failure}`, short: failure, say: () => failure }
  if (failure instanceof PaymentRequiredError) {
    // The same answer for every page: the message names no page.
    const short = failure.code === 'plan_limit_reached' ? 'quota used up' : failure.code === 'subscription_expired' ? 'subscription expired' : `402 ${failure.code}`
    return { key: `402:${failure.message}`, short, say: () => failure.message }
  }
  if (failure instanceof JobFailedError) return jobFailure(failure, page, context)
  if (failure instanceof MissingStylesheetsError) {
    // A wrong base fails every page alike: one line for the base that fixes them, else one per set of missing sheets.
    const key = failure.bases.length > 0 ? failure.bases.join(' ') : failure.paths.join(' ')
    return { key: `missing-sheets:${key}`, short: 'stylesheets not in the build (404)', say: () => failure.message }
  }
  if (failure instanceof TimeoutError) {
    const reason = after(failure.message, ': ') ?? withoutPage(failure.message, page)
    return { key: `timeout:${reason}`, short: 'timed out', say: () => `no critical CSS within the ${context.words.name('timeout')} of ${formatMs(context.timeoutMs)} per page: ${reason}` }
  }
  const message = withoutPage(describeError(failure), page)
  return { key: `error:${message}`, short: shortOf(failure), say: () => message }
}

/** Pages that failed for one reason, in page order. */
export interface FailureGroup {
  cause: Cause
  pages: string[]
}

/** The failures grouped by cause, in the order each cause first failed a page. */
export function groupFailures(failures: Iterable<{ name: string; cause: Cause }>): FailureGroup[] {
  const groups = new Map<string, FailureGroup>()
  for (const { name, cause } of failures) {
    const group = groups.get(cause.key)
    if (group) group.pages.push(name)
    else groups.set(cause.key, { cause, pages: [name] })
  }
  return [...groups.values()]
}

/** `/, /about/, …` — at most a few names, and how many more. */
export function listPages(pages: readonly string[]): string {
  const named = pages.slice(0, MAX_PAGES_NAMED).join(', ')
  return pages.length > MAX_PAGES_NAMED ? `${named} and ${pages.length - MAX_PAGES_NAMED} more` : named
}

/** A sentence ends once, whatever the service's text ended with. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`
}

/** `(/a, /b, /c): why.`: what follows the count of a group's pages in a line. */
export function pagesAndCause({ cause, pages }: FailureGroup): string {
  return `(${listPages(pages)}): ${sentence(cause.say(pages.length))}`
}
