/**
 * Astro's middleware for pages rendered on demand (added by `unplugin-critical-css/astro`,
 * outermost, so it sees the HTML the user's own middleware made): the route's critical CSS
 * from the manifest the build wrote beside the server (runtime/manifest-file.ts).
 */
// Resolved by the build to the manifest beside this bundle (core/server-manifest-module.ts).
import manifestUrl from 'virtual:unplugin-critical-css/manifest'
import { manifestAt } from './manifest-file.ts'
import { withCriticalCss } from './server-response.ts'

/** The part of Astro's `APIContext` this middleware reads. */
interface AstroContextLike {
  url: URL
  routePattern: string
  isPrerendered: boolean
}

export async function onRequest(context: AstroContextLike, next: () => Promise<Response>): Promise<Response> {
  // Prerendered pages are files, which the build gave their CSS.
  if (context.isPrerendered) return next()
  const table = manifestAt(manifestUrl())
  if (table === null || !table.routes.some((route) => route.route === context.routePattern)) return next()
  return withCriticalCss(await next(), context.url, table, { route: context.routePattern })
}
