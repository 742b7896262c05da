/**
 * Embedded mode: no service is configured, so the build brings its own. The build output
 * is served on 127.0.0.1 below the bundler's base before pages are planned (every page has
 * its real URL from the start); the reference service and the browser start only when some
 * page misses the cache. Results are cached by what the render reads: the page's HTML and
 * the stylesheets it links, so a changed page is never a hit and an unchanged one always is.
 * The same lookup of those stylesheets finds a page whose own sheets the build lacks (a
 * missing or wrong base), before it is rendered into an unstyled nothing.
 */
import { buildSelection } from '../build-selection.ts'
import { availableParallelism } from 'node:os'
import { createClient } from '../../client/client.ts'
import type { CriticalCssClient } from '../../client/types.ts'
import { renderKeyParts } from '../../html/render-key.ts'
import { ENGINE_REVISION } from '../../shared/engine-revision.ts'
import { timed } from '../../shared/timings.ts'
import { baseCheck, sitePageOf } from '../base-check.ts'
import { serveBuild, type BuildServer } from '../build-server.ts'
import { contentHashOfParts, linkedSheets, sheetHashes, sheetLookup } from '../build-sheets.ts'
import { cacheKey } from '../cache.ts'
import type { ResolvedOptions, ResolvedPage } from '../options.ts'
import { planPages, type Page } from '../pages.ts'
import { clientRenderer, logRetries } from './client-renderer.ts'
import type { EmbeddedService } from './embedded-service.ts'
import type { Mode } from './mode.ts'
import { engineShown, sayEngine } from './engine-notes.ts'
import { engineRenderer } from './engine-renderer.ts'
import { counted } from '../report.ts'
import type { EngineChoice, EngineName } from '../../shared/engines.ts'

const NAME = 'embedded service'
/** Pages in flight: enough to keep every worker busy, few enough that a page's deadline runs while it is rendered, not while it queues. */
export const PAGES_PER_WORKER = 2
const MAX_WORKERS = 4
/** The service is on loopback and a warm page renders in a few hundred ms: a job is checked every 50–200 ms, not every few seconds. */
export const CHECK_INTERVAL = { firstMs: 50, factor: 1.25, maxMs: 200 }


/**
 * A configured page is a page of this build, wherever its URL points: one below the site
 * URL keeps its place relative to it, any other keeps its path (and query).
 */
function onBuildServer(page: ResolvedPage, siteUrl: URL | null, local: URL): ResolvedPage {
  if (!URL.canParse(page.url)) return page
  const url = new URL(page.url)
  if (siteUrl !== null && url.href.startsWith(siteUrl.href)) return { ...page, url: new URL(url.href.slice(siteUrl.href.length), local).href }
  return { ...page, url: new URL(`${url.pathname}${url.search}`, local.origin).href }
}

/** Pages the embedded service renders at once, per engine: a browser's pages each take a core; the static engine sizes its own by its threads. */
function embeddedWorkers(): Partial<Record<EngineName, number>> {
  return { chromium: Math.max(1, Math.min(MAX_WORKERS, availableParallelism())) }
}

/** The service and its engine for this build's options (loaded only when a build renders). */
function startForBuild(options: ResolvedOptions, root: string, onJobEnded: (id: string) => void): Promise<EmbeddedService> {
  return timed('embedded: start', async () => {
    const { startEmbeddedService } = await timed('embedded: load its module', () => import('./embedded-service.ts'))
    return await startEmbeddedService({ jobTimeoutMs: options.timeoutMs, engine: options.engine, root, workers: embeddedWorkers(), words: options.words, onJobEnded })
  })
}

/**
 * The engine a build expects to render with, before anything starts: what its pages are looked
 * up for in the cache. `auto` expects Chromium when a browser is found (one that then does not
 * start renders statically, and its pages are kept under the static engine's keys).
 */
export async function expectedEngine(choice: EngineChoice, root: string): Promise<EngineName> {
  if (choice !== 'auto') return choice
  const { anyBrowser } = await import('../../engine/find-browsers.ts')
  return (await anyBrowser(process.env, root)) ? 'chromium' : 'static'
}

