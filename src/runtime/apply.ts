/**
 * Request time: a server-rendered page gets its route's critical CSS as the build gives a
 * file its own (the same inliner, strategies and loader), or passes through as it is when the
 * manifest does not cover it: no route matches its URL, or it links other stylesheets than
 * the route's pages did when the build rendered them (another deploy, a page of its own).
 */
import { inlineWithOutline, type InlineResult, type OutlineReader } from '../html/inline-core.ts'
import { plainHeadOutline } from '../html/plain-head.ts'
import type { LoadedManifest } from './manifest.ts'

export interface ApplyOptions {
  /** The response's CSP nonce, for the `<style>` and the links and script it adds. */
  nonce?: string
  /**
   * The page's route as the framework names it, where the server knows it (Astro's
   * `context.routePattern`): the manifest's route of that name, whatever the URL's base.
   */
  route?: string
}

/** The route of `url` (a path, or a URL whose path is read) in `manifest`, or null (none matches, or it is not below the base). */
export function routeOf(manifest: LoadedManifest, url: string | URL): LoadedManifest['routes'][number] | null {
  const full = typeof url === 'string' && url.startsWith('/') ? url.replace(/[?#].*$/s, '') : new URL(url).pathname
  // Routes are named below the base: `/docs/blog/a` is `/blog/[slug]`'s page under `/docs/`.
  const below = manifest.base === '/' ? full : full === manifest.base.slice(0, -1) ? '/' : full.startsWith(manifest.base) ? full.slice(manifest.base.length - 1) : null
  if (below === null) return null
  return manifest.routes.find((route) => route.pattern.test(below)) ?? null
}

/**
 * `html` with its route's critical CSS, or `html` itself (the same string) when the manifest
 * does not cover it, or there is none (`readManifest` found none to use).
 */
export function applyCriticalCss(html: string, url: string | URL, manifest: LoadedManifest | null, options: ApplyOptions = {}): string {
  return manifest === null ? html : (inlineRoute(html, url, manifest, options)?.html ?? html)
}

/**
 * What the inliner made of `html` with its route's CSS (its CSP hashes too), or null when no
 * route matches. `read`: how the page is read (a caller that has read it already gives its outline).
 */
export function inlineRoute(html: string, url: string | URL, manifest: LoadedManifest, options: ApplyOptions = {}, read: OutlineReader = plainHeadOutline): InlineResult | null {
  const route = options.route === undefined ? routeOf(manifest, url) : (manifest.routes.find((entry) => entry.route === options.route) ?? null)
  if (route === null) return null
  // The inliner the build uses, over the reader of plain pages: a page it does not read as the build's full scan would is left as it is.
  return inlineWithOutline(html, route.css, {
    // Only the sheets the critical CSS was made from, all of them, in their order: else the page keeps its own.
    onlyWithStylesheets: route.sheets,
    preload: manifest.preload,
    ...route.options,
    ...(manifest.loaderSrc === undefined ? {} : { loaderSrc: manifest.loaderSrc }),
    ...(options.nonce === undefined ? {} : { nonce: options.nonce }),
  }, read)
}
