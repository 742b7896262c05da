/**
 * What a build wrote for a server's routes (issue 50): per route, the critical CSS and the
 * stylesheets its pages link, as the build rendered its sample URLs; and how the full sheets
 * load. Read once when the server starts: a manifest that is not one fails there, naming what
 * is wrong, never a request.
 */
import { readyHeadPlan, type HeadPlan, type ReadyHeadPlan } from '../html/head-replay.ts'
import type { PageInlineInputs } from '../html/inline-inputs.ts'
import type { PreloadStrategy } from '../html/strategies.ts'
import { routePattern, routeRank } from './routes.ts'

/** 2: each route's head edits, made at build time (1 carried what the inliner needed to make them per request). */
export const MANIFEST_VERSION = 2

/** The manifest's file name, in the server output's own folder. */
export const MANIFEST_FILE = 'critical-css.json'

/**
 * The module a server bundle imports for its manifest's `file:` URL (its default export, a
 * function that returns it): the build resolves it to where the bundle is written, since the
 * server is moved whole when it is deployed.
 */
export const MANIFEST_MODULE = 'virtual:unplugin-critical-css/manifest'

/** A route as the build found it: its inputs (which sheets stay blocking, go in whole, …) are those its edits were made with, kept to say why. */
export interface ManifestRoute extends PageInlineInputs {
  /** The route as the framework names it: `/`, `/blog/[slug]`, `/docs/[...path]`, `/blog/:slug`. */
  route: string
  /** The stylesheets its pages link, each `href` as written, in document order: a page that links others passes through. */
  sheets: string[]
  /** The critical CSS of its sample URLs, together. */
  css: string
  /** The edits its pages' heads get, as the inliner made them on its first sample. */
  head: HeadPlan
}

export interface CriticalCssManifest {
  version: typeof MANIFEST_VERSION
  /** How the full stylesheets load once the critical CSS is in, as the build's `preload` option said (the edits say it again). */
  preload: PreloadStrategy
  /** Where the pages load the loader script from (`preload: 'loader'`), as their `<script src>` says it. */
  loaderSrc?: string
  /** The path the app is served below (`/`, `/docs/`): a URL's path is matched to the routes below it. */
  base: string
  routes: ManifestRoute[]
}

/** A manifest ready for requests: each route with its pattern, the most specific first. */
export interface LoadedManifest {
  base: string
  /** What a request needs of each route: its inputs are in its edits. */
  routes: (Pick<ManifestRoute, 'route' | 'sheets' | 'css'> & { head: ReadyHeadPlan; pattern: RegExp })[]
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

/** A text an edit puts in: one or more parts, the nonce's place between each two. */
function isText(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((part) => typeof part === 'string')
}

function headPlan(value: unknown, where: string): HeadPlan {
  if (typeof value !== 'object' || value === null) fail(where, 'is not an object')
  const { links, styleBefore, style, rewrites, hashes } = value as Record<keyof HeadPlan, unknown>
  const linked = strings(links, `${where}.links`)
  if (style !== null && !isText(style)) fail(`${where}.style`, 'is neither null nor a list of strings')
  if (!Number.isInteger(styleBefore) || (style === null ? styleBefore !== -1 : (styleBefore as number) < 0 || (styleBefore as number) >= linked.length)) fail(`${where}.styleBefore`, `is not ${style === null ? '-1 (no style)' : 'the index of a link'}`)
  if (!Array.isArray(rewrites) || rewrites.length !== linked.length || rewrites.some((text) => text !== null && !isText(text))) fail(`${where}.rewrites`, 'is not a text or null for each link')
  return { links: linked, styleBefore: styleBefore as number, style: style as string[] | null, rewrites: rewrites as (string[] | null)[], hashes: strings(hashes, `${where}.hashes`) }
}

/** Checks a manifest (parsed JSON) and readies it for requests. */
export function loadManifest(value: unknown): LoadedManifest {
  if (typeof value !== 'object' || value === null) fail('', 'is not an object')
  const manifest = value as Partial<Record<keyof CriticalCssManifest, unknown>>
  if (manifest.version !== MANIFEST_VERSION) fail('version', `is ${JSON.stringify(manifest.version)}, not ${MANIFEST_VERSION} (a build of another release wrote it)`)
  if (typeof manifest.base !== 'string' || !manifest.base.startsWith('/') || !manifest.base.endsWith('/')) fail('base', 'is not a path that starts and ends with /')
  if (!Array.isArray(manifest.routes)) fail('routes', 'is not a list')
  const seen = new Set<string>()
  const routes = (manifest.routes as unknown[]).map((entry, index) => {
    const where = `routes[${index}]`
    if (typeof entry !== 'object' || entry === null) fail(where, 'is not an object')
    const { route, sheets, css, head } = entry as Record<string, unknown>
    if (typeof route !== 'string' || !route.startsWith('/')) fail(`${where}.route`, 'is not a path starting with /')
    if (seen.has(route)) fail(`${where}.route`, `names ${route} a second time`)
    seen.add(route)
    if (typeof css !== 'string') fail(`${where}.css`, 'is not a string')
    return { route, sheets: strings(sheets, `${where}.sheets`), css, head: readyHeadPlan(headPlan(head, `${where}.head`)), pattern: routePattern(route) }
  })
  // Most specific first, ties in the manifest's order: `/blog/new` before `/blog/[slug]` before `/[...rest]`.
  const ranked = routes.map((route, index) => ({ route, rank: routeRank(route.route), index }))
  ranked.sort((a, b) => compareRanks(a.rank, b.rank) || a.index - b.index)
  return { base: manifest.base as string, routes: ranked.map((entry) => entry.route) }
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  // `/docs` before `/docs/[...path]`, which matches it too.
  return a.length - b.length
}