export function embeddedMode(options: ResolvedOptions): Mode {
  let service: Promise<EmbeddedService> | null = null
  /** The project root the mode began or opened with: where the engine looks for browsers. */
  let projectRoot = process.cwd()
  let site: BuildServer | null = null
  let client: CriticalCssClient | null = null
  const start = (): Promise<EmbeddedService> => {
    if (service === null) {
      // The service is in this process: a job's waiter hears of its end at once, not at its next check.
      service = startForBuild(options, projectRoot, (id) => client?.checkNow(id))
      // A browser that cannot start is said by the run that needs it, with its hint.
      service.catch(() => {})
    }
    return service
  }
  return {
    begin: () => void start(),
    async open({ output, base, root }) {
      if (output === undefined) throw new TypeError('embedded mode needs the build output')
      projectRoot = root
      const engine = await expectedEngine(options.engine, root)
      // keep/drop with what their RegExps match and the markers mark in this build's stylesheets: what is rendered and what keys the cache.
      const { selection, notes } = await buildSelection(options, output, root)
      // The site's own absolute URLs (a theme's `absURL` links) are served from this build, never fetched.
      site = await serveBuild(output, base, options.siteUrl)
      const served = site
      // One lookup per sheet and build, for the cache key and the check for sheets the build lacks alike.
      const sheets = sheetLookup(served.find, served.siteUrl.origin, options.siteUrl)
      const hashes = sheetHashes(sheets)
      const bases = baseCheck(output)
      return {
        name: NAME,
        engine,
        notes,
        plan: (files) => planPages(options.pages?.map((page) => onBuildServer(page, options.siteUrl, served.siteUrl)) ?? null, files, { siteUrl: served.siteUrl, base }),
        prefix: served.siteUrl.pathname,
        // The port changes every build: the path is what names the page.
        shown: (page: Page) => {
          const url = new URL(page.url)
          return `${url.pathname}${url.search}`
        },
        async cacheKey(page, html, madeBy) {
          // The site's origin decides which of the page's URLs are this build's files.
          const site = options.siteUrl === null ? [] : [`site:${options.siteUrl.origin}`]
          const contents = [contentHashOfParts((part) => renderKeyParts(html, part)), ...(await hashes(html, page.url)), ...site]
          // The page by where it is served (path and query, below the base), not by its file: the CSS's url()s follow the base.
          const url = new URL(page.url)
          return cacheKey({ service: `${NAME} r${ENGINE_REVISION}`, engine: madeBy, url: `${url.pathname}${url.search}`, viewports: options.viewports, thirdParty: options.thirdParty, selection, contents })
        },
        async missingSheets(page, html) {
          const own = (await Promise.all(linkedSheets(html, page.url).map(sheets))).filter((sheet) => sheet !== null)
          const paths = [...new Set(own.flatMap((sheet) => ('missing' in sheet ? [sheet.missing] : [])))]
          if (paths.length === 0) return null
          const all = own.every((sheet) => 'missing' in sheet)
          if (!all) return { paths, all, bases: [] }
          // Which base would serve them: asked of the files only for a page that fails, so a build without the fault pays nothing.
          const { pathname } = new URL(page.url)
          const prefix = served.siteUrl.pathname
          const finding = pathname.startsWith(prefix) ? await bases([sitePageOf(pathname.slice(prefix.length), page.file, html)], base) : null
          return { paths, all, bases: finding?.bases ?? [] }
        },
        async renderer(count, logger) {
          const started = await timed('embedded: wait for the start', start)
          sayEngine(started.engine, options, logger)
          const { workers } = started.engine
          logger.info(`critical CSS: no service configured, rendering ${counted(count, 'page')} ${engineShown(started.engine)}, ${Math.min(count, workers)} at a time`)
          const concurrency = options.concurrency ?? Math.min(count, PAGES_PER_WORKER * workers)
          if (started.engine.name === 'static') return engineRenderer(started.generate, { viewports: options.viewports, thirdParty: options.thirdParty, selection, concurrency, timeoutMs: options.timeoutMs })
          client = createClient({ baseUrl: started.baseUrl, token: started.token, checkInterval: CHECK_INTERVAL, onEvent: logRetries(logger) })
          // Nothing to advise: the user configured no service, and the browser's problems are said when it starts.
          return clientRenderer(client, { viewports: options.viewports, thirdParty: options.thirdParty, selection, concurrency, advice: () => null })
        },
      }
    },
    async release() {
      const [opened, begun, served] = [client, service, site]
      client = null
      service = null
      site = null
      // Whatever the build started (the client, the service and browser, the build server) stops with it.
      await opened?.close()
      await (await begun?.catch(() => null))?.close()
      await served?.close()
    },
  }
}
