/**
 * A server's `Response` with its route's critical CSS (Astro's middleware, Hono, anything
 * with WHATWG responses): the whole HTML of a 200 answer is read, and one the manifest does
 * not cover is given back with its own bytes.
 */
import { inlineRoute, type ApplyOptions } from './apply.ts'
import { withStyleHashes } from './csp.ts'
import type { LoadedManifest } from './manifest.ts'

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export async function withCriticalCss(response: Response, url: string | URL, manifest: LoadedManifest, options: ApplyOptions = {}): Promise<Response> {
  // A route's error page is another page than the one its CSS was measured on.
  if (response.status !== 200 || !/^text\/html\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) return response
  const bytes = new Uint8Array(await response.arrayBuffer())
  let html: string
  try {
    html = UTF8.decode(bytes)
  } catch {
    return new Response(bytes, response)
  }
  const result = inlineRoute(html, url, manifest, options)
  if (result === null || !result.changed) return new Response(bytes, response)
  const headers = new Headers(response.headers)
  // The body is longer now; a digest of the old one would be wrong too.
  headers.delete('content-length')
  headers.delete('content-md5')
  // A policy that allows only the inline styles it names (Astro's \`security.csp\`) must name ours.
  const hashes = [...(result.cspHash === null ? [] : [result.cspHash]), ...result.inlinedWhole.map((sheet) => sheet.cspHash)]
  for (const name of ['content-security-policy', 'content-security-policy-report-only']) {
    const policy = headers.get(name)
    if (policy !== null) headers.set(name, withStyleHashes(policy, hashes))
  }
  return new Response(result.html, { status: response.status, statusText: response.statusText, headers })
}
