/**
 * One build's work, the same for every bundler and both modes: plan the pages, answer what
 * the cache can, render the rest through the mode's renderer (a deadline per page, pages in
 * flight as the renderer says), inline the CSS and report. Returns the new HTML of the
 * pages that changed; the adapter puts it back. Nothing is put back when the run throws.
 * The build session (session.ts) opens the mode and releases it.
 */
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { BadRequestError, PaymentRequiredError, UnauthorizedError } from '../client/errors.ts'
import { inlineCriticalCss } from '../html/inline.ts'
import { inlineOptionsOf } from '../html/inline-inputs.ts'
import { linksRelatively, renderBlockingStylesheets } from '../html/links.ts'
import { STRATEGIES } from '../html/strategies.ts'
import { RECENT_TEXTS } from '../html/recent.ts'
import { timed } from '../shared/timings.ts'
import { MissingStylesheetsError, notInBuild } from './base-check.ts'
import { buildFileFinder, type BuildOutput } from './build-server.ts'
import { createResultCache, writeLastBuild, type ResultCache } from './cache.ts'
import { ConfigurationError, OutputWriteError, PLUGIN_NAME, StrictModeError, describeError } from './errors.ts'
import { causeOf, groupFailures, pagesAndCause, type Cause, type FailureContext } from './failures.ts'
import { noPagesMessage, type Framework } from './frameworks.ts'
import { otherReleaseMessage, type OtherRelease } from './modes/deployed-sheets.ts'
import type { ModeRun, Rendered, Renderer } from './modes/mode.ts'
import { firstScreenLine } from './first-screen-notes.ts'
import { localNotes, skippedHostsLine } from './network-notes.ts'
import type { ResolvedOptions } from './options.ts'
import { assetUrl, isHtmlFile, relativeAsset, type Page } from './pages.ts'
import { relativeCss } from './portable-css.ts'
import { pageInlineInputs } from './page-inputs.ts'
import { buildSheetTexts, lazySheetOf } from './whole-sheets.ts'
import { counted, createProgress, formatSummary, pageName, writeJsonReport, type BuildLogger, type BuildReport, type PageReport, type PageSource } from './report.ts'

/**
 * The emitted HTML files, relative to the output directory, and the way to read each one: a
 * bundle holds them in memory; a folder reads a page from disk each time it is needed, so a
 * run holds the pages in flight, not the whole site.
 */
export interface PageFiles {
  readonly files: readonly string[]
  read(file: string): Promise<string | Uint8Array>
}

/** A bundle's pages, held in memory already. */
export function pagesInMemory(html: ReadonlyMap<string, string | Uint8Array>): PageFiles {
  return { files: [...html.keys()], read: async (file) => html.get(file)! }
}

export interface RunInput {
  pages: PageFiles
  /** The bundler's base / publicPath. */
  base: string
  /** Project root: `cache.dir` and `report` are relative to it. */
  root: string
  logger: BuildLogger
  signal?: AbortSignal
  /** The whole build output, served to the embedded service's browser when no service is configured. */
  output?: BuildOutput
  /** The framework the build belongs to, when the adapter can tell: named when the build emits no page. */
  framework?: Framework | null
  /** What to say when the output has no HTML page, instead of the bundler's message (a folder says so its own way). */
  noPagesMessage?: string | null
  /**
   * Takes each changed page's new HTML as soon as it is made (the folder command writes it
   * ahead, beside the page), instead of `RunResult.updated` holding every page until the run
   * ends. A failure stops the run with an OutputWriteError.
   */
  stage?: (file: string, html: string) => Promise<void>
}

export interface RunResult {
  /** New content of every page that changed, by file; none with `RunInput.stage`, which took them. */
  updated: Map<string, string>
  /**
   * Files the changed pages load that the build must emit, by file relative to the output
   * directory (the `loader` strategy's script). Written before the pages: a page never
   * names a file that is not there.
   */
  assets: Map<string, string>
  report: BuildReport
}

interface PageWork extends Page {
  /** What the JSON report calls the page (the mode's `shown`). */
  shown: string
  /** What log lines call the page: its path on the site (see `pageName`). */
  name: string
  /** Its cache key, when the cache is on. */
  key: string | null
}

/** Pages looked up in the cache at once: well below the texts the HTML layer remembers its readings of. */
const LOOKUPS_AT_ONCE = RECENT_TEXTS / 4

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** 400, 401, a base URL that is not the API, a browser that cannot start: the user must fix something, so the build stops. */
export function stopsTheBuild(error: unknown): error is Error {
  return error instanceof ConfigurationError || error instanceof BadRequestError || error instanceof UnauthorizedError || error instanceof OutputWriteError
}

