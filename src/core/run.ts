/**
 * One build's work, the same for every bundler: pick the pages, answer what the cache
 * can, send the rest through one client (plan-paced, a deadline per page), inline the CSS
 * and report. With no service configured, the client talks to the embedded one, started
 * only when some page is not in the cache. Returns the new HTML of the pages that changed; the adapter puts it back in
 * the bundle. Nothing is put back when the run throws.
 */
import { createHash } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createClient, isJobData, paceFromOption, paceFromUsage, type CriticalCssClient } from '../client/client.ts'
import { RATE_WINDOW_MS, PLAN_REQUESTS_PER_MINUTE } from '../contract/api-contract.ts'
import type { PaceLimit } from '../client/scheduler.ts'
import { BadRequestError, CriticalCssError, NotFoundError, PaymentRequiredError, UnauthorizedError, describeBaseUrl, formatSeconds } from '../client/errors.ts'
import { inlineCriticalCss } from '../html/inline.ts'
import { stylesheetHrefs } from '../html/scan.ts'
import { createFileFinder, type BuildOutput, type FileFinder } from './build-server.ts'
import { cacheDirectory, cacheKey, createResultCache, type ResultCache } from './cache.ts'
import type { EmbeddedService } from './embedded.ts'
import { ConfigurationError, StrictModeError } from './errors.ts'
import { configuredService, type ResolvedOptions, type ResolvedPage } from './options.ts'
import { basePath, isHtmlFile, planPages, type Page } from './pages.ts'
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
  /** The whole build output, served to the embedded service's browser when no service is configured. */
  output?: BuildOutput
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
  /** What reports and warnings call the page: its URL, or in embedded mode its path (the port changes every build). */
  shown: string
}

/** Embedded mode plans pages on this origin; they move to the build server's once it listens. */
const EMBEDDED_ORIGIN = 'http://127.0.0.1'
const EMBEDDED_SERVICE_NAME = 'embedded service (local Chromium)'
/** Pages in flight in embedded mode: enough to keep every worker busy, few enough that a page's deadline runs while it is rendered, not while it queues. */
const EMBEDDED_PAGES_PER_WORKER = 2
const EMBEDDED_MAX_WORKERS = 4
/** The embedded service is on loopback: a job is checked every few hundred ms, not every few seconds. */
const EMBEDDED_CHECK_INTERVAL = { firstMs: 150, factor: 1.5, maxMs: 500 }

/**
 * In embedded mode a configured page is a page of this build, wherever its URL points: one
 * below the site URL keeps its place relative to it, any other keeps its path.
 */
function onEmbeddedSite(page: ResolvedPage, siteUrl: URL | null, localSite: URL): ResolvedPage {
  if (!URL.canParse(page.url)) return page
  const url = new URL(page.url)
  if (siteUrl !== null && url.href.startsWith(siteUrl.href)) return { ...page, url: new URL(url.href.slice(siteUrl.href.length), localSite).href }
  return { ...page, url: `${EMBEDDED_ORIGIN}${url.pathname}${url.search}` }
}

function sha256(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('base64url')
}

/**
 * The hash of a stylesheet an embedded render reads: its content when the build has it, its
 * URL otherwise. Pages share their stylesheets, so each is read and hashed once per build.
 */
function stylesheetHasher(find: FileFinder): (url: URL) => Promise<string> {
  const hashes = new Map<string, Promise<string>>()
  return (url) => {
    let hash = hashes.get(url.href)
    if (hash === undefined) {
      hash = url.origin === EMBEDDED_ORIGIN ? find(url.pathname).then((found) => (found ? sha256(found.body) : `url:${url.href}`)) : Promise.resolve(`url:${url.href}`)
      hashes.set(url.href, hash)
    }
    return hash
  }
}

