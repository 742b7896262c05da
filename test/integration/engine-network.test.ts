/**
 * The Chromium engine on a hostile network, all of it on loopback: a host that takes the
 * connection and never answers (plain http, and https through a tunnel), a host that answers
 * after 5 s, a name whose DNS answer never comes (a UDP server that swallows every query),
 * and a page whose own stylesheet is slow. A third-party host never decides a page's fate:
 * the job is done, with the CSS of the page without that host, and says what it went without.
 * Each job is given an abort signal well short of the engine's own bounds: finishing with
 * CSS means it did not wait for the host.
 */
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { ThirdPartyPolicy } from '../../src/contract/api-contract.ts'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import type { Admit } from '../../src/engine/egress.ts'
import type { EngineResult } from '../../src/engine/engine.ts'
import { hostResolver } from '../../src/engine/resolve.ts'
import { startDnsServer, type DnsServer } from '../fixtures/dns-server.ts'
import { startSilentHost, type SilentHost } from '../fixtures/silent-host.ts'
import { serveFiles, type ServedFile, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })

const DESKTOP = { width: 1300, height: 900 }
/** Past any bound the engine sets itself: a job that is not cut short by the engine runs into the test's signal instead. */
const PATIENT = { loadTimeoutMs: 120_000, fontsTimeoutMs: 120_000, navigationTimeoutMs: 120_000 }
/** The test's own end for a job: well past the third-party bound (1 s), well short of 120 s. */
const JOB_MS = 8000

const OWN_CSS = '.hero{height:300px;background:#123}.title{font:32px/1.2 serif;color:#fff}.below{margin-top:2000px;color:red}'
const page = (head: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="stylesheet" href="/own.css">${head}</head><body><section class="hero"><h1 class="title">Title</h1></section><p class="below">Below</p></body></html>`

let site: StaticServer
let slow: StaticServer
let silent: SilentHost
/** A DNS server that receives every query for `lost.test` and answers none: a name whose answer is lost. */
let dns: DnsServer
let engine: ChromiumEngine
/** Names of the test's own: `lost.test` asks the silent DNS server; every IP literal is itself. */
let admit: Admit

const files: Record<string, string | ServedFile> = {}

beforeAll(async () => {
  silent = await startSilentHost()
  dns = await startDnsServer({ 'lost.test': { addresses: ['127.0.0.1'], lost: Infinity } })
  slow = await serveFiles({ '/late.css': { body: '.title{color:gold}', hold: () => sleep(5000) }, '/late.js': { body: '', hold: () => sleep(5000) } })
  const hang = `http://127.0.0.1:${silent.port}`
  const hangTls = `https://127.0.0.1:${silent.port}`
  Object.assign(files, {
    '/own.css': OWN_CSS,
    '/plain.html': page(''),
    '/head-script.html': page(`<script src="${hangTls}/lib.js"></script>`),
    '/head-stylesheet.html': page(`<link rel="stylesheet" href="${hang}/theme.css">`),
    '/font.html': page(`<style>@font-face{font-family:Far;src:url(${hang}/far.woff2)}.title{font-family:Far,serif}</style>`),
    '/async-script.html': page(`<script async src="${hangTls}/tag.js"></script>`),
    // An image above the fold whose host never answers: the document never finishes loading.
    '/image.html': page('').replace('</h1>', `</h1><img src="${hang}/cover.jpg" width="600" height="300" alt="">`),
    '/late-host.html': page(`<link rel="stylesheet" href="${slow.origin}/late.css"><script src="${slow.origin}/late.js"></script>`),
    '/lost-name.html': page(`<script src="http://lost.test:${silent.port}/lib.js"></script>`),
    '/slow-own.html': page('<link rel="stylesheet" href="/slow-own.css">'),
    '/slow-own.css': { body: '.title{letter-spacing:2px}', hold: () => sleep(2500) },
  })
  site = await serveFiles(files)
  // The engine's own resolver, asking the silent server: its attempts are bounded, the job's cut comes first.
  const resolve = hostResolver({ servers: [dns.server] })
  admit = async (host) => (/^[\d.]+$/.test(host) ? { addresses: [host] } : { addresses: await resolve(host) })
  engine = createChromiumEngine({ ...PATIENT, admit })
  // Launched before any job: a job's own end (JOB_MS) is for its page, not for starting a browser on a busy machine.
  await engine.ready()
})