function decode(content: string | Uint8Array): string | null {
  if (typeof content === 'string') return content
  try {
    return UTF8.decode(content)
  } catch {
    return null
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

/** Callers have thrown the options' problems already (`enabledFor`, `processDirectory`). */
/** `cacheDir`: where results are kept; null with the cache off. */
export async function runPages(options: ResolvedOptions, input: RunInput, mode: ModeRun, cacheDir: string | null): Promise<RunResult> {
  const { logger } = input
  for (const note of mode.notes) logger.warn(note)
  const started = performance.now()
  const startedAt = new Date().toISOString()
  const files = input.pages.files.filter(isHtmlFile)
  const pages: PageWork[] = mode.plan(files).map((page) => {
    const shown = mode.shown(page)
    return { ...page, shown, name: pageName(shown, options.siteUrl), key: null }
  })
  /** The page's HTML, read when it is needed (its lookup, its inlining), not held between; null when it is not UTF-8. */
  const read = async (page: PageWork): Promise<string | null> => decode(await input.pages.read(page.file))
  const updated = new Map<string, string>()
  const assets = new Map<string, string>()
  if (pages.length === 0) {
    // null: the caller knows there is nothing to say (its pages are rendered per request).
    const message = input.noPagesMessage === undefined ? noPagesMessage(input.framework ?? null) : input.noPagesMessage
    if (files.length === 0 && message !== null) logger.warn(message)
    return { updated, assets, report: { service: null, startedAt, ms: performance.now() - started, pages: [] } }
  }

  const cache: ResultCache | null = options.cache && cacheDir !== null ? createResultCache({ dir: cacheDir, ttlMs: options.cache.ttlMs }) : null
  let cacheWriteFailed = false

  const reports = new Map<Page, PageReport>()
  /** Why each failed page failed, said once per cause when every page is done. */
  const causes = new Map<PageWork, Cause>()
  // A configured service renders the deployed site (`ResolvedOptions.service`): a page it cannot find there is not deployed yet.
  const remote = options.service !== null
  const context: FailureContext = { remote, siteUrl: options.siteUrl, timeoutMs: options.timeoutMs, words: options.words }
  // Who rendered a page that missed the cache: the user's service, or the browser this run started.
  const renderedBy: PageSource = remote ? 'service' : 'embedded'
  const strategy = STRATEGIES[options.preload]
  // The build's own files, for stylesheets worth inlining whole; `none` keeps every link as the author wrote it.
  const sheets = input.output && strategy.defers ? { texts: buildSheetTexts(buildFileFinder(input.output, input.base)), lazy: lazySheetOf(input.output) } : null
  /** Inlines and reports a page's CSS; returns its new HTML, or null when it stays as it is. */
  const finish = async (page: PageWork, html: string, { css, network, firstScreen, engine }: Rendered, source: PageReport['source'], ms: number): Promise<string | null> => {
    const { asset } = strategy
    // What the page gets resolves the way its own links do: a relatively linked site works at any base and from disk.
    const relative = linksRelatively(html)
    const portable = (text: string): string => (relative ? relativeCss(text, page.url, mode.prefix) : text)
    const inputs = await pageInlineInputs(html, page.url, css, network, { sheets, hidesLinks: strategy.hidesLinks, preloadFonts: options.preloadFonts, portable })
    const result = inlineCriticalCss(html, portable(css), {
      preload: options.preload,
      ...(asset ? { loaderSrc: relative ? relativeAsset(page.file, asset.file) : assetUrl(input.base, page.file, asset.file) } : {}),
      ...(options.nonce ? { nonce: options.nonce } : {}),
      ...inlineOptionsOf(inputs),
    })
    if (result.changed && input.stage) await input.stage(page.file, result.html).catch((error: unknown) => Promise.reject(new OutputWriteError(page.file, error)))
    else if (result.changed) updated.set(page.file, result.html)
    if (asset && result.deferred.length > 0) assets.set(asset.file, asset.text)
    const stillBlocking = strategy.defers ? result.stillBlocking.length : 0
    reports.set(page, {
      url: page.shown,
      file: page.file,
      source,
      engine,
      cssBytes: Buffer.byteLength(css),
      ms,
      outcome: result.changed ? 'inlined' : 'unchanged',
      inlinedWhole: result.inlinedWhole.map((sheet) => sheet.href),
      message: result.changed ? null : css.trim() === '' ? 'the service found no above-the-fold CSS' : 'the page already has this critical CSS',
      stillBlocking,
      skippedHosts: network?.skippedHosts ?? [],
      unreadStylesheets: network?.unreadStylesheets ?? [],
      firstScreen: firstScreen ?? [],
    })
    const differs = result.changed ? firstScreenLine(firstScreen) : null
    if (differs !== null) logger.info(`critical CSS: ${page.name} ${differs}`)
    const skipped = skippedHostsLine(network)
    const unread = network?.unreadStylesheets.length ?? 0
    if (skipped !== null) logger.info(`critical CSS: ${page.name} ${skipped}${unread ? `; ${counted(unread, 'stylesheet')} it could not read ${unread === 1 ? 'stays' : 'stay'} blocking` : ''}`)
    return result.changed ? result.html : null
  }
  const leave = (page: PageWork, message: string): void => {
    reports.set(page, { url: page.shown, file: page.file, source: null, engine: null, cssBytes: 0, ms: 0, outcome: 'unchanged', message, inlinedWhole: [], stillBlocking: 0, skippedHosts: [], unreadStylesheets: [], firstScreen: [] })
  }
  /** `failure`: the error a page's render ended with, or the run's own reason as text. Said when the run ends, grouped by cause. */
  const fail = (page: PageWork, failure: unknown, source: PageReport['source'], ms: number): void => {
    const message = describeError(failure)
    reports.set(page, { url: page.shown, file: page.file, source, engine: null, cssBytes: 0, ms, outcome: 'failed', message, inlinedWhole: [], stillBlocking: 0, skippedHosts: [], unreadStylesheets: [], firstScreen: [] })
    causes.set(page, causeOf(failure, page, context))
  }
  // Remote mode: what the deployed site serves is held to this build (modes/deployed-sheets.ts).
  const otherRelease: OtherRelease[] = []
  const unchecked: { name: string; reason: string }[] = []
  const own = async (page: PageWork, html: string, css: string): Promise<string> => {
    if (!mode.checkAgainstBuild) return css
    const checked = await mode.checkAgainstBuild(page.url, html, css)
    if (checked.kind === 'other') otherRelease.push({ name: page.name, dropped: checked.dropped, replaced: checked.replaced })
    if (checked.kind === 'unchecked') unchecked.push({ name: page.name, reason: checked.reason })
    return checked.css
  }
  /** `output`: the page's new HTML, or null when it stayed as it was. */
  const keep = async (page: PageWork, html: string, rendered: Rendered, output: string | null): Promise<void> => {
    if (!cache || page.key === null || cacheWriteFailed) return
    // Kept for the page as it came and as it leaves: a run over its own output (a folder
    // processed twice) finds the CSS already there and changes nothing. A cache that
    // cannot be written never fails a page.
    try {
      // A page given its sheets whole has no critical style for a later run to find: that run
      // finds nothing to defer and leaves it, so its output is not kept (a hit would add the style).
      const after = reports.get(page)?.inlinedWhole.length ? null : output
      // Kept for the engine that made it: one the build did not expect (a browser found that did not start) keys its own.
      const key = rendered.engine === mode.engine ? page.key : await mode.cacheKey(page, html, rendered.engine)
      const keys = new Set([key, ...(after === null ? [] : [await mode.cacheKey(page, after, rendered.engine)])])
      for (const key of keys) await cache.set(key, rendered)
    } catch (error) {
      if (!cacheWriteFailed) logger.warn(`critical CSS: could not write the cache in ${cacheDir} (${describeError(error)}); results are not kept for the next build.`)
      cacheWriteFailed = true
    }
  }

  const misses: PageWork[] = []
  /** Pages rendered without some of their own stylesheets, which the build lacks: said once per set of sheets. */
  const partlyMissing: { name: string; paths: string[] }[] = []
  /** Answers a page from the cache, fails or leaves it, or puts it among the misses. */
  const lookUp = async (page: PageWork): Promise<void> => {
    const begun = performance.now()
    const html = await read(page)
    if (html === null) return fail(page, 'the HTML file is not valid UTF-8', null, 0)
    // A page that lacks every sheet of its own would render unstyled and "have no critical CSS": a wrong base, said as such.
    const missing = mode.missingSheets ? await mode.missingSheets(page, html) : null
    if (missing?.all) return fail(page, new MissingStylesheetsError(missing.paths, missing.bases, options.words), null, performance.now() - begun)
    // Some: the page renders with the rest, and the render notes the others unread, so their links stay blocking.
    if (missing) partlyMissing.push({ name: page.name, paths: missing.paths })
    page.key = cache ? await mode.cacheKey(page, html, mode.engine) : null
    const hit = page.key !== null ? await cache!.get(page.key) : null
    if (hit) return void (await finish(page, html, hit, 'cache', performance.now() - begun))
    // Nothing in the head holds up first paint (CSS inline already, or deferred by an
    // earlier run): critical CSS would only repeat what paints with the page.
    if (renderBlockingStylesheets(html).length === 0) return leave(page, 'no render-blocking stylesheet link to defer')
    misses.push(page)
  }
  // A few pages at a time: each is read several times in a row (its sheets, its key, its links), which the
  // HTML layer answers from one reading while the page is among the last it read; and the file reads overlap.
  const lookup = createLimiter(LOOKUPS_AT_ONCE)
  await timed('run: cache lookups', () =>
    Promise.all(
      pages.map(async (page) => {
        const release = await lookup()
        try {
          await lookUp(page)
        } finally {
          release()
        }
      }),
    ),
  )

  // Rendered in the pages' order, not the order their reads ended: which page a quota or a
  // deadline reaches first is the same every run.
  const order = new Map(pages.map((page, index) => [page, index]))
  misses.sort((a, b) => order.get(a)! - order.get(b)!)
  if (misses.length > 0) {
    let renderer: Renderer | null = null
    try {
      renderer = await mode.renderer(misses.length, logger, input.signal)
    } catch (error) {
      if (stopsTheBuild(error)) throw error
      input.signal?.throwIfAborted()
      // What renders could not start (the service's pace unreadable, say): every page is left as it is, with why.
      for (const page of misses) fail(page, error, renderedBy, 0)
    }
    const rendering = renderer
    if (rendering !== null) await timed('run: render', () => renderMisses(misses, rendering, { input, timeoutMs: options.timeoutMs, source: renderedBy, read, finish, fail, keep, own }))
  }
  // An interrupted run has no report to give and nothing to hand back to be written.
  input.signal?.throwIfAborted()
  // What the next build of this root looks for, to tell whether to start rendering as it bundles (cache.ts
  // `buildMayRender`): the pages it found in the cache or rendered. A page with nothing to defer is never
  // kept, and one that lacks its stylesheets fails before rendering: neither is a reason to start early.
  if (cache && cacheDir !== null && !cacheWriteFailed) {
    const rendered = new Set(misses)
    const looked = pages.filter((page) => page.key !== null && (rendered.has(page) || reports.get(page)?.source === 'cache'))
    await writeLastBuild(cacheDir, input.root, looked.map((page) => page.key!)).catch(() => {})
  }

  const report: BuildReport = { service: mode.name, startedAt, ms: performance.now() - started, pages: pages.map((page) => reports.get(page)!) }
  const byReport = new Map(pages.map((page) => [reports.get(page)!, page]))
  logger.info(
    formatSummary(report, {
      name: (entry) => byReport.get(entry)!.name,
      failure: (entry) => causes.get(byReport.get(entry)!)?.short ?? 'see the warnings',
    }),
  )
  if (options.report) {
    const file = resolve(input.root, options.report)
    await writeJsonReport(file, report).catch((error: unknown) => {
      logger.warn(`critical CSS: could not write the report to ${file}: ${describeError(error)}`)
    })
  }
  sayPartlyMissing(partlyMissing, logger)
  sayFailures(pages, causes, options, logger)
  if (otherRelease.length > 0) {
    const message = otherReleaseMessage(options.siteUrl, otherRelease, options.words)
    if (options.strict) throw new StrictModeError(`${PLUGIN_NAME}: ${options.words.name('strict')} is on, and ${message.replace(/^critical CSS: /, '')}`)
    logger.warn(message)
  }
  // Said, not warned: a site only the service reaches (behind a VPN) is a setup, not a fault of this build.
  if (unchecked.length > 0) logger.info(`critical CSS: could not compare ${counted(unchecked.length, 'page')} with the deployed site (${unchecked[0]!.reason}), so ${unchecked.length === 1 ? 'its' : 'their'} critical CSS is inlined as the service found it, which may be the deployed release's.`)
  return { updated, assets, report }
}

/** Stylesheets some pages link that the build lacks, one line per set of them: the deployed pages 404 them too. */
function sayPartlyMissing(pages: readonly { name: string; paths: string[] }[], logger: BuildLogger): void {
  const groups = groupFailures(
    pages.map(({ name, paths }) => ({
      name,
      cause: { key: paths.join(' '), short: '', say: () => `${notInBuild(paths)}; the critical CSS is made without ${paths.length === 1 ? 'it, and its link stays' : 'them, and their links stay'} blocking` },
    })),
  )
  for (const group of groups) logger.warn(`critical CSS: ${counted(group.pages.length, 'page')} ${pagesAndCause(group)}`)
}

/**
 * The failed pages, one line per cause with the pages it failed (a used-up quota is one line
 * for every page, not one per page). With `strict` the build's error says it instead, once.
 */
function sayFailures(pages: readonly PageWork[], causes: ReadonlyMap<PageWork, Cause>, { strict, words }: ResolvedOptions, logger: BuildLogger): void {
  const failed = pages.filter((page) => causes.has(page))
  if (failed.length === 0) return
  const groups = groupFailures(failed.map((page) => ({ name: page.name, cause: causes.get(page)! })))
  const share = `${failed.length} of ${counted(pages.length, 'page')}`
  if (strict) {
    const list = groups.map((group) => `${counted(group.pages.length, 'page')} ${pagesAndCause(group)}`).join('\n  ')
    throw new StrictModeError(`unplugin-critical-css: ${share} got no critical CSS, and ${words.name('strict')} is on:\n  ${list}`)
  }
  const hint = words.failInstead
  if (groups.length === 1) {
    logger.warn(`critical CSS: ${share} left unchanged ${pagesAndCause(groups[0]!)} ${hint}`)
    return
  }
  for (const group of groups) logger.warn(`critical CSS: ${counted(group.pages.length, 'page')} left unchanged ${pagesAndCause(group)}`)
  logger.warn(`critical CSS: ${share} left unchanged, for the ${groups.length} reasons above. ${hint}`)
}

interface Outcomes {
  input: RunInput
  /** Time allowed for each page. */
  timeoutMs: number
  /** What the report says rendered the pages. */
  source: PageSource
  /** The page's HTML, read again (a folder's pages are not held while they render); null when it is not UTF-8. */
  read(page: PageWork): Promise<string | null>
  finish(page: PageWork, html: string, rendered: Rendered, source: PageReport['source'], ms: number): Promise<string | null>
  fail(page: PageWork, failure: unknown, source: PageReport['source'], ms: number): void
  keep(page: PageWork, html: string, rendered: Rendered, output: string | null): Promise<void>
  /** The page's critical CSS held to this build's stylesheets (remote mode), else as it came. */
  own(page: PageWork, html: string, css: string): Promise<string>
}

/**
 * Renders the pages the cache did not answer, as many at once as the renderer says. The
 * first error that stops the build cancels the rest; a used-up quota or an expired
 * subscription answers every later page the same, without asking again.
 */
async function renderMisses(misses: PageWork[], renderer: Renderer, outcomes: Outcomes): Promise<void> {
  const { input, timeoutMs, source, read, finish, fail, keep, own } = outcomes
  const stop = new AbortController()
  const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal
  let stopError: Error | null = null
  let accountError: PaymentRequiredError | null = null
  const progress = createProgress(misses.length, input.logger, undefined, renderer.pacing)
  const acquire = createLimiter(renderer.concurrency)
  try {
    await Promise.all(
      misses.map(async (page) => {
        const release = await acquire()
        // The page's time: from its request, not from a wait for the pace; the service's own time when it says.
        let begun = performance.now()
        try {
          if (accountError !== null) throw accountError
          signal.throwIfAborted()
          const { css, network, firstScreen, engine, serviceMs } = await renderer.render(page.url, { deadline: Date.now() + timeoutMs, signal, onSent: () => void (begun = performance.now()) })
          const html = await read(page)
          if (html === null) throw new Error('the HTML file is not valid UTF-8')
          // Named as the page names them, so the notes still match from the cache in a later build.
          const rendered = { css: await own(page, html, css), network: localNotes(network, page.url), firstScreen, engine }
          const output = await finish(page, html, rendered, source, serviceMs ?? performance.now() - begun)
          await keep(page, html, rendered, output)
        } catch (error) {
          // An interrupt ends the run (it throws once every page stopped), not page by page.
          if (input.signal?.aborted) return
          // Pages cut short by another page's configuration error: that error is the build's.
          if (stopError !== null && (error === stopError || signal.aborted)) return
          if (stopsTheBuild(error)) {
            stopError = error
            stop.abort(error)
            return
          }
          if (error instanceof PaymentRequiredError) accountError ??= error
          fail(page, error, source, performance.now() - begun)
        } finally {
          release()
          progress.done()
        }
      }),
    )
  } finally {
    progress.stop()
  }
  if (stopError !== null) throw stopError
}
