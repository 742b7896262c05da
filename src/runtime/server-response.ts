/**
 * A server's `Response` with its route's critical CSS (Astro's middleware, anything with
 * WHATWG responses). A streamed page stays streamed: only the head (through `</head>`) is
 * read and edited, and the rest of the body passes on as it comes, byte for byte; a page with
 * no head end is read whole. A 200 HTML answer the manifest does not cover is given back with
 * its own bytes.
 */
import { inlineRoute, type ApplyOptions } from './apply.ts'
import { policyNonce, withStyleHashes } from './csp.ts'
import type { LoadedManifest } from './manifest.ts'

/** A head longer than this is no page's head: the page is read whole. */
const MAX_HEAD_CHARS = 1 << 20
const HEAD_END = /<\/head\s*>/gi
const UTF8 = new TextEncoder()
const POLICY_HEADERS = ['content-security-policy', 'content-security-policy-report-only']

type Reader = ReadableStreamDefaultReader<Uint8Array>

/** `first`, then what is left of `reader`, as one body. */
function joined(first: Uint8Array[], reader: Reader | null): ReadableStream<Uint8Array> {
  const queue = [...first]
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = queue.shift()
      if (next !== undefined) return controller.enqueue(next)
      const read = reader === null ? { done: true as const } : await reader.read()
      if (read.done) controller.close()
      else controller.enqueue(read.value)
    },
    cancel: (reason) => reader?.cancel(reason),
  })
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

export async function withCriticalCss(response: Response, url: string | URL, manifest: LoadedManifest | null, options: ApplyOptions = {}): Promise<Response> {
  // A route's error page is another page than the one its CSS was measured on.
  if (manifest === null || response.status !== 200 || !/^text\/html\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) return response
  const reader: Reader = response.body.getReader()
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const received: Uint8Array[] = []
  let text = ''
  let headEnd = -1
  let ended = false
  try {
    // Up to the head's end tag, or the whole page when it has none.
    while (headEnd === -1 && text.length <= MAX_HEAD_CHARS) {
      const read = await reader.read()
      if (read.done) {
        text += decoder.decode()
        ended = true
        break
      }
      received.push(read.value)
      HEAD_END.lastIndex = Math.max(0, text.length - 8)
      text += decoder.decode(read.value, { stream: true })
      const found = HEAD_END.exec(text)
      if (found !== null) headEnd = found.index + found[0].length
    }
    // No head end: the whole page, to be read as a page with an implied one.
    const whole = headEnd === -1
    if (whole && !ended) {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        received.push(read.value)
        text += decoder.decode(read.value, { stream: true })
      }
      text += decoder.decode()
      ended = true
    }
    const part = whole ? text : text.slice(0, headEnd)
    const policies = POLICY_HEADERS.map((name) => response.headers.get(name)).filter((policy) => policy !== null)
    // The nonce the server put on its own tags this time, unless the caller gave one.
    const nonce = options.nonce ?? policies.map(policyNonce).find((found) => found !== undefined)
    const result = inlineRoute(part, url, manifest, nonce === undefined ? options : { ...options, nonce })
    if (result === null) return new Response(joined(received, ended ? null : reader), response)
    const headers = new Headers(response.headers)
    // The body is longer now; a digest of the old one would be wrong too.
    headers.delete('content-length')
    headers.delete('content-md5')
    // A policy that allows only the inline styles it names (Astro's `security.csp`) must name ours.
    for (const name of POLICY_HEADERS) {
      const policy = headers.get(name)
      if (policy !== null) headers.set(name, withStyleHashes(policy, result.hashes))
    }
    // What follows the part goes on as the server sent it: the bytes after its own, not text encoded again.
    const after = concat(received).subarray(Buffer.byteLength(part))
    return new Response(joined([UTF8.encode(result.html), after], ended ? null : reader), { status: response.status, statusText: response.statusText, headers })
  } catch (error) {
    // Not UTF-8: not a page the inliner reads; it goes on as it is.
    if (!(error instanceof TypeError)) throw error
    return new Response(joined(received, ended ? null : reader), response)
  }
}
