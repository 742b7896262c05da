/**
 * Server-rendered routes (issue 50): after the framework's server build, the built server is
 * started on 127.0.0.1, one sample URL per route is rendered in the embedded service as a
 * built file would be, and a manifest is written into the server output for the runtime
 * (`unplugin-critical-css/runtime`) to insert each route's CSS at request time. The manifest
 * and the loader script are written last, and only when every step succeeded.
 */
import { join } from 'node:path'
import { createClient } from '../client/client.ts'
import { describeBaseUrl } from '../client/errors.ts'
import type { CriticalCssClient } from '../client/types.ts'
import { outlineOf, stylesheetHrefs } from '../html/scan.ts'
import { headPlanOf, replaysAsInliner } from '../html/head-plan.ts'
import { inlineOptionsOf } from '../html/inline-inputs.ts'
import { readPlainHead } from '../html/plain-head.ts'
import { STRATEGIES, type PreloadStrategy } from '../html/strategies.ts'
import { normalizeSelection, SELECTION_LIMITS, type Selection } from '../contract/api-contract.ts'
import { loadManifest, MANIFEST_FILE, MANIFEST_VERSION, type CriticalCssManifest, type ManifestRoute } from '../runtime/manifest.ts'
import { startAppServer, type AppServerCommand } from './app-server.ts'
import { buildSelection, ruleSelectors } from './build-selection.ts'
import { buildFileFinder, directoryOutput, type BuildOutput } from './build-server.ts'
import { ConfigurationError, PLUGIN_NAME, StrictModeError, describeError } from './errors.ts'
import { writeFilesAtomic } from './files.ts'
import { firstScreenLine } from './first-screen-notes.ts'
import { CHECK_INTERVAL, expectedEngine } from './modes/embedded.ts'
import { sampleCache } from './sample-cache.ts'
import { engineShown, sayEngine } from './modes/engine-notes.ts'
import { clientRenderer, logRetries } from './modes/client-renderer.ts'
import type { RenderedPage } from './modes/mode.ts'
import { otherReleaseMessage, type OtherRelease } from './modes/deployed-sheets.ts'
import { remoteRoutes } from './modes/remote.ts'
import { ENV, type RemoteService, type ResolvedOptions } from './options.ts'
import { pageInlineInputs } from './page-inputs.ts'
import { stopsTheBuild } from './run.ts'
import { basePath } from './pages.ts'
import type { BuildLogger } from './report.ts'
import { lazySheetOf, buildSheetTexts } from './whole-sheets.ts'

/** A route of the server and the paths it is rendered from; none: it has parameters and no sample. */
export interface ServerRoute {
  route: string
  samples: readonly string[]
}

/** `route` rendered from its `samples` entry, else from `own`, its own path (null: it has parameters, and without a sample it is left alone). */
export function sampledRoute(route: string, own: string | null, samples: ReadonlyMap<string, readonly string[]>): ServerRoute {
  return { route, samples: samples.get(route) ?? (own === null ? [] : [own]) }
}

export interface ServerRoutesInput {
  server: AppServerCommand
  routes: readonly ServerRoute[]
  /** The folder the server serves its static files from: the stylesheets are read there, the loader script goes there. */
  staticDir: string
  /** The path the app is served below (`/`, `/docs/`). */
  base: string
  /** The server's own output folder: the manifest goes there, beside the code that reads it. */
  serverDir: string
  root: string
  logger: BuildLogger
  /** Files written together with the manifest (the server's own files that name its place), or none. */
  writeWith?: ReadonlyMap<string, string>
}

export interface ServerRoutesResult {
  /** The routes in the manifest, with the samples each was rendered from. */
  covered: { route: string; samples: readonly string[] }[]
  /** Routes left out, with why. */
  left: { route: string; why: string }[]
}

/**
 * The file the server's pages load the full stylesheets with (the `loader` strategy), or
 * null: for a server that serves only what was in its public folder when it was built
 * (Nitro indexes it then), to put there before.
 */
export function serverLoaderAsset(options: Pick<ResolvedOptions, 'preload'>): { file: string; text: string } | null {
  return STRATEGIES[options.preload].asset
}

/**
 * The selectors of a sample's critical CSS, for the next sample to keep: what a route's
 * samples got together, within what a job may keep.
 */
