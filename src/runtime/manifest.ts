/**
 * What a build wrote for a server's routes (issue 50): per route, the critical CSS and the
 * stylesheets its pages link, as the build rendered its sample URLs; and how the full sheets
 * load. Read once when the server starts: a manifest that is not one fails there, naming what
 * is wrong, never a request.
 */
import { inlineOptionsOf, type InputOptions, type PageInlineInputs } from '../html/inline-inputs.ts'
import { isLoaderSrc } from '../html/inline-core.ts'
import { PRELOAD_STRATEGIES, type PreloadStrategy } from '../html/strategies.ts'
import { routePattern, routeRank } from './routes.ts'

export const MANIFEST_VERSION = 1

/** The manifest's file name, in the server output's own folder. */
export const MANIFEST_FILE = 'critical-css.json'

/**
 * The module a server bundle imports for its manifest's `file:` URL (its default export, a
 * function that returns it): the build resolves it to where the bundle is written, since the
 * server is moved whole when it is deployed.
 */
export const MANIFEST_MODULE = 'virtual:unplugin-critical-css/manifest'

export interface ManifestRoute extends PageInlineInputs {
  /** The route as the framework names it: `/`, `/blog/[slug]`, `/docs/[...path]`, `/blog/:slug`. */
  route: string
  /** The stylesheets its pages link, each `href` as written, in document order: a page that links others passes through. */
  sheets: string[]
  /** The critical CSS of its sample URLs, together. */
  css: string
}

export interface CriticalCssManifest {
  version: typeof MANIFEST_VERSION
  /** How the full stylesheets load once the critical CSS is in, as the build's `preload` option said. */
  preload: PreloadStrategy
  /** Where the pages load the loader script from (`preload: 'loader'`), as their `<script src>` says it. */
  loaderSrc?: string
  /** The path the app is served below (`/`, `/docs/`): a URL's path is matched to the routes below it. */
  base: string
  routes: ManifestRoute[]
}

/** A manifest ready for requests: each route with its pattern, the most specific first. */
export interface LoadedManifest {
  preload: PreloadStrategy
  loaderSrc?: string
  base: string
  routes: (ManifestRoute & { pattern: RegExp; options: InputOptions })[]
}

export class ManifestError extends Error {
  override name = 'ManifestError'
}

function fail(where: string, what: string): never {
  throw new ManifestError(`The critical CSS manifest${where ? ` ${where}` : ''} ${what}: build again to write it.`)
}

function strings(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) fail(where, 'is not a list of strings')
  return [...(value as string[])]
}

/** Checks a manifest (parsed JSON) and readies it for requests. */
export function loadManifest(value: unknown): LoadedManifest {
  if (typeof value !== 'object' || value === null) fail('', 'is not an object')
  const manifest = value as Partial<Record<keyof CriticalCssManifest, unknown>>
  if (manifest.version !== MANIFEST_VERSION) fail('version', `is ${JSON.stringify(manifest.version)}, not ${MANIFEST_VERSION} (a build of another release wrote it)`)
  if (!PRELOAD_STRATEGIES.includes(manifest.preload as PreloadStrategy)) fail('preload', `is ${JSON.stringify(manifest.preload)}, not one of ${PRELOAD_STRATEGIES.join(', ')}`)
  // What the inliner would refuse at each request is refused here, once: a request never fails for the manifest.
  if (manifest.loaderSrc !== undefined && !isLoaderSrc(manifest.loaderSrc)) fail('loaderSrc', 'is not a URL with no space, quote or angle bracket')
  if (manifest.preload === 'loader' && manifest.loaderSrc === undefined) fail('loaderSrc', "is missing, which preload 'loader' needs")
  if (typeof manifest.base !== 'string' || !manifest.base.startsWith('/') || !manifest.base.endsWith('/')) fail('base', 'is not a path that starts and ends with /')
  if (!Array.isArray(manifest.routes)) fail('routes', 'is not a list')
  const seen = new Set<string>()
  const routes = (manifest.routes as unknown[]).map((entry, index) => {
    const where = `routes[${index}]`
    if (typeof entry !== 'object' || entry === null) fail(where, 'is not an object')
    const { route, sheets, css, keepBlocking, wholeSheets, lookedUp, fontPreloads } = entry as Record<string, unknown>
    if (typeof route !== 'string' || !route.startsWith('/')) fail(`${where}.route`, 'is not a path starting with /')
    if (seen.has(route)) fail(`${where}.route`, `names ${route} a second time`)
    seen.add(route)
    if (typeof css !== 'string') fail(`${where}.css`, 'is not a string')
    const linked = strings(sheets, `${where}.sheets`)
    if (wholeSheets !== null && (typeof wholeSheets !== 'object' || Array.isArray(wholeSheets) || Object.values(wholeSheets as object).some((text) => typeof text !== 'string'))) {
      fail(`${where}.wholeSheets`, 'is neither null nor an object of stylesheet texts by href')
    }
    const inputs: PageInlineInputs = {
      keepBlocking: strings(keepBlocking, `${where}.keepBlocking`),
      wholeSheets: wholeSheets as Record<string, string> | null,
      lookedUp: strings(lookedUp, `${where}.lookedUp`),
      fontPreloads: strings(fontPreloads, `${where}.fontPreloads`).map((url) => (url === '' ? fail(`${where}.fontPreloads`, 'has an empty URL') : url)),
    }
    return { route, sheets: linked, css, ...inputs, pattern: routePattern(route), options: inlineOptionsOf(inputs) }
  })
  // Most specific first, ties in the manifest's order: `/blog/new` before `/blog/[slug]` before `/[...rest]`.
  const ranked = routes.map((route, index) => ({ route, rank: routeRank(route.route), index }))
  ranked.sort((a, b) => compareRanks(a.rank, b.rank) || a.index - b.index)
  return { preload: manifest.preload as PreloadStrategy, ...(manifest.loaderSrc === undefined ? {} : { loaderSrc: manifest.loaderSrc as string }), base: manifest.base as string, routes: ranked.map((entry) => entry.route) }
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  // `/docs` before `/docs/[...path]`, which matches it too.
  return a.length - b.length
}
