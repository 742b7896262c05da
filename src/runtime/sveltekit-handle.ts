/**
 * SvelteKit's `handle` for pages rendered per request (adapter-node): the route's critical
 * CSS from the manifest the build wrote beside the server (`unplugin-critical-css/sveltekit`
 * renders the routes and writes it). Kit takes no plugin from an adapter into every build
 * (kit 2 none at all), so the user adds this one line, and the build writes the manifest's
 * place into the server's files that carry it (runtime/manifest-place.ts).
 *
 *   src/hooks.server.js:  export { handle } from 'unplugin-critical-css/sveltekit/handle'
 *   beside your own:      export const handle = sequence(criticalCss, yours)
 *                         (import { handle as criticalCss } from 'unplugin-critical-css/sveltekit/handle')
 */
import { manifestAt } from './manifest-file.ts'
import { writtenManifestUrl } from './manifest-place.ts'
import type { LoadedManifest } from './manifest.ts'
import { withCriticalCss } from './server-response.ts'

/** The part of SvelteKit's `RequestEvent` this hook reads. */
export interface SvelteKitEventLike {
  url: URL
  route: { id: string | null }
}

/** The part of SvelteKit's `handle` input this hook uses; `resolve` renders the page. */
export interface SvelteKitHandleInput<E extends SvelteKitEventLike> {
  event: E
  resolve: (event: E) => Response | Promise<Response>
}

/** The server's manifest, or null where the build has not named its place (yet). */
function serverManifest(): LoadedManifest | null {
  const url = writtenManifestUrl()
  return url === null ? null : manifestAt(url)
}

export async function handle<E extends SvelteKitEventLike>({ event, resolve }: SvelteKitHandleInput<E>): Promise<Response> {
  const route = event.route.id
  const manifest = route === null ? null : serverManifest()
  if (manifest === null || !manifest.routes.some((entry) => entry.route === route)) return resolve(event)
  return withCriticalCss(await resolve(event), event.url, manifest, { route: route! })
}
