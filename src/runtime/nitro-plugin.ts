/**
 * Nitro's plugin for Nuxt's server-rendered pages (added by `unplugin-critical-css/nuxt` to a
 * `nuxt build`): each page Nuxt renders whole gets its route's critical CSS from the manifest
 * the build wrote beside the server (runtime/manifest-file.ts), as Nitro answers it.
 */
// Resolved by the build to the manifest beside this bundle (core/server-manifest-module.ts).
import manifestUrl from 'virtual:unplugin-critical-css/manifest'
import { NONCE_PATTERN } from '../html/nonce.ts'
import { applyCriticalCss } from './apply.ts'
import { manifestAt } from './manifest-file.ts'

/** The part of Nitro's `render:response` answer this plugin reads and writes. */
interface RenderResponseLike {
  body?: unknown
  statusCode?: number
  headers?: Record<string, string>
}

/** The part of the request's event this plugin reads: its URL, and the nonce nuxt-security gave it (`event.context.security.nonce`). */
interface NitroEventLike {
  /** Below `app.baseURL`: h3 takes the base off for the handler Nitro mounts there. */
  path: string
  /** The URL as asked for, the base included (h3 1, Nitro 2). */
  node?: { req?: { originalUrl?: string } }
  context?: { security?: { nonce?: unknown } }
}

/** The part of a Nitro app (Nitro 2, `defineNitroPlugin`'s argument) this plugin uses. */
export interface NitroAppLike {
  hooks: { hook(name: 'render:response', handler: (response: RenderResponseLike, context: { event: NitroEventLike }) => void): unknown }
}

export default function criticalCssNitroPlugin(nitroApp: NitroAppLike): void {
  nitroApp.hooks.hook('render:response', (response, { event }) => {
    // A streamed page (`experimental.ssrStreaming`), a payload or an island is not a whole HTML string; an error page is another page.
    if (typeof response.body !== 'string' || (response.statusCode ?? 200) !== 200 || !/^text\/html\b/i.test(response.headers?.['content-type'] ?? '')) return
    const manifest = manifestAt(manifestUrl())
    // The nonce the response's own tags carry under nuxt-security's policy: what this plugin adds must carry it too.
    const nonce = event.context?.security?.nonce
    // The manifest's routes are named below its base, and a URL is matched as a browser asked for it.
    const url = event.node?.req?.originalUrl ?? event.path
    if (manifest !== null) response.body = applyCriticalCss(response.body, url, manifest, typeof nonce === 'string' && NONCE_PATTERN.test(nonce) ? { nonce } : {})
  })
}