function keptSelectors(css: string): string[] {
  const selectors = ruleSelectors([{ text: css }])
  if (selectors.length > SELECTION_LIMITS.maxSelectors) {
    throw new ConfigurationError(`${PLUGIN_NAME}: a route's samples together need ${selectors.length} selectors kept, more than the ${SELECTION_LIMITS.maxSelectors} a render takes: give the route one sample in \`samples\`.`)
  }
  return selectors.filter((selector) => selector.length <= SELECTION_LIMITS.maxSelectorChars)
}

/** Pages rendered at once: the app server and the browser share the machine. */
const AT_ONCE = 2

/** Why a sample's answer is no page to render, or null when it is one. */
function notAPage(response: Response): string | null {
  if (response.status >= 300 && response.status < 400) return `redirects (${response.status}) to ${response.headers.get('location') ?? 'nowhere'}`
  if (response.status !== 200) return `answers ${response.status}`
  const type = response.headers.get('content-type') ?? ''
  return /^text\/html\b/i.test(type) ? null : `answers ${type || 'no content type'}, not HTML`
}

/** A sample's page as the server answers it, or why it is none. */
async function askFor(origin: string, sample: string, timeoutMs: number): Promise<{ url: string; html: string } | { why: string }> {
  const url = new URL(sample, origin).href
  const get = (): Promise<Response> =>
    fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) }).catch((error: unknown) => {
      throw new ConfigurationError(`${PLUGIN_NAME}: the built server did not answer ${sample} (${describeError(error)}), so nothing was written into the server output.`)
    })
  const first = await get()
  const why = notAPage(first)
  await first.body?.cancel()
  if (why !== null) return { why: `its sample ${sample} ${why}` }
  // The page as the server answers it from then on: a first answer can differ (Nuxt inlines a page's styles from its second render on).
  const again = await get()
  const changed = notAPage(again)
  if (changed !== null) {
    await again.body?.cancel()
    return { why: `its sample ${sample} ${changed} when asked again` }
  }
  const html = await again.text()
  if (stylesheetHrefs(html).length === 0) return { why: `its sample ${sample} links no stylesheet, so nothing holds up its first paint` }
  return { url, html }
}

/** Why the runtime would send a page of the route without its CSS. */
function unreadWhy(sample: string): string {
  return `its sample ${sample} is not a page the runtime reads at request time (a head of meta, link, base, title, style, script and noscript elements, a body without <link>), so its pages would be sent without it`
}

/**
 * Why the runtime would send a route's pages without its CSS, or null: it reads them with its
 * reader of plain pages (html/plain-head.ts), which gives up on what it does not follow, and
 * never edits a body's end (the `body` strategy's stylesheets).
 */
function unreadAtRequestTime(pages: readonly { sample: string; html: string }[], strategy: (typeof STRATEGIES)[PreloadStrategy], preload: PreloadStrategy): string | null {
  const body = pages.find((page) => strategy.needsBodyEnd(outlineOf(page.html, 'nothing')))
  if (body !== undefined) return `preload '${preload}' moves its stylesheets to the body's end, which pages rendered per request do not get (the default 'loader' serves them)`
  const unread = pages.find((page) => readPlainHead(page.html, []) < 0)
  return unread === undefined ? null : unreadWhy(unread.sample)
}

/** A route whose samples are pages that link the same stylesheets, ready to render. */
interface SampledRoute {
  route: string
  pages: { sample: string; url: string; html: string }[]
}

/** How samples are rendered: from the built server in the embedded service, or where the app is deployed by the configured one. */
interface SampleRenderer {
  /** Where, as the log says it. */
  where: string
  /** The URL a sample is rendered at. */
  urlOf(page: SampledRoute['pages'][number]): string
  /** One sample rendered, keeping `selection`. */
  render(url: string, selection: Selection | null): Promise<RenderedPage>
  /** The CSS a route gets of what its samples got (`html`: its first sample as this build's server answers it). */
  own(url: string, html: string, css: string): Promise<string>
  close(): Promise<void>
}