afterAll(async () => {
  await engine?.close()
  await Promise.all([site?.close(), slow?.close(), silent?.close(), dns?.close()])
})

/** Renders a page of the site; `head`: a page made for the call, with this in its head (its path is then the page's name only). */
function render(path: string, thirdParty?: ThirdPartyPolicy, target: ChromiumEngine = engine, head?: string): Promise<EngineResult> {
  if (head !== undefined) files[path.split('?')[0]!] = page(head)
  return target.generate({
    url: `${site.origin}${path}`,
    viewports: [DESKTOP],
    signal: AbortSignal.timeout(JOB_MS),
    deadline: Date.now() + 120_000,
    ...(thirdParty ? { thirdParty } : {}),
  })
}

describe.skipIf(!findChromium())('Chromium engine: a third-party host never decides a page’s fate', () => {
  it('a head script, a head stylesheet, a font or an async script of a host that never answers: done, with the CSS of the page without it, and the host named', async () => {
    const plain = await render('/plain.html')
    expect(plain.css).toContain('.hero{height:300px;background:#123}')
    expect(plain.network).toEqual({ skippedHosts: [], unreadStylesheets: [] })
    const host = `127.0.0.1:${silent.port}`
    for (const path of ['/head-script.html', '/head-stylesheet.html', '/async-script.html']) {
      const held = await render(path).catch((error: unknown) => Promise.reject(new Error(`${path}: ${String(error)}`)))
      expect({ path, css: held.css }).toEqual({ path, css: plain.css })
      expect({ path, hosts: held.network?.skippedHosts }).toEqual({ path, hosts: [{ host, reason: 'no answer within 1.0 s' }] })
    }
    // Nothing waits on a document that never finishes loading (fonts.ready waits for its load too): the CSS is the page's.
    expect((await render('/image.html').catch((error: unknown) => Promise.reject(new Error(`/image.html: ${String(error)}`)))).css).toBe(plain.css)
    // The stylesheet that never came is not in the CSS, so the page's link to it must stay as it is.
    expect((await render('/head-stylesheet.html')).network?.unreadStylesheets).toEqual([`http://${host}/theme.css`])
    const font = await render('/font.html')
    expect(font.css).toContain('.title{font-family:Far,serif}')
    expect(font.css).toContain(`@font-face{font-family:Far;src:url(http://${host}/far.woff2)}`)
    expect(font.network?.skippedHosts.map((skipped) => skipped.host)).toEqual([host])
  })

  it('a host that answers after 5 s is cut as well; told to wait, the page waits for it and keeps its rules', async () => {
    const cut = await render('/late-host.html')
    expect(cut.css).toBe((await render('/plain.html')).css)
    expect(cut.network?.unreadStylesheets).toEqual([`${slow.origin}/late.css`])
    const waited = await render('/late-host.html', 'wait')
    expect(waited.css).toContain('.title{color:gold}')
    expect(waited.network).toEqual({ skippedHosts: [], unreadStylesheets: [] })
  })

  it('a name whose DNS answer never comes costs the same bound, and the gate asked the DNS server for it', async () => {
    const before = dns.queries()
    const lost = await render('/lost-name.html')
    expect(lost.css).toBe((await render('/plain.html')).css)
    expect(lost.network?.skippedHosts).toEqual([{ host: `lost.test:${silent.port}`, reason: 'no answer within 1.0 s' }])
    expect(dns.queries()).toBeGreaterThan(before)
  })

  it('the engine’s resolver gives up on a DNS server that never answers, after its bounded attempts, saying so', async () => {
    const before = dns.queries()
    const error = await hostResolver({ servers: [dns.server] })('lost.test').catch((caught: unknown) => caught)
    expect((error as NodeJS.ErrnoException).code).toBe('ETIMEOUT')
    // Asked again after each lost answer, for both address families.
    expect(dns.queries() - before).toBeGreaterThanOrEqual(4)
  })

  it('a tenant’s next pages go on at once without a host that left an earlier page unanswered; another tenant’s page still waits for it', async () => {
    const host = `127.0.0.1:${silent.port}`
    const renderAs = (tenant: string, path: string): Promise<EngineResult> =>
      engine.generate({ url: `${site.origin}${path}`, viewports: [DESKTOP], signal: AbortSignal.timeout(JOB_MS), deadline: Date.now() + 120_000, tenant })
    const first = await renderAs('alice', '/head-script.html?first')
    expect(first.network?.skippedHosts).toEqual([{ host, reason: 'no answer within 1.0 s' }])
    const reached = silent.connections()
    // Another page of the site with the same script, and a page of another site of the tenant's whose stylesheet is there.
    const next = await renderAs('alice', '/head-script.html?next')
    const sheet = await renderAs('alice', '/head-stylesheet.html')
    expect(silent.connections()).toBe(reached)
    expect(next.css).toBe(first.css)
    expect(next.network?.skippedHosts).toEqual([{ host, reason: 'no answer on an earlier page' }])
    expect(sheet.css).toBe(first.css)
    expect(sheet.network).toEqual({ skippedHosts: [{ host, reason: 'no answer on an earlier page' }], unreadStylesheets: [`http://${host}/theme.css`] })
    // What one tenant's pages met changes nothing for another's.
    const other = await renderAs('bob', '/head-script.html?other')
    expect(silent.connections()).toBeGreaterThan(reached)
    expect(other.network?.skippedHosts).toEqual([{ host, reason: 'no answer within 1.0 s' }])
    expect(other.css).toBe(first.css)
  })

  it('a host that answered one request and held another is slow, not silent: the tenant’s next page waits for it again and gets its stylesheet', async () => {
    const mixed = await serveFiles({ '/theme.css': '.title{color:teal}', '/never.js': { body: '', hang: true } })
    try {
      const host = mixed.origin.replace('http://', '')
      const head = `<link rel="stylesheet" href="${mixed.origin}/theme.css"><script src="${mixed.origin}/never.js"></script>`
      files['/mixed.html'] = page(head)
      const renderAs = (path: string): Promise<EngineResult> =>
        engine.generate({ url: `${site.origin}${path}`, viewports: [DESKTOP], signal: AbortSignal.timeout(JOB_MS), deadline: Date.now() + 120_000, tenant: 'carol' })
      const first = await renderAs('/mixed.html?first')
      expect(first.css).toContain('.title{color:teal}')
      expect(first.network?.skippedHosts).toEqual([{ host, reason: 'no answer within 1.0 s' }])
      const next = await renderAs('/mixed.html?next')
      expect(next.css).toBe(first.css)
      expect(next.network).toEqual(first.network)
      // Asked for by both pages (no-store): the second page was let out to the host.
      expect(mixed.requests.filter((path) => path === '/theme.css')).toHaveLength(2)
    } finally {
      await mixed.close()
    }
  })

  it('block: no other host is contacted at all, and the page is done with its own CSS', async () => {
    const before = silent.connections()
    const blocked = await render('/head-stylesheet.html', 'block')
    expect(blocked.css).toBe((await render('/plain.html')).css)
    expect(silent.connections()).toBe(before)
    expect(blocked.network?.skippedHosts).toEqual([{ host: `127.0.0.1:${silent.port}`, reason: 'only the page’s own hosts are contacted' }])
    expect(blocked.network?.unreadStylesheets).toEqual([`http://127.0.0.1:${silent.port}/theme.css`])
  })

  it('the page’s own stylesheet, slow to come, is waited for within the load bound: its rules are in', async () => {
    const own = await render('/slow-own.html')
    expect(own.css).toContain('.title{letter-spacing:2px}')
    expect(own.network).toEqual({ skippedHosts: [], unreadStylesheets: [] })
  })
})

