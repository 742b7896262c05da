/**
 * The static engine on fixture pages served from 127.0.0.1, no browser: it keeps the rules
 * whose selectors match an element of the page as a browser parses it (wherever it is), with
 * what they need, media queries held to the viewports, in cascade order and with URLs that
 * resolve once inlined; it fetches through the network policy, and refuses a page its scripts build.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { EngineError } from '../../src/engine/engine.ts'
import { SCRIPT_BUILT_PAGE, createStaticEngine, type StaticEngine } from '../../src/engine/static/static.ts'
import { createClient } from '../../src/client.ts'
import { createNetworkPolicy } from '../../src/service/network.ts'
import { startService } from '../../src/service/server.ts'
import { serveFiles, type ServedFile, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 })

const VIEWPORTS: Viewport[] = [
  { width: 1300, height: 900 },
  { width: 412, height: 915 },
]

const page = (head: string, body: string): string => `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${head}</head><body>${body}</body></html>`

const SITE_CSS = `
@import url("parts/buttons.css");
:root{--brand:#123;--unused:#f00;--gap:8px}
@font-face{font-family:"Used Sans";src:url(../fonts/used.woff2) format("woff2")}
@font-face{font-family:"Unused Serif";src:url(../fonts/unused.woff2)}
@keyframes spin{to{transform:rotate(1turn)}}
@keyframes never{to{opacity:0}}
body{margin:0;font-family:"Used Sans",sans-serif}
.hero{background:var(--brand) url(../img/hero.svg);transition:background .3s;cursor:pointer}
.spinner{animation:spin 1s infinite}
.brand:hover::after{content:"→"}
.deep .far-below{color:purple}
.nowhere{color:red}
template .inside,.only-in-template{color:red}
@media print{.hero{display:none}}
@media (min-width:1400px){.hero{height:80vh}}
@media (max-width:600px){.hero{height:50vh}}
@media (prefers-color-scheme:dark){.hero{background:#000}}
@supports (display:grid){.grid{display:grid;gap:var(--gap)}}
[data-theme=dark] .hero{background:#222}
table>tbody>tr>td{padding:2px}`

let site: StaticServer
let other: StaticServer
let engine: StaticEngine
const files: Record<string, string | ServedFile> = {}

function generate(path: string, options: { target?: StaticEngine; origin?: string; states?: string[]; thirdParty?: 'cut' | 'wait' | 'block' } = {}) {
  const target = options.target ?? engine
  return target.generate({
    url: `${options.origin ?? site.origin}${path}`,
    viewports: VIEWPORTS,
    signal: new AbortController().signal,
    tenant: 't',
    ...(options.thirdParty ? { thirdParty: options.thirdParty } : {}),
    ...(options.states ? { selection: { states: options.states } } : {}),
  })
}

beforeAll(async () => {
  site = await serveFiles(files)
  other = await serveFiles({ '/other.css': '.brand{color:teal}', '/hang.css': { body: '', hang: true } })
  Object.assign(files, {
    '/css/site.css': SITE_CSS,
    '/css/parts/buttons.css': '.button{border:1px solid}.button-unused{border:0}',
    '/index.html': page(
      '<link rel="stylesheet" href="css/site.css"><noscript><link rel="stylesheet" href="css/noscript.css"></noscript>',
      `<header class="hero"><a class="brand" href="#">Brand</a><span class="spinner"></span></header>
       <div class="grid"><button class="button">Go</button></div>
       <div class="deep"><div style="height:3000px"></div><p class="far-below">Far below</p></div>
       <table><tr><td>cell</td></tr></table>
       <template><p class="inside only-in-template">not in the document</p></template>`,
    ),
    '/css/noscript.css': '.hero{color:red}',
    '/app.html': page('<link rel="stylesheet" href="/css/site.css"><script type="module" src="/app.js"></script>', '<div id="app"></div>'),
    '/shell.html': page('<link rel="stylesheet" href="/css/site.css">', '<div id="app"><p class="hero">Loading…</p></div><script src="/app.js"></script>'),
    '/third.html': page(`<link rel="stylesheet" href="${other.origin.replace('127.0.0.1', 'localhost')}/other.css"><link rel="stylesheet" href="/css/site.css">`, '<a class="brand">b</a><div class="hero">h</div>'),
    '/silent.html': page(`<link rel="stylesheet" href="${other.origin.replace('127.0.0.1', 'localhost')}/hang.css"><link rel="stylesheet" href="/css/site.css">`, '<div class="hero">h</div>'),
    '/feed.xml': { body: '<rss/>', type: 'application/rss+xml' },
  })
  engine = createStaticEngine({ threads: 1 })
})

afterAll(async () => {
  await engine?.close()
  await site?.close()
  await other?.close()
})

describe('the static engine', () => {
  it('keeps the rules the page’s elements use, wherever they are, with what they need, in cascade order', async () => {
    const { css, engine: madeBy, network } = await generate('/index.html')
    expect(madeBy).toBe('static')
    expect(network).toEqual({ skippedHosts: [], unreadStylesheets: [] })
    // The import's rules come where the import was; the document's own rules after.
    expect(css.indexOf('.button{')).toBeGreaterThanOrEqual(0)
    expect(css.indexOf('.button{')).toBeLessThan(css.indexOf('body{'))
    expect(css).not.toContain('button-unused')
    // No fold: an element far below the first screen keeps its rules.
    expect(css).toContain('.deep .far-below{color:purple}')
    // A rule of a state, kept for its element; what never paints first is left out.
    expect(css).toContain('.brand:hover::after{content:"→"}')
    expect(css).not.toContain('transition')
    expect(css).not.toContain('cursor')
    expect(css).not.toContain('.nowhere')
    // As a browser parses the page: a table row sits in a tbody; a template's content and a noscript's links are not the document's.
    expect(css).toContain('table>tbody>tr>td{padding:2px}')
    expect(css).not.toContain('only-in-template')
    expect(site.requests).not.toContain('/css/noscript.css')
    expect(css).not.toContain('color:red')
  })

  it('keeps the custom properties, font faces and keyframes the kept rules use, and no others', async () => {
    const { css } = await generate('/index.html')
    expect(css).toContain('--brand:#123')
    expect(css).toContain('--gap:8px')
    expect(css).not.toContain('--unused')
    expect(css).toContain('font-family:"Used Sans"')
    expect(css).not.toContain('Unused Serif')
    expect(css).toContain('@keyframes spin')
    expect(css).not.toContain('@keyframes never')
  })

  it('holds media queries to the viewports, keeps what a visitor may prefer, and keeps the wrappers', async () => {
    const { css } = await generate('/index.html')
    expect(css).not.toContain('@media print')
    expect(css).not.toContain('min-width:1400px')
    expect(css).toContain('@media (max-width:600px){.hero{height:50vh}}')
    expect(css).toContain('@media (prefers-color-scheme:dark){.hero{background:#000}}')
    expect(css).toContain('@supports (display:grid){.grid{display:grid;gap:var(--gap)}}')
  })

  it('writes every url() as it resolves from the page: same-origin root-relative', async () => {
    const { css } = await generate('/index.html')
    expect(css).toContain('url(/img/hero.svg)')
    expect(css).toContain('url(/fonts/used.woff2)')
  })

  it('reads the page in the states it is given, as a head script would set them', async () => {
    expect((await generate('/index.html')).css).not.toContain('[data-theme=dark]')
    expect((await generate('/index.html', { states: ['[data-theme=dark]'] })).css).toContain('[data-theme=dark] .hero{background:#222}')
  })

  it('gives the same bytes every time', async () => {
    const runs = await Promise.all([generate('/index.html'), generate('/index.html'), generate('/third.html'), generate('/index.html')])
    expect(new Set([runs[0]!.css, runs[1]!.css, runs[3]!.css]).size).toBe(1)
  })

  it('refuses a page whose body its scripts build, naming why; a shell with content of its own is read', async () => {
    const failure = await generate('/app.html').catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(EngineError)
    expect(failure).toMatchObject({ code: 'render_failed' })
    expect((failure as Error).message).toContain(SCRIPT_BUILT_PAGE)
    expect((await generate('/shell.html')).css).toContain('.hero{')
  })

  it('fetches another host’s stylesheet, and under third party block contacts only the page’s own host', async () => {
    const before = other.requests.length
    const wait = await generate('/third.html', { thirdParty: 'wait' })
    expect(wait.css).toContain('.brand{color:teal}')
    expect(other.requests.length).toBe(before + 1)
    const block = await generate('/third.html', { thirdParty: 'block' })
    expect(other.requests.length).toBe(before + 1)
    expect(block.css).not.toContain('teal')
    expect(block.network?.unreadStylesheets).toEqual([`${other.origin.replace('127.0.0.1', 'localhost')}/other.css`])
    expect(block.network?.skippedHosts.map((skipped) => skipped.host)).toEqual([other.origin.replace('http://127.0.0.1', 'localhost')])
  })

  it('goes on without another host that does not answer, and the tenant’s next page does not wait for it again', async () => {
    const first = await generate('/silent.html')
    expect(first.css).toContain('.hero{')
    expect(first.network?.unreadStylesheets).toEqual([`${other.origin.replace('127.0.0.1', 'localhost')}/hang.css`])
    const hangs = other.requests.filter((path) => path === '/hang.css').length
    const second = await generate('/silent.html')
    expect(second.network?.unreadStylesheets).toEqual(first.network?.unreadStylesheets)
    expect(other.requests.filter((path) => path === '/hang.css').length).toBe(hangs)
  })

  it('fails a page that is not there, or is not HTML, as the Chromium engine does', async () => {
    await expect(generate('/missing.html')).rejects.toMatchObject({ code: 'fetch_failed', message: 'The page answered HTTP 404.' })
    await expect(generate('/feed.xml')).rejects.toMatchObject({ code: 'render_failed', message: expect.stringContaining('not an HTML document') })
  })
})

/** `localhost` is loopback, as the system says: the policy refuses it, as an internal address. */
const LOOPBACK_NAMES = async (host: string): Promise<string[]> => (host === 'localhost' ? ['127.0.0.1'] : [])