/** The embedded service renders each sample from the built server, in a local Chromium. */
async function embeddedSamples(options: ResolvedOptions, origin: string, root: string, logger: BuildLogger): Promise<SampleRenderer> {
  const { startEmbeddedService } = await import('./modes/embedded-service.ts')
  let client: CriticalCssClient | null = null
  const service = await startEmbeddedService({ jobTimeoutMs: options.timeoutMs, engine: options.engine, root, workers: { chromium: AT_ONCE, static: AT_ONCE }, words: options.words, onJobEnded: (id) => client?.checkNow(id) })
  try {
    sayEngine(service.engine, options, logger)
  } catch (error) {
    await service.close()
    throw error
  }
  const opened = createClient({ baseUrl: service.baseUrl, token: service.token, checkInterval: CHECK_INTERVAL, onEvent: logRetries(logger) })
  client = opened
  return {
    where: `of the built server (${origin}) ${engineShown(service.engine)}`,
    urlOf: (page) => page.url,
    render(url, selection) {
      const renderer = clientRenderer(opened, { viewports: options.viewports, thirdParty: options.thirdParty, selection, concurrency: AT_ONCE, advice: () => null })
      return renderer.render(url, { deadline: Date.now() + options.timeoutMs, signal: AbortSignal.timeout(options.timeoutMs) })
    },
    own: async (_url, _html, css) => css,
    async close() {
      await opened.close()
      await service.close()
    },
  }
}

/** What remote mode found of the deployed site, said once the routes are rendered. */
interface DeployedNotes {
  otherRelease: OtherRelease[]
  unchecked: { name: string; reason: string }[]
}

/**
 * The configured service renders each sample where the app is deployed (`siteUrl` + the
 * sample's path, as a built page's URL is made), and what it finds is held to this build's
 * stylesheets as a built page's CSS is: the deployed release may be another.
 */
function remoteSamples(options: ResolvedOptions, service: RemoteService, siteUrl: URL, output: BuildOutput, input: ServerRoutesInput, notes: DeployedNotes): SampleRenderer {
  const remote = remoteRoutes(options, service, output, input.base, input.logger)
  return {
    where: `where the app is deployed (${siteUrl.origin}) by ${remote.name}`,
    urlOf: (page) => new URL(page.sample, siteUrl).href,
    render: (url, selection) => remote.render(url, selection),
    async own(url, html, css) {
      const checked = await remote.checkAgainstBuild(url, html, css)
      if (checked.kind === 'other') notes.otherRelease.push({ name: new URL(url).pathname, dropped: checked.dropped, replaced: checked.replaced })
      if (checked.kind === 'unchecked') notes.unchecked.push({ name: new URL(url).pathname, reason: checked.reason })
      return checked.css
    },
    close: () => remote.close(),
  }
}

