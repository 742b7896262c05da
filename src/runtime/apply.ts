/**
 * Request time: a server-rendered page gets its route's critical CSS as the build gives a
 * file its own (the edits the inliner made on the route's sample, html/head-replay.ts), or
 * passes through as it is when the manifest does not cover it: no route matches its URL, or
 * it links other stylesheets than the route's pages did when the build rendered them
 * (another deploy, a page of its own), or its head is not one the runtime reads.
 */
import { replayHeadPlan } from '../html/head-replay.ts'
import { NONCE_PATTERN, NONCE_RULE } from '../html/nonce.ts'
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

/** What the route's edits made of `html`, with the CSP hashes of the styles they put in; null where they were not made. */
export function inlineRoute(html: string, url: string | URL, manifest: LoadedManifest, options: ApplyOptions = {}): { html: string; hashes: readonly string[] } | null {
  const { nonce } = options
  if (nonce !== undefined && (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce))) throw new TypeError(`applyCriticalCss: the \`nonce\` option ${NONCE_RULE}.`)
  const route = options.route === undefined ? routeOf(manifest, url) : (manifest.routes.find((entry) => entry.route === options.route) ?? null)
  if (route === null) return null
  const edited = replayHeadPlan(html, route.head, nonce)
  return edited === null ? null : { html: edited, hashes: route.head.hashes }
}
