/**
 * One build's work, the same for every bundler: pick the pages, answer what the cache
 * can, send the rest through one client (plan-paced, a deadline per page), inline the CSS
 * and report. Returns the new HTML of the pages that changed; the adapter puts it back in
 * the bundle. Nothing is put back when the run throws.
 */
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createClient, isJobData, paceFromOption, paceFromUsage, type CriticalCssClient } from '../api/client.ts'
import { RATE_WINDOW_MS, PLAN_REQUESTS_PER_MINUTE } from '../api/contract.ts'
import type { PaceLimit } from '../api/scheduler.ts'
import { BadRequestError, CriticalCssError, NotFoundError, PaymentRequiredError, UnauthorizedError, describeBaseUrl, formatSeconds } from '../api/errors.ts'
import { inlineCriticalCss } from '../html/inline.ts'
import { cacheDirectory, cacheKey, createResultCache, type ResultCache } from './cache.ts'
import { ConfigurationError, StrictModeError } from './errors.ts'
import { requireService, type ResolvedOptions } from './options.ts'
import { isHtmlFile, planPages, type Page } from './pages.ts'
import { createProgress, formatSummary, writeJsonReport, type BuildLogger, type BuildReport, type PageReport } from './report.ts'

export interface RunInput {
  options: ResolvedOptions
  /** Emitted HTML files, relative to the output directory → their content. */
  html: ReadonlyMap<string, string | Uint8Array>
  /** The bundler's base / publicPath. */
  base: string
  /** Project root: `cache.dir` and `report` are relative to it. */
  root: string
  logger: BuildLogger
  signal?: AbortSignal
}

export interface RunResult {
  /** New content of every page that changed, by file. */
  updated: Map<string, string>
  report: BuildReport
}

/** Requests one page costs at least (generate, a status check, its CSS): sizes the default concurrency. */
const REQUESTS_PER_PAGE = 4
const UTF8 = new TextDecoder('utf-8', { fatal: true })

interface PageWork extends Page {
  html: string | null
}

/** 400, 401, a base URL that is not the API: the user must fix something, so the build stops. */
function isConfigurationError(error: unknown, during: 'generate' | 'wait'): error is CriticalCssError {
  return (
    error instanceof ConfigurationError ||
    error instanceof BadRequestError ||
    error instanceof UnauthorizedError ||
    (error instanceof NotFoundError && during === 'generate')
  )
}