export async function renderServerRoutes(options: ResolvedOptions, input: ServerRoutesInput): Promise<ServerRoutesResult> {
  const { logger } = input
  for (const route of options.samples.keys()) {
    if (!input.routes.some((entry) => entry.route === route)) logger.warn(`critical CSS: \`samples\` names ${route}, which is no route the server renders (${input.routes.map((entry) => entry.route).join(', ') || 'it renders none'}).`)
  }
  const left: ServerRoutesResult['left'] = input.routes.filter((route) => route.samples.length === 0).map(({ route }) => ({ route, why: 'it has parameters and no sample URL (the `samples` option)' }))
  const sampled = input.routes.filter((route) => route.samples.length > 0)
  const strategy = STRATEGIES[options.preload]
  const prefix = basePath(input.base) ?? '/'
  const loaderSrc = strategy.asset === null ? null : `${prefix}${strategy.asset.file}`
  const covered: ManifestRoute[] = []
  const from = new Map<string, readonly string[]>()
  const notes: DeployedNotes = { otherRelease: [], unchecked: [] }
  if (sampled.length > 0) {
    const output = directoryOutput(input.staticDir)
    const { selection } = await buildSelection(options, output, input.root)
    const sheets = strategy.defers ? { texts: buildSheetTexts(buildFileFinder(output, input.base)), lazy: lazySheetOf(output) } : null
    // Remote mode renders where the app is deployed; the built server still answers what this build's pages are.
    const service = options.service
    if (service !== null && options.siteUrl === null) {
      throw new ConfigurationError(`${PLUGIN_NAME}: remote mode renders the server's routes where the app is deployed: set ${ENV.siteUrl}${options.words.orOption('siteUrl')} to its address. Nothing was written into the server output.`)
    }
    const app = await startAppServer(input.server)
    /** What renders the samples the cache does not have, opened when the first of them is asked for. */
    const samples: { opening: Promise<SampleRenderer> | null } = { opening: null }
    try {
      // Every sample is asked for first: no browser starts for a server whose samples are no pages.
      const routes: SampledRoute[] = []
      for (const { route, samples: paths } of sampled) {
        const pages: SampledRoute['pages'] = []
        let why: string | null = null
        for (const sample of paths) {
          const page = await askFor(app.origin, sample, options.timeoutMs)
          if ('why' in page) why ??= page.why
          else pages.push({ sample, ...page })
        }
        const linked = pages.map((page) => stylesheetHrefs(page.html).join(' '))
        if (why === null && new Set(linked).size > 1) why = `its samples link different stylesheets (${pages.map((page, index) => `${page.sample}: ${linked[index]}`).join('; ')}), and a route's pages get one set`
        if (why === null) why = unreadAtRequestTime(pages, strategy, options.preload)
        if (why === null) routes.push({ route, pages })
        else left.push({ route, why })
      }
      if (routes.length > 0) {
        // A route's samples are rendered only when the cache does not have them: a build with nothing changed starts no browser.
        const cache = sampleCache(options, {
          output,
          base: input.base,
          root: input.root,
          origin: app.origin,
          service: service === null ? 'embedded service' : describeBaseUrl(service.baseUrl),
          engine: service === null ? await expectedEngine(options.engine, input.root) : null,
        })
        const open = (): Promise<SampleRenderer> =>
          (samples.opening ??= (async () => {
            const opened = service === null ? await embeddedSamples(options, app.origin, input.root, logger) : remoteSamples(options, service, options.siteUrl!, output, input, notes)
            logger.info(`critical CSS: rendering ${routes.length} server route${routes.length === 1 ? '' : 's'} ${opened.where}`)
            return opened
          })())
        let fromCache = 0
        /** One sample rendered, with `keep` the selectors of the CSS the route's other samples got. */
        const render = async (page: SampledRoute['pages'][number], kept: readonly string[]): Promise<RenderedPage> => {
          const keep = [...new Set([...(selection?.keep ?? []), ...kept])]
          const asked = normalizeSelection({ ...selection, keep })
          const hit = await cache?.get(page, asked)
          if (hit) {
            fromCache += 1
            return { ...hit, serviceMs: null }
          }
          const opened = await open()
          const rendered = await opened.render(opened.urlOf(page), asked)
          await cache?.set(page, asked, rendered)
          return rendered
        }
        const own = async (page: SampledRoute['pages'][number], css: string): Promise<string> => {
          // Embedded mode rendered this build; remote mode's CSS is held to it, which asks the service's side.
          if (service === null) return css
          const opened = await open()
          return await opened.own(opened.urlOf(page), page.html, css)
        }
        const renderRoute = async ({ route, pages }: SampledRoute): Promise<void> => {
          const shown = pages.map((page) => page.sample).join(', ')
          try {
            // Each sample keeps what the ones before it got, so the last one's CSS is all of theirs, in the sheets' own order.
            let rendered = await render(pages[0]!, [])
            const checks: { sample: string; rendered: RenderedPage }[] = [{ sample: pages[0]!.sample, rendered }]
            for (const page of pages.slice(1)) {
              rendered = await render(page, keptSelectors(rendered.css))
              checks.push({ sample: page.sample, rendered })
            }
            // The earlier samples once more with all of it, so that each one's first screen is checked with the CSS the route gets.
            if (pages.length > 1) {
              const all = keptSelectors(rendered.css)
              for (const [index, page] of pages.slice(0, -1).entries()) checks[index] = { sample: page.sample, rendered: await render(page, all) }
            }
            if (rendered.css.trim() === '') {
              left.push({ route, why: `the service found no above-the-fold CSS in its sample${pages.length === 1 ? '' : 's'} ${shown}` })
              return
            }
            const { url, html } = pages[0]!
            const css = await own(pages[0]!, rendered.css)
            const inputs = await pageInlineInputs(html, url, css, rendered.network, { sheets, hidesLinks: strategy.hidesLinks, preloadFonts: options.preloadFonts, portable: (text) => text })
            const linked = stylesheetHrefs(html)
            // The edits the inliner makes on the first sample (held to its bytes there), made again at request time: every other sample must get its own bytes from them too.
            const inline = { preload: options.preload, ...(loaderSrc === null ? {} : { loaderSrc }), onlyWithStylesheets: linked, ...inlineOptionsOf(inputs) }
            const head = headPlanOf(html, css, inline)
            const unread = head === null ? pages[0]! : pages.slice(1).find((page) => !replaysAsInliner(page.html, css, inline, head))
            if (unread !== undefined) {
              left.push({ route, why: unreadWhy(unread.sample) })
              return
            }
            covered.push({ route, sheets: linked, css, ...inputs, head: head! })
            from.set(route, pages.map((page) => page.sample))
            for (const check of checks) {
              const differs = firstScreenLine(check.rendered.firstScreen)
              if (differs !== null) logger.info(`critical CSS: ${route} (${check.sample}) ${differs}`)
            }
          } catch (error) {
            if (stopsTheBuild(error)) throw error
            left.push({ route, why: `its sample${pages.length === 1 ? '' : 's'} ${shown} could not be rendered: ${describeError(error)}` })
          }
        }
        const queue = [...routes]
        await Promise.all(
          Array.from({ length: AT_ONCE }, async () => {
            for (let next = queue.shift(); next !== undefined; next = queue.shift()) await renderRoute(next)
          }),
        )
        if (fromCache > 0) logger.info(`critical CSS: ${fromCache} render${fromCache === 1 ? '' : 's'} of server route samples from the cache${samples.opening === null ? ', and no browser started' : ''}`)
      }
    } finally {
      await (await samples.opening?.catch(() => null))?.close()
      await app.close()
    }
  }

  // The manifest's routes in the order they were given, whatever order their renders ended in.
  const order = new Map(input.routes.map(({ route }, index) => [route, index]))
  covered.sort((a, b) => order.get(a.route)! - order.get(b.route)!)
  left.sort((a, b) => order.get(a.route)! - order.get(b.route)!)
  const { asset } = strategy
  const manifest: CriticalCssManifest = {
    version: MANIFEST_VERSION,
    preload: options.preload,
    ...(loaderSrc === null ? {} : { loaderSrc }),
    base: prefix,
    routes: covered,
  }
  if (notes.otherRelease.length > 0) {
    const message = otherReleaseMessage(options.siteUrl, notes.otherRelease, options.words)
    if (options.strict) throw new StrictModeError(`${PLUGIN_NAME}: ${options.words.name('strict')} is on, and ${message.replace(/^critical CSS: /, '')} Nothing was written into the server output.`)
    logger.warn(message)
  }
  if (notes.unchecked.length > 0) logger.info(`critical CSS: could not compare ${notes.unchecked.length === 1 ? 'a sample' : `${notes.unchecked.length} samples`} with the deployed site (${notes.unchecked[0]!.reason}), so ${notes.unchecked.length === 1 ? 'its route gets its' : 'their routes get their'} critical CSS as the service found it, which may be the deployed release's.`)
  if (left.length > 0 && options.strict) {
    throw new StrictModeError(`${PLUGIN_NAME}: strict: ${left.length} server route${left.length === 1 ? '' : 's'} got no critical CSS: ${left.map(({ route, why }) => `${route} (${why})`).join('; ')}. Nothing was written into the server output.`)
  }
  // What the server will read, read back first: a manifest it would refuse fails the build, never a request.
  try {
    loadManifest(JSON.parse(JSON.stringify(manifest)))
  } catch (error) {
    throw new ConfigurationError(`${PLUGIN_NAME}: the server routes' manifest would not load (${describeError(error)}), so nothing was written into the server output.`)
  }
  // Together or not at all: the loader a page would name, and the manifest that names it.
  const files = new Map([...(input.writeWith ?? []), [join(input.serverDir, MANIFEST_FILE), `${JSON.stringify(manifest)}\n`]])
  if (asset && covered.length > 0) files.set(join(input.staticDir, asset.file), asset.text)
  await writeFilesAtomic(files)
  const result = { covered: covered.map(({ route }) => ({ route, samples: from.get(route)! })), left }
  if (covered.length > 0) logger.info(`critical CSS: ${covered.length} server route${covered.length === 1 ? ' gets' : 's get'} critical CSS at request time: ${result.covered.map(({ route, samples }) => (samples.length === 1 && samples[0] === route ? route : `${route} (from ${samples.join(', ')})`)).join(', ')}`)
  for (const { route, why } of left) logger.warn(`critical CSS: server route ${route} is left as it is: ${why}.`)
  return result
}
