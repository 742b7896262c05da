/**
 * withCriticalCss on streamed responses: the head is edited as soon as it has come, the rest
 * of the body passes on as the server sends it (nothing waits for it), byte for byte; what
 * the manifest does not cover keeps its own bytes however the chunks fall.
 */
import { describe, expect, it } from 'vitest'
import { applyCriticalCss, loadManifest, withCriticalCss, type CriticalCssManifest } from '../../src/runtime.ts'
import { manifestRoute } from '../fixtures/manifest-route.ts'

const CSS = '.hero{min-height:100vh}'
const HEAD = '<!doctype html><html><head><meta charset="utf-8"><title>Ünïcödé</title><link rel="stylesheet" href="/app.css"></head>'
const BODY = '<body><h1 class="hero">Grüße</h1><p>€ and 🎉</p></body></html>'
const manifest = (preload: CriticalCssManifest['preload']) => {
  const how = { preload, loaderSrc: '/loader.js' }
  return loadManifest({ version: 2, ...how, base: '/', routes: [manifestRoute('/posts/[slug]', HEAD + '<body><p>the sample</p></body></html>', CSS, how)] } satisfies CriticalCssManifest)
}

/** A body sent in `chunks`, each a byte range of the page (so a character may be split), the last ones only once `gate` opens. */
function streamed(page: string, cuts: number[], gateAt = Infinity): { response: Response; open: () => void } {
  const bytes = Buffer.from(page)
  const chunks = [0, ...cuts, bytes.length].slice(1).map((end, index, ends) => bytes.subarray(index === 0 ? 0 : ends[index - 1], end))
  let open = (): void => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= gateAt) await gate
      const chunk = chunks[sent++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(new Uint8Array(chunk))
    },
  })
  return { response: new Response(body, { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'content-length': String(bytes.length) } }), open }
}

async function text(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer())
}

describe('withCriticalCss on a streamed page', () => {
  it('sends the edited head before the rest of the body has come, then the rest as it was sent', async () => {
    const page = HEAD + BODY
    const { response, open } = streamed(page, [20, Buffer.byteLength(HEAD) + 5, Buffer.byteLength(HEAD) + 30], 2)
    const out = await withCriticalCss(response, '/posts/a', manifest('loader'))
    expect(out.headers.get('content-length')).toBeNull()
    const reader = out.body!.getReader()
    const first = Buffer.from((await reader.read()).value!).toString('utf8')
    // The body's first bytes were not sent yet: only the head, edited as the whole page would be.
    expect(first).toBe(applyCriticalCss(HEAD, '/posts/a', manifest('loader')))
    expect(first).toContain(`<style data-critical-css>${CSS}</style>`)
    open()
    const rest: Buffer[] = []
    for (let read = await reader.read(); !read.done; read = await reader.read()) rest.push(Buffer.from(read.value))
    expect(first + Buffer.concat(rest).toString('utf8')).toBe(applyCriticalCss(page, '/posts/a', manifest('loader')))
  })

  it('keeps every byte of what it does not cover, however the chunks split the characters', async () => {
    const page = HEAD.replace('/app.css', '/other.css') + BODY
    const length = Buffer.byteLength(page)
    for (const cut of [1, 60, 61, 62, Buffer.byteLength(HEAD) - 3, length - 5]) {
      const { response } = streamed(page, [cut])
      expect((await text(await withCriticalCss(response, '/posts/a', manifest('loader')))).equals(Buffer.from(page)), `cut at ${cut}`).toBe(true)
    }
    const latin1 = Buffer.concat([Buffer.from(HEAD), Buffer.from([0xe9, 0xff]), Buffer.from(BODY)])
    const { response } = streamed(latin1.toString('latin1'), [])
    expect((await text(await withCriticalCss(new Response(latin1, response), '/posts/a', manifest('loader')))).equals(latin1)).toBe(true)
  })

  it('passes a page through byte for byte, without waiting for its body, where its head is not one the runtime reads', async () => {
    const page = HEAD.replace('<title>', '<template><p>x</p></template><title>') + BODY
    const headBytes = Buffer.byteLength(page.slice(0, page.indexOf('</head>') + '</head>'.length))
    const { response, open } = streamed(page, [headBytes + 5, headBytes + 10], 1)
    const out = await withCriticalCss(response, '/posts/a', manifest('loader'))
    const reader = out.body!.getReader()
    // The head came and the body is held back: the answer is on its way all the same.
    expect(Buffer.from((await reader.read()).value!).equals(Buffer.from(page).subarray(0, headBytes + 5))).toBe(true)
    open()
    for (let read = await reader.read(); !read.done; read = await reader.read()) void read
    expect(applyCriticalCss(page, '/posts/a', manifest('loader'))).toBe(page)
  })
})

describe('withCriticalCss and the response’s Content-Security-Policy', () => {
  const page = HEAD + BODY
  const withPolicy = (policy: string): Response => new Response(page, { status: 200, headers: { 'content-type': 'text/html', 'content-security-policy': policy } })

  it('puts the nonce the server gave this response on the style and the loader script it adds', async () => {
    const out = (await text(await withCriticalCss(withPolicy("default-src 'self'; script-src 'strict-dynamic' 'nonce-r4nd0m'; style-src 'self' 'nonce-r4nd0m'"), '/posts/a', manifest('loader')))).toString('utf8')
    expect(out).toBe(applyCriticalCss(page, '/posts/a', manifest('loader'), { nonce: 'r4nd0m' }))
    expect(out).toContain('<style data-critical-css nonce="r4nd0m">')
    expect(out).toContain('<script src="/loader.js" async nonce="r4nd0m"></script>')
  })

  it('takes the script directive’s nonce where the style directive has none, and the caller’s over either', async () => {
    const policy = "script-src 'nonce-fromScript'; style-src 'self'"
    expect((await text(await withCriticalCss(withPolicy(policy), '/posts/a', manifest('loader')))).toString('utf8')).toBe(applyCriticalCss(page, '/posts/a', manifest('loader'), { nonce: 'fromScript' }))
    expect((await text(await withCriticalCss(withPolicy(policy), '/posts/a', manifest('loader'), { nonce: 'given' }))).toString('utf8')).toBe(applyCriticalCss(page, '/posts/a', manifest('loader'), { nonce: 'given' }))
  })

  it('adds no nonce where the policy names none', async () => {
    expect((await text(await withCriticalCss(withPolicy("default-src 'self'"), '/posts/a', manifest('loader')))).toString('utf8')).toBe(applyCriticalCss(page, '/posts/a', manifest('loader')))
  })
})
