/**
 * Astro's middleware for pages rendered on demand (added by `unplugin-critical-css/astro`,
 * outermost, so it sees the HTML the user's own middleware made): the route's critical CSS
 * from the manifest the build wrote beside the server. A server without its manifest (one
 * copied without it) serves its pages as they are and says so once; a request never fails
 * for it.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
// Resolved by the build to the manifest beside this bundle (core/server-manifest-module.ts).
import manifestUrl from 'virtual:unplugin-critical-css/manifest'
import { loadManifest, type LoadedManifest } from './manifest.ts'
import { withCriticalCss } from './server-response.ts'

/** The part of Astro's `APIContext` this middleware reads. */
interface AstroContextLike {
  url: URL
  routePattern: string
  isPrerendered: boolean
}

let manifest: LoadedManifest | null | undefined

function loaded(): LoadedManifest | null {
  if (manifest !== undefined) return manifest
  try {
    manifest = loadManifest(JSON.parse(readFileSync(manifestUrl, 'utf8')))
  } catch (error) {
    manifest = null
    console.error(`unplugin-critical-css: pages are served without critical CSS: ${fileURLToPath(manifestUrl)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  return manifest
}

export async function onRequest(context: AstroContextLike, next: () => Promise<Response>): Promise<Response> {
  // Prerendered pages are files, which the build gave their CSS.
  if (context.isPrerendered) return next()
  const table = loaded()
  if (table === null || !table.routes.some((route) => route.route === context.routePattern)) return next()
  return withCriticalCss(await next(), context.url, table, { route: context.routePattern })
}
