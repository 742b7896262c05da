/**
 * What the static engine fetches for a job, the page and its stylesheets, through the job's
 * egress gate: every request, redirects included, is a connection the gate admits by the
 * network policy, exactly as a browser context's are. Redirects are followed here, a few at
 * most, each hop its own request through the gate; bodies are read up to a bound.
 */
import { ProxyAgent, request, type Dispatcher } from 'undici'

/** Redirects followed before a request is given up on (browsers allow 20; a page needs a few). */
const MAX_REDIRECTS = 10
const REDIRECT = new Set([301, 302, 303, 307, 308])
/** Headers a browser would send, so a server answers the page a visitor gets. */
const HEADERS = { accept: 'text/html,application/xhtml+xml,text/css,*/*;q=0.8', 'accept-encoding': 'identity', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) unplugin-critical-css static engine' }

export interface Fetched {
  /** Where the body came from, after redirects. */
  url: string
  /** Whether it came after a redirect. */
  redirected: boolean
  status: number
  contentType: string | undefined
  /** What a cache may do with it (`cache-control`, `age`). */
  cacheControl: string | undefined
  age: string | undefined
  body: Buffer
}

/** Why a fetch ended without a body: `status` (an answer, not 2xx), `over` (past the byte bound), `failed` (no answer: refused, unreachable, cut, timed out). */
export class FetchFailed extends Error {
  override name = 'FetchFailed'
  constructor(
    readonly kind: 'status' | 'over' | 'failed',
    readonly url: string,
    message: string,
    /** The hops taken, the last one the URL that failed. */
    readonly hops: readonly string[],
  ) {
    super(message)
  }
}

/** One job's way out: requests through its egress gate (`proxy`, the gate's address), closed with the job. */
export class GateFetcher {
  readonly #agent: Dispatcher

  constructor(proxy: string) {
    // Plain http goes to the gate as a proxied request, https as a tunnel: the gate sees every host either way.
    this.#agent = new ProxyAgent({ uri: proxy, proxyTunnel: false, connections: 8 })
  }

  /** `url`'s body after redirects, within `signal` and `maxBytes`; a non-2xx answer or no answer throws FetchFailed. */
  async get(url: string, options: { signal: AbortSignal; maxBytes: number }): Promise<Fetched> {
    const hops: string[] = []
    let current = url
    for (;;) {
      hops.push(current)
      let answer: Dispatcher.ResponseData
      try {
        answer = await request(current, { dispatcher: this.#agent, method: 'GET', headers: HEADERS, signal: options.signal })
      } catch (error) {
        options.signal.throwIfAborted()
        throw new FetchFailed('failed', current, error instanceof Error ? error.message : String(error), hops)
      }
      const location = headerOf(answer.headers, 'location')
      if (REDIRECT.has(answer.statusCode) && location !== undefined && URL.canParse(location, current)) {
        await answer.body.dump().catch(() => {})
        const next = new URL(location, current)
        if (hops.length > MAX_REDIRECTS || (next.protocol !== 'http:' && next.protocol !== 'https:')) throw new FetchFailed('failed', next.href, `too many redirects, or a redirect to ${next.protocol}`, hops)
        next.hash = ''
        current = next.href
        continue
      }
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        await answer.body.dump().catch(() => {})
        throw new FetchFailed('status', current, `HTTP ${answer.statusCode}`, hops)
      }
      const body = await bounded(answer.body, options.maxBytes, current, hops)
      return {
        url: current,
        redirected: hops.length > 1,
        status: answer.statusCode,
        contentType: headerOf(answer.headers, 'content-type'),
        cacheControl: headerOf(answer.headers, 'cache-control'),
        age: headerOf(answer.headers, 'age'),
        body,
      }
    }
  }

  close(): void {
    void this.#agent.close().catch(() => {})
  }
}

function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

async function bounded(body: Dispatcher.ResponseData['body'], maxBytes: number, url: string, hops: string[]): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length
      if (size > maxBytes) {
        body.destroy()
        throw new FetchFailed('over', url, `more than ${maxBytes} bytes`, hops)
      }
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof FetchFailed) throw error
    throw new FetchFailed('failed', url, error instanceof Error ? error.message : String(error), hops)
  }
  return Buffer.concat(chunks, size)
}

const CHARSET = /charset\s*=\s*["']?([\w.:-]+)/i
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i

/**
 * A body as text, as a browser decodes it: a byte order mark, else the header's charset, else
 * (an HTML page) a `<meta charset>` in its first 1024 bytes, else UTF-8.
 */
export function decodeBody(fetched: Fetched, html: boolean): string {
  const { body } = fetched
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return new TextDecoder('utf-8').decode(body)
  if (body[0] === 0xfe && body[1] === 0xff) return new TextDecoder('utf-16be').decode(body)
  if (body[0] === 0xff && body[1] === 0xfe) return new TextDecoder('utf-16le').decode(body)
  const label = CHARSET.exec(fetched.contentType ?? '')?.[1] ?? (html ? META_CHARSET.exec(body.subarray(0, 1024).toString('latin1'))?.[1] : undefined)
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}