describe.skipIf(!findChromium())('Chromium engine: same input, same bytes', () => {
  it('a page rendered cold, and on a warm page whose cache revalidates its stylesheet (304), gives the same CSS: the stylesheet’s own text', async () => {
    const text = '.hero{color:#222;margin:0;background:RED}.title{transform:translate(0,0)}'
    // An ETag and no-cache: the tenant's warm page asks again and is told 304, its body comes from the cache.
    const server = createHttpServer((req, res) => {
      if (req.url === '/kept.css') {
        if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304, { etag: '"v1"', 'cache-control': 'no-cache' }).end()
        return void res.writeHead(200, { 'content-type': 'text/css', etag: '"v1"', 'cache-control': 'no-cache' }).end(text)
      }
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(page('<link rel="stylesheet" href="/kept.css">'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const run = (path: string, tenant?: string): Promise<string> =>
        engine.generate({ url: `${origin}${path}`, viewports: [DESKTOP], signal: AbortSignal.timeout(JOB_MS), deadline: Date.now() + 120_000, ...(tenant ? { tenant } : {}) }).then((result) => result.css)
      const cold = await run('/a')
      expect(cold).toContain('.hero{color:#222;margin:0;background:RED}')
      for (const path of ['/a', '/b', '/c']) expect({ path, css: await run(path, 'tenant-warm') }).toEqual({ path, css: cold })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe.skipIf(!findChromium())('Chromium engine: DNS that drops answers', () => {
  it('a name whose first query gets no answer is asked again after a moment, not after the resolver’s attempts: its stylesheet is in, before the page’s third-party bound', async () => {
    const cdn = await serveFiles({ '/theme.css': '.title{color:teal}' })
    const port = new URL(cdn.origin).port
    // The first query of each type for late.test never gets an answer, however often it is sent again; another query is answered at once.
    const names = await startDnsServer({ 'late.test': { addresses: ['127.0.0.1'], lost: 1 }, 'cdn.test': { addresses: ['127.0.0.1'] } })
    const resolve = hostResolver({ servers: [names.server] })
    // Shorter than the resolver's attempts on one query (1 + 2 + 4 s): only another query, sent sooner, beats the bound.
    const quick = createChromiumEngine({ ...PATIENT, thirdPartyTimeoutMs: 3000, admit: async (host) => ({ addresses: /^[\d.]+$/.test(host) ? [host] : await resolve(host) }) })
    try {
      await quick.ready()
      const late = await render(`/dns.html?late`, undefined, quick, `<link rel="stylesheet" href="http://late.test:${port}/theme.css">`)
      expect(late.css).toContain('.title{color:teal}')
      expect(late.network).toEqual({ skippedHosts: [], unreadStylesheets: [] })
      expect(names.queries('late.test')).toBeGreaterThanOrEqual(3)

      // Pages of one site ask for the same hosts: the answer is kept for its TTL, and asked once.
      for (const n of [1, 2, 3]) expect((await render(`/dns.html?cdn${n}`, undefined, quick, `<link rel="stylesheet" href="http://cdn.test:${port}/theme.css">`)).css).toContain('.title{color:teal}')
      expect(names.queries('cdn.test')).toBe(2)
      // A name that does not exist is not asked again on every page either.
      for (const n of [1, 2]) await render(`/dns.html?none${n}`, undefined, quick, `<link rel="stylesheet" href="http://none.test:${port}/theme.css">`)
      expect(names.queries('none.test')).toBe(2)
    } finally {
      await quick.close()
      await Promise.all([cdn.close(), names.close()])
    }
  })
})
