/**
 * The service's walls between tenants and around what a page can do (issue 29), through the
 * real service and Chromium on loopback, read back through the API as a client would:
 * no tenant's stylesheet bytes in another's result, whatever cookies and validators say, and
 * pages that misbehave fail as the page's doing (`render_failed`), never `internal`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { startService, type RunningService } from '../../src/service/server.ts'

const ALICE = 'tok_walls_alice_0123456789abcdef'
const BOB = 'tok_walls_bob_0123456789abcdefgh'
const MALLORY = 'tok_walls_mallory_0123456789abcd'

interface Job {
  status: string
  css: string | null
  error: { code: string; message: string } | null
}

/**
 * A site whose stylesheet depends on a cookie and always carries the same validators, as a
 * themed or per-user sheet behind a CDN often does. `/as/<who>` sets the cookie and shows the
 * page; `/page` shows it as whoever the browser is.
 */
function themedCss(cookie: string | undefined): string {
  const who = /(?:^|;\s*)who=([A-Za-z]+)/.exec(cookie ?? '')?.[1]
  if (who === 'POISON') return '*{display:none}\n'
  return who ? `.leak-${who}{color:#900}\n` : '.leak-none{color:#090}\n'
}

const page = (title: string) =>
  `<!doctype html><html><head><title>${title}</title><link rel="stylesheet" href="/themed.css"></head>` +
  `<body><h1 class="leak-AAAAAAAA leak-POISON leak-none">${title}</h1></body></html>`

const XML_FEED = '<?xml version="1.0"?><?xml-stylesheet type="text/css" href="/feed.css"?><rss><channel><title>Feed</title></channel></rss>'
const XSLT_FEED = '<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/feed.xsl"?><rss><channel><title>Feed</title></channel></rss>'
const XSL =
  '<?xml version="1.0"?><xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:template match="/">' +
  '<html><head><link rel="stylesheet" href="/feed.css"/></head><body><h1><xsl:value-of select="rss/channel/title"/></h1></body></html></xsl:template></xsl:stylesheet>'
/**
 * Asks to move on as soon as it is resized (while the second viewport is measured), to `to`. To
 * a page that never answers, every read after that still reaches this document; to one that
 * answers at once, a read may meet the next one. Either way the page moved on while it was
 * measured, and render_failed is the one right answer on any machine.
 */
const restless = (to: string): string => `<!doctype html><html><head><link rel="stylesheet" href="/feed.css"></head><body><h1>Restless</h1>
<script>addEventListener('resize', () => { location.href = '${to}?' + Math.random() })</script></body></html>`

describe.skipIf(!findChromium())('the service’s walls, in Chromium', () => {
  let site: Server
  let origin: string
  let service: RunningService

  beforeAll(async () => {
    site = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      const send = (type: string, body: string, headers: Record<string, string> = {}) => void res.writeHead(200, { 'content-type': type, ...headers }).end(body)
      const who = /^\/as\/([A-Za-z]+)$/.exec(path)?.[1]
      if (who) return send('text/html; charset=utf-8', page(`as ${who}`), { 'set-cookie': `who=${who}; Path=/` })
      if (path === '/page') return send('text/html; charset=utf-8', page('anyone'))
      // The same ETag and Last-Modified whoever asks: only the cookie decides the body.
      if (path === '/themed.css') return send('text/css; charset=utf-8', themedCss(req.headers.cookie), { etag: '"themed-v1"', 'last-modified': 'Wed, 25 Nov 2026 10:00:00 GMT', 'cache-control': 'no-cache' })
      if (path === '/feed.xml') return send('application/xml', XML_FEED)
      if (path === '/feed-xslt.xml') return send('text/xml', XSLT_FEED)
      if (path === '/feed.xsl') return send('text/xsl', XSL)
      if (path === '/feed.css') return send('text/css', 'rss,h1{display:block;color:#123}\n')
      if (path === '/restless') return send('text/html; charset=utf-8', restless('/held'))
      if (path === '/restless-to-page') return send('text/html; charset=utf-8', restless('/page'))
      // Never answered: closeAllConnections ends it with the test.
      if (path === '/held') return
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
    // One worker: jobs run one after another, in the order given.
    service = await startService({
      tokens: [ALICE, BOB, MALLORY].map((token) => ({ token, plan: 'ent' as const })),
      workers: 1,
      allowOrigins: [origin],
      shutdownGraceMs: 500,
      log: () => {},
    })
  }, 60_000)

  afterAll(async () => {
    await service?.close()
    site?.closeAllConnections()
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()))
  })

  async function render(token: string, path: string): Promise<Job> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const started = await fetch(`${service.url}/api/critical-css/generate`, { method: 'POST', headers, body: JSON.stringify({ url: origin + path }) })
    expect(started.status).toBe(202)
    const { id } = (await started.json()) as { id: string }
    for (;;) {
      const job = (await (await fetch(`${service.url}/api/critical-css/job/${id}/data`, { headers })).json()) as Job
      if (job.status === 'done' || job.status === 'failed') return job
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('a tenant gets the stylesheet bytes its own browser received, never another tenant’s under the same validators', async () => {
    const alice = await render(ALICE, '/as/AAAAAAAA')
    expect(alice.css).toContain('.leak-AAAAAAAA')
    const bob = await render(BOB, '/page')
    expect(bob).toMatchObject({ status: 'done', error: null })
    expect(bob.css).toContain('.leak-none')
    expect(bob.css).not.toContain('AAAAAAAA')
  }, 60_000)

  it('a tenant cannot poison another’s result: a cookie set by one token changes nothing in another token’s CSS', async () => {
    const mallory = await render(MALLORY, '/as/POISON')
    expect(mallory.css).toContain('display:none')
    const bob = await render(BOB, '/page')
    expect(bob.css).toContain('.leak-none')
    expect(bob.css).not.toContain('display:none')
  }, 60_000)

  it('pages that are not HTML, or that move on while they are measured, fail render_failed, saying why, never internal', async () => {
    const failures = {
      xml: await render(ALICE, '/feed.xml'),
      xslt: await render(ALICE, '/feed-xslt.xml'),
      restless: await render(ALICE, '/restless'),
      restlessToPage: await render(ALICE, '/restless-to-page'),
    }
    expect(failures).toEqual({
      xml: { ...failures.xml, status: 'failed', error: { code: 'render_failed', message: 'The page is not an HTML document (it is application/xml); critical CSS is inlined into HTML pages only.' } },
      xslt: { ...failures.xslt, status: 'failed', error: { code: 'render_failed', message: 'The page is not an HTML document (it is text/xml); critical CSS is inlined into HTML pages only.' } },
      restless: {
        ...failures.restless,
        status: 'failed',
        error: { code: 'render_failed', message: 'The page navigated away by itself while it was being measured (a script or a refresh moved it on); its first screen is not known.' },
      },
      restlessToPage: {
        ...failures.restlessToPage,
        status: 'failed',
        error: { code: 'render_failed', message: 'The page navigated away by itself while it was being measured (a script or a refresh moved it on); its first screen is not known.' },
      },
    })
  }, 120_000)
})