/** The client refuses a page URL it cannot send (over 2,048 characters, say) with a TypeError. */
function asConfigurationError(error: unknown, page: Page): unknown {
  if (error instanceof TypeError) return new ConfigurationError(`unplugin-critical-css: page ${page.url.slice(0, 200)}: ${error.message}`)
  return error
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

function decode(content: string | Uint8Array): string | null {
  if (typeof content === 'string') return content
  try {
    return UTF8.decode(content)
  } catch {
    return null
  }
}

/** Pages in flight: what the pace serves within one page's timeout, or all of them without a limit. */
function pagesInFlight(pace: PaceLimit, options: ResolvedOptions, pages: number): number {
  if (options.concurrency !== null) return options.concurrency
  if (pace.requests === null) return Math.max(1, pages)
  return Math.max(1, Math.floor((pace.requests * options.timeoutMs) / pace.windowMs / REQUESTS_PER_PAGE))
}

/** The pace pages are sized by: the `rateLimit` option, else what usage says (the client learns it from the same read). */
async function readPace(client: CriticalCssClient, options: ResolvedOptions, signal: AbortSignal): Promise<PaceLimit> {
  if (options.rateLimit) return paceFromOption(options.rateLimit)
  try {
    const usage = await client.usage({ signal, deadline: Date.now() + options.timeoutMs })
    return paceFromUsage(usage) ?? { requests: null, windowMs: RATE_WINDOW_MS }
  } catch (error) {
    // A service without the usage endpoint still works, its answers' headers set the pace;
    // until they do, pages go in flight as if on the smallest plan (`concurrency` overrides).
    if (error instanceof NotFoundError) return { requests: PLAN_REQUESTS_PER_MINUTE.free, windowMs: RATE_WINDOW_MS }
    throw error
  }
}

/** Waits for a free place among `limit`; release it with the returned function. */
function createLimiter(limit: number): () => Promise<() => void> {
  let active = 0
  const waiting: (() => void)[] = []
  const release = (): void => {
    const next = waiting.shift()
    if (next) next()
    else active -= 1
  }
  return async () => {
    if (active < limit) active += 1
    else await new Promise<void>((resolve) => waiting.push(resolve))
    return release
  }
}

export async function runCriticalCss(input: RunInput): Promise<RunResult> {
  const { options, logger } = input
  const started = performance.now()
  const startedAt = new Date().toISOString()
  const pages: PageWork[] = planPages(
    options.pages,
    [...input.html.keys()].filter(isHtmlFile),
    { siteUrl: options.siteUrl, base: input.base },
  ).map((page) => ({ ...page, html: decode(input.html.get(page.file)!) }))
  const updated = new Map<string, string>()
  if (pages.length === 0) {
    return { updated, report: { service: null, startedAt, ms: performance.now() - started, pages: [] } }
  }

  const service = requireService(options)
  const serviceName = describeBaseUrl(service.baseUrl)
  const cacheDir = options.cache ? cacheDirectory(options.cache.dir, input.root) : null
  const cache: ResultCache | null = options.cache ? createResultCache({ dir: cacheDir!, ttlMs: options.cache.ttlMs }) : null
  const keyOf = (page: Page): string => cacheKey({ service: serviceName, url: page.url, viewports: options.viewports })
  let cacheWriteFailed = false

  const reports = new Map<Page, PageReport>()
  const finish = (page: PageWork, css: string, source: PageReport['source'], ms: number): void => {
    const result = inlineCriticalCss(page.html!, css, { preload: options.preload, ...(options.nonce ? { nonce: options.nonce } : {}) })
    if (result.changed) updated.set(page.file, result.html)
    const stillBlocking = options.preload === 'none' ? 0 : result.stillBlocking.length
    reports.set(page, {
      url: page.url,
      file: page.file,
      source,
      cssBytes: Buffer.byteLength(css),
      ms,
      outcome: result.changed ? 'inlined' : 'unchanged',
      message: result.changed ? null : css.trim() === '' ? 'the service found no above-the-fold CSS' : 'the page already has this critical CSS',
      stillBlocking,
    })
  }
  const fail = (page: Page, message: string, source: PageReport['source'], ms: number): void => {
    reports.set(page, { url: page.url, file: page.file, source, cssBytes: 0, ms, outcome: 'failed', message, stillBlocking: 0 })
    logger.warn(`critical CSS for ${page.url} (${page.file}) failed, page left unchanged: ${message}`)
  }

  const misses: PageWork[] = []
  await Promise.all(
    pages.map(async (page) => {
      const begun = performance.now()
      if (page.html === null) return fail(page, 'the HTML file is not valid UTF-8', null, 0)
      const hit = cache ? await cache.get(keyOf(page)) : null
      if (hit) finish(page, hit.css, 'cache', performance.now() - begun)
      else misses.push(page)
    }),
  )

  let configurationError: CriticalCssError | null = null
  if (misses.length > 0) {
    const stop = new AbortController()
    const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal
    const stopWith = (error: CriticalCssError): void => {
      configurationError ??= error
      stop.abort(error)
    }
    const client = createClient({
      baseUrl: service.baseUrl,
      token: service.token.reveal(),
      ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
      onEvent: (event) => logger.info(`critical CSS: ${event.request} answered ${event.error.status ?? event.error.code}; retry ${event.attempt} in ${formatSeconds(event.waitMs)}`),
    })
    const progress = createProgress(misses.length, logger)
    try {
      let limit = misses.length
      let paceError: unknown = null
      let accountError: PaymentRequiredError | null = null
      try {
        limit = pagesInFlight(await readPace(client, options, signal), options, misses.length)
      } catch (error) {
        if (isConfigurationError(error, 'generate')) stopWith(error)
        else paceError = error
      }
      const acquire = createLimiter(limit)
      await Promise.all(
        misses.map(async (page) => {
          const release = await acquire()
          const begun = performance.now()
          let during: 'generate' | 'wait' = 'generate'
          try {
            if (paceError !== null) throw paceError
            if (accountError !== null) throw accountError
            signal.throwIfAborted()
            const deadline = Date.now() + options.timeoutMs
            const answer = await client.generate(page.url, { viewports: options.viewports, deadline, signal })
            during = 'wait'
            const data = isJobData(answer) ? answer : await client.waitForCss(answer, { deadline, signal })
            const css = data.css ?? ''
            finish(page, css, 'service', performance.now() - begun)
            if (cache && !cacheWriteFailed) {
              await cache.set(keyOf(page), css).catch((error: unknown) => {
                cacheWriteFailed = true
                logger.warn(`critical CSS: could not write the cache in ${cacheDir} (${describeError(error)}); results are not kept for the next build.`)
              })
            }
          } catch (caught) {
            const error = asConfigurationError(caught, page)
            // Pages cut short by another page's configuration error: that error is the build's.
            if (configurationError !== null && (error === configurationError || signal.aborted)) return
            if (isConfigurationError(error, during)) return stopWith(error)
            // A used-up quota or an expired subscription answers every later page the same.
            if (error instanceof PaymentRequiredError) accountError ??= error
            fail(page, describeError(error), 'service', performance.now() - begun)
          } finally {
            release()
            progress.done()
          }
        }),
      )
    } finally {
      progress.stop()
      await client.close()
    }
  }
  if (configurationError !== null) throw configurationError

  const report: BuildReport = {
    service: serviceName,
    startedAt,
    ms: performance.now() - started,
    pages: pages.map((page) => reports.get(page)!),
  }
  logger.info(formatSummary(report))
  if (options.report) {
    const file = resolve(input.root, options.report)
    await writeJsonReport(file, report).catch((error: unknown) => {
      logger.warn(`critical CSS: could not write the report to ${file}: ${describeError(error)}`)
    })
  }
  const failed = report.pages.filter((page) => page.outcome === 'failed')
  if (failed.length > 0) {
    const list = failed.map((page) => `${page.url}: ${page.message}`).join('\n  ')
    if (options.strict) {
      throw new StrictModeError(
        `unplugin-critical-css: ${failed.length} of ${pages.length} pages got no critical CSS, and \`strict\` is on:\n  ${list}`,
      )
    }
    logger.warn(`critical CSS: ${failed.length} of ${pages.length} pages left unchanged (see the warnings above); set \`strict: true\` to fail the build instead.`)
  }
  return { updated, report }
}