/** Hashes of what an embedded render of the page reads: its HTML and each stylesheet it links. */
async function contentHashes(page: PageWork, stylesheetHash: (url: URL) => Promise<string>): Promise<string[]> {
  const urls = stylesheetHrefs(page.html!).flatMap((href) => (URL.canParse(href, page.url) ? [new URL(href, page.url)] : []))
  return [sha256(page.html!), ...(await Promise.all(urls.map(stylesheetHash)))]
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
  const service = configuredService(options)
  const output = input.output
  const localSite = new URL(basePath(input.base) ?? '/', EMBEDDED_ORIGIN)
  if (service === null && output === undefined) throw new TypeError('runCriticalCss: embedded mode needs the build output')
  const planned =
    service === null
      ? planPages(options.pages?.map((page) => onEmbeddedSite(page, options.siteUrl, localSite)) ?? null, [...input.html.keys()].filter(isHtmlFile), {
          // Where the build server puts the pages, whatever the deployed site's path.
          siteUrl: localSite,
          base: input.base,
        })
      : planPages(options.pages, [...input.html.keys()].filter(isHtmlFile), { siteUrl: options.siteUrl, base: input.base })
  const pages: PageWork[] = planned.map((page) => {
    const url = new URL(page.url)
    return { ...page, html: decode(input.html.get(page.file)!), shown: service === null ? `${url.pathname}${url.search}` : page.url }
  })
  const updated = new Map<string, string>()
  if (pages.length === 0) {
    return { updated, report: { service: null, startedAt, ms: performance.now() - started, pages: [] } }
  }

  const serviceName = service === null ? EMBEDDED_SERVICE_NAME : describeBaseUrl(service.baseUrl)
  const cacheDir = options.cache ? cacheDirectory(options.cache.dir, input.root) : null
  const cache: ResultCache | null = options.cache ? createResultCache({ dir: cacheDir!, ttlMs: options.cache.ttlMs }) : null
  const stylesheetHash = output ? stylesheetHasher(createFileFinder(output, input.base)) : null
  const keyOf = async (page: PageWork): Promise<string> =>
    service === null
      ? cacheKey({ service: serviceName, url: page.file, viewports: options.viewports, contents: await contentHashes(page, stylesheetHash!) })
      : cacheKey({ service: serviceName, url: page.url, viewports: options.viewports })
  let cacheWriteFailed = false

  const reports = new Map<Page, PageReport>()
  const finish = (page: PageWork, css: string, source: PageReport['source'], ms: number): void => {
    const result = inlineCriticalCss(page.html!, css, { preload: options.preload, ...(options.nonce ? { nonce: options.nonce } : {}) })
    if (result.changed) updated.set(page.file, result.html)
    const stillBlocking = options.preload === 'none' ? 0 : result.stillBlocking.length
    reports.set(page, {
      url: page.shown,
      file: page.file,
      source,
      cssBytes: Buffer.byteLength(css),
      ms,
      outcome: result.changed ? 'inlined' : 'unchanged',
      message: result.changed ? null : css.trim() === '' ? 'the service found no above-the-fold CSS' : 'the page already has this critical CSS',
      stillBlocking,
    })
  }
  const fail = (page: PageWork, message: string, source: PageReport['source'], ms: number): void => {
    reports.set(page, { url: page.shown, file: page.file, source, cssBytes: 0, ms, outcome: 'failed', message, stillBlocking: 0 })
    logger.warn(`critical CSS for ${page.shown} (${page.file}) failed, page left unchanged: ${message}`)
  }

  const misses: { page: PageWork; key: string | null }[] = []
  await Promise.all(
    pages.map(async (page) => {
      const begun = performance.now()
      if (page.html === null) return fail(page, 'the HTML file is not valid UTF-8', null, 0)
      const key = cache ? await keyOf(page) : null
      const hit = key !== null ? await cache!.get(key) : null
      if (hit) finish(page, hit.css, 'cache', performance.now() - begun)
      else misses.push({ page, key })
    }),
  )

  let configurationError: CriticalCssError | null = null
  let embedded: EmbeddedService | null = null
  const workers = Math.max(1, Math.min(EMBEDDED_MAX_WORKERS, availableParallelism()))
  if (misses.length > 0) {
    try {
      if (service === null) {
        const { startEmbedded } = await import('./embedded.ts')
        embedded = await startEmbedded({ output: output!, base: input.base, jobTimeoutMs: options.timeoutMs, workers })
        // Same path and query, on the port the build server got.
        for (const { page } of misses) {
          const url = new URL(page.url)
          url.host = embedded.siteUrl.host
          page.url = url.href
        }
        logger.info(`critical CSS: no service configured, rendering ${misses.length} page(s) in a local Chromium (embedded service, ${workers} at a time)`)
      }
      const { baseUrl, token } = service === null ? { baseUrl: embedded!.baseUrl, token: embedded!.token } : { baseUrl: service.baseUrl, token: service.token.reveal() }
      const stop = new AbortController()
      const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal
      const stopWith = (error: CriticalCssError): void => {
        configurationError ??= error
        stop.abort(error)
      }
      const client = createClient({
        baseUrl,
        token,
        ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
        ...(embedded ? { checkInterval: EMBEDDED_CHECK_INTERVAL } : {}),
        onEvent: (event) => logger.info(`critical CSS: ${event.request} answered ${event.error.status ?? event.error.code}; retry ${event.attempt} in ${formatSeconds(event.waitMs)}`),
      })
      const progress = createProgress(misses.length, logger)
      try {
        let limit = misses.length
        let paceError: unknown = null
        let accountError: PaymentRequiredError | null = null
        try {
          limit = pagesInFlight(await readPace(client, options, signal), options, misses.length)
          if (embedded !== null && options.concurrency === null) limit = Math.min(limit, EMBEDDED_PAGES_PER_WORKER * workers)
        } catch (error) {
          if (isConfigurationError(error, 'generate')) stopWith(error)
          else paceError = error
        }
        const acquire = createLimiter(limit)
        await Promise.all(
          misses.map(async ({ page, key }) => {
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
              if (cache && key !== null && !cacheWriteFailed) {
                await cache.set(key, css).catch((error: unknown) => {
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
    } finally {
      // The browser and both servers stop with the build, whether it succeeded or not.
      await embedded?.close()
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