describe('the static engine behind a network policy', () => {
  it('fetches nothing the policy refuses: a refused stylesheet is left unread, a page redirected to a refused host is blocked_url', async () => {
    const policy = createNetworkPolicy({ allowPrivateNetworks: false, allowOrigins: [site.origin], resolve: LOOPBACK_NAMES })
    const guarded = createStaticEngine({ threads: 1, admit: (host, port, schemes) => policy.admit(host, port, schemes) })
    // A page on an allowed origin that sends its visitors on to a host the policy refuses.
    const redirecting = createServer((_req, res) => res.writeHead(302, { location: `${other.origin}/other.css` }).end())
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    const redirectOrigin = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`
    const allowed = createNetworkPolicy({ allowPrivateNetworks: false, allowOrigins: [redirectOrigin], resolve: LOOPBACK_NAMES })
    const redirected = createStaticEngine({ threads: 1, admit: (host, port, schemes) => allowed.admit(host, port, schemes) })
    try {
      const before = other.requests.length
      const third = await guarded.generate({ url: `${site.origin}/third.html`, viewports: VIEWPORTS, signal: new AbortController().signal, thirdParty: 'wait' })
      expect(third.css).toContain('.hero{')
      expect(third.css).not.toContain('teal')
      expect(third.network?.unreadStylesheets).toEqual([`${other.origin.replace('127.0.0.1', 'localhost')}/other.css`])
      expect(third.network?.skippedHosts).toEqual([{ host: other.origin.replace('http://127.0.0.1', 'localhost'), reason: expect.stringMatching(/internal|private|loopback/i) }])
      await expect(redirected.generate({ url: `${redirectOrigin}/`, viewports: VIEWPORTS, signal: new AbortController().signal })).rejects.toMatchObject({
        code: 'blocked_url',
        message: expect.stringContaining('The page redirected to an address the service does not fetch'),
      })
      expect(other.requests.length).toBe(before)
    } finally {
      await guarded.close()
      await redirected.close()
      redirecting.close()
    }
  })
})

describe('the service on the static engine', () => {
  it('critical-css-service --engine static: a job through the project client is done, its CSS the engine’s, its job data saying static', async () => {
    const token = 'tok_static_service_0123456789'
    const service = await startService({ tokens: [{ token, plan: 'ent' }], engine: 'static', allowPrivateNetworks: true, workers: 1, shutdownGraceMs: 500 })
    const client = createClient({ baseUrl: service.url, token })
    try {
      const job = await client.generate(`${site.origin}/index.html`, { viewports: VIEWPORTS })
      const data = await client.waitForCss(job, { deadline: Date.now() + 25_000 })
      expect(data).toMatchObject({ status: 'done', engine: 'static' })
      expect(data.css).toContain('.far-below{')
      expect(data.css).not.toContain('.nowhere')
      // A page its scripts build fails with the reason, as a job of the Chromium engine fails.
      const app = await client.waitForCss(await client.generate(`${site.origin}/app.html`, { viewports: VIEWPORTS }), { deadline: Date.now() + 25_000 }).catch((error: unknown) => error)
      expect(app).toMatchObject({ message: expect.stringContaining(SCRIPT_BUILT_PAGE) })
    } finally {
      await client.close()
      await service.close()
    }
  })
})
