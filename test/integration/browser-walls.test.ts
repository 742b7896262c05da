/**
 * The browser's walls (issue 29), in the real engine and Chromium, every server on 127.0.0.1:
 *
 * - One environment variable, PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK, used to make
 *   Playwright leave `<-loopback>` out of every proxy bypass list, so a page reached any
 *   loopback port without its gate. The engine now writes the bypass list itself: a page on an
 *   allowed loopback origin reaches no other loopback port, with the variable set or not.
 * - The check at launch: a context that lets loopback bypass its proxy is refused, and the
 *   error names the cause.
 * - Chromium's own requests: nothing but the page's own host reaches the gate during a launch
 *   and while a page with a form renders (autofill asks a Google server about forms).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { chromiumFlags, contextProxy, LOOPBACK_BYPASS } from '../../src/engine/flags.ts'
import { checkForcedThroughProxy, EgressWallBroken } from '../../src/engine/egress-wall.ts'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import type { Admit } from '../../src/engine/egress.ts'
import type { EngineError } from '../../src/engine/engine.ts'
import { createNetworkPolicy } from '../../src/service/network.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })

const ENV = 'PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK'
const DESKTOP = { width: 1300, height: 900 }
const OWN_CSS = 'h1{font-size:40px}'
const CANARY_CSS = 'h1{color:rgb(1, 2, 3)}'

/** Runs `run` with the variable set to `value` (unset for undefined), and puts it back as it was. */
async function withEnv<T>(value: string | undefined, run: () => Promise<T>): Promise<T> {
  const previous = process.env[ENV]
  if (value === undefined) delete process.env[ENV]
  else process.env[ENV] = value
  try {
    return await run()
  } finally {
    if (previous === undefined) delete process.env[ENV]
    else process.env[ENV] = previous
  }
}

/** A server that counts every connection and request it gets (TCP), and every datagram on a UDP port beside it. */
interface Canary {
  /** `http://127.0.0.1:PORT` */
  origin: string
  port: number
  udpPort: number
  /** Connections, requests and datagrams since the last call. */
  takeHits(): number
  close(): Promise<void>
}

async function startCanary(): Promise<Canary> {
  let hits = 0
  const server: Server = createServer((_req, res) => {
    hits++
    res.writeHead(200, { 'content-type': 'text/css', 'access-control-allow-origin': '*' }).end(CANARY_CSS)
  })
  server.on('connection', () => hits++)
  server.on('upgrade', (_req, socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const udp: UdpSocket = createSocket('udp4')
  udp.on('message', () => hits++)
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    udpPort: udp.address().port,
    takeHits() {
      const taken = hits
      hits = 0
      return taken
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      udp.close()
    },
  }
}

let canary: Canary
let site: StaticServer
/** An allowed origin that redirects every request to the canary. */
let hop: Server
let hopOrigin: string

const html = (head: string, body = '<h1>Walls</h1>') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="stylesheet" href="/site.css">${head}</head><body>${body}<img src="/slow.png" alt=""></body></html>`

beforeAll(async () => {
  canary = await startCanary()
  const inside = canary.origin
  const rtc = (urls: string) => `try{const pc=new RTCPeerConnection({iceServers:[{urls:${JSON.stringify(urls)},username:'u',credential:'c'}]});pc.createDataChannel('x');pc.createOffer().then((o)=>pc.setLocalDescription(o))}catch(e){}`
  site = await serveFiles({
    '/site.css': OWN_CSS,
    // Holds the load event back, so what the page starts on its own has time to try.
    '/slow.png': { body: '', status: 404, hold: () => sleep(700) },
    // Each way a page reaches another loopback port: a stylesheet, an import, an image, fetch, an iframe, a WebSocket, WebRTC (STUN over UDP, TURN over TCP).
    '/vectors.html': html(
      `<link rel="stylesheet" href="${inside}/c.css"><style>@import url(${JSON.stringify(`${inside}/i.css`)});</style>` +
        `<script>fetch(${JSON.stringify(`${inside}/f`)},{mode:'no-cors'}).catch(()=>{});new WebSocket(${JSON.stringify(`ws://127.0.0.1:${canary.port}/ws`)});` +
        `${rtc(`stun:127.0.0.1:${canary.udpPort}`)}${rtc(`turn:127.0.0.1:${canary.port}?transport=tcp`)}</script>`,
      `<h1>Walls</h1><img src="${inside}/i.png" alt=""><iframe src="${inside}/"></iframe>`,
    ),
    // Autofill asks content-autofill.googleapis.com about a form like this one as soon as it is parsed.
    '/form.html': html(
      '',
      '<h1>Sign up</h1><form action="/signup" method="post"><label>Name <input name="name" autocomplete="name"></label><label>Email <input type="email" name="email" autocomplete="email"></label>' +
        '<label>Address <input name="address" autocomplete="street-address"></label><label>Card <input name="cc" autocomplete="cc-number"></label><label>Password <input type="password" name="password"></label><button>Go</button></form>',
    ),
  })
  hop = createServer((_req, res) => res.writeHead(302, { location: `${canary.origin}/` }).end())
  await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve))
  hopOrigin = `http://127.0.0.1:${(hop.address() as AddressInfo).port}`
})

afterAll(async () => {
  hop?.closeAllConnections()
  hop?.close()
  await Promise.all([canary?.close(), site?.close()])
})

/** The service's network policy with only the site (and the redirecting host) allowed: loopback is refused, they (on loopback) are not. */
function siteOnlyPolicy(asked?: string[]): Admit {
  const policy = createNetworkPolicy({ allowPrivateNetworks: false, allowOrigins: [site.origin, hopOrigin], resolve: async () => [] })
  return (host, port, schemes) => {
    asked?.push(`${host}:${port}`)
    return policy.admit(host, port, schemes)
  }
}

function render(engine: ChromiumEngine, path: string): Promise<string> {
  return engine.generate({ url: `${site.origin}${path}`, viewports: [DESKTOP], signal: AbortSignal.timeout(20_000) }).then((result) => result.css)
}

describe.skipIf(!findChromium())('the browser’s walls: loopback stays behind the gate whatever the environment says', () => {
  let engine: ChromiumEngine | undefined
  afterEach(async () => {
    await engine?.close()
    engine = undefined
  })

  for (const value of ['1', undefined]) {
    it(`${value ? 'with' : 'without'} ${ENV}: the engine starts, and a page reaches no other loopback port by any way (stylesheet, import, image, fetch, iframe, WebSocket, WebRTC, a 302)`, async () => {
      await withEnv(value, async () => {
        engine = createChromiumEngine({ admit: siteOnlyPolicy() })
        await engine.ready()
        canary.takeHits()
        const css = await render(engine, '/vectors.html')
        expect(css).toContain('h1{font-size:40px}')
        expect(css).not.toContain('rgb(1, 2, 3)')
        // What a page started may land a moment after its job ends.
        await sleep(300)
        expect(canary.takeHits()).toBe(0)
        // An allowed page that answers 302 to the canary: the page itself lands on a refused address.
        const error = await engine.generate({ url: `${hopOrigin}/`, viewports: [DESKTOP], signal: AbortSignal.timeout(20_000) }).catch((caught: unknown) => caught)
        expect((error as EngineError).code).toBe('blocked_url')
        await sleep(300)
        expect(canary.takeHits()).toBe(0)
      })
    })
  }

  it(`the check at launch refuses a context that lets loopback bypass its proxy, and names ${ENV} when it is the cause`, async () => {
    const executablePath = findChromium()!
    const browser: Browser = await chromium.launch({ executablePath, headless: true, args: chromiumFlags() })
    const proxy = await startRecordingProxy()
    try {
      const closed = { server: proxy.server, asked: proxy.asked }
      // As the engine opens every context: held, whatever the environment says.
      await checkForcedThroughProxy(browser, closed)
      await withEnv('1', () => checkForcedThroughProxy(browser, closed))
      expect(contextProxy(proxy.server)).toEqual({ server: proxy.server, bypass: LOOPBACK_BYPASS })
      // As the engine opened them before (the proxy alone), under the variable: the canary is reached, and the variable named.
      const leaked = await withEnv('1', () => checkForcedThroughProxy(browser, closed, { server: proxy.server }).catch((caught: unknown) => caught))
      expect(leaked).toBeInstanceOf(EgressWallBroken)
      expect((leaked as Error).message).toMatch(/^The browser is not held to its egress gate: .* reached 127\.0\.0\.1:\d+ on loopback directly/)
      expect((leaked as Error).message).toContain(`${ENV} is set`)
      // A bypass list that names loopback, without the variable: refused too, saying what let it through.
      const bypassed = await withEnv(undefined, () => checkForcedThroughProxy(browser, closed, { server: proxy.server, bypass: '127.0.0.1' }).catch((caught: unknown) => caught))
      expect(bypassed).toBeInstanceOf(EgressWallBroken)
      expect((bypassed as Error).message).toContain('lets loopback bypass the proxy')
    } finally {
      await browser.close()
      await proxy.close()
    }
  })
})

/** A proxy that refuses everything and records the `host:port` of each request and tunnel. */
async function startRecordingProxy(answer?: (url: string) => string | null): Promise<{
  server: string
  hosts: string[]
  asked(authority: string): Promise<void>
  close(): Promise<void>
}> {
  const hosts: string[] = []
  const waiting = new Map<string, () => void>()
  const heard = (authority: string): void => {
    hosts.push(authority)
    waiting.get(authority)?.()
  }
  const server = createServer((req, res) => {
    const url = URL.canParse(req.url ?? '') ? new URL(req.url!) : null
    if (url) heard(`${url.hostname}:${url.port || 80}`)
    const body = url && answer?.(url.href)
    if (body) return void res.writeHead(200, { 'content-type': 'text/html' }).end(body)
    res.writeHead(403, { connection: 'close' }).end()
  })
  server.on('connect', (req, socket) => {
    heard(req.url ?? '')
    socket.on('error', () => socket.destroy())
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hosts,
    asked: (authority) => new Promise<void>((resolve) => waiting.set(authority, resolve)),
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

describe.skipIf(!findChromium())('the browser’s walls: Chromium’s own requests', () => {
  it('nothing but the page’s own host reaches the gate, during a launch and while a page with a form renders', async () => {
    const asked: string[] = []
    const engine = createChromiumEngine({ admit: siteOnlyPolicy(asked) })
    try {
      await engine.ready()
      // Chromium's requests at start go out within a second of it.
      await sleep(1500)
      const css = await render(engine, '/form.html')
      expect(css).toContain('h1{font-size:40px}')
      // Autofill's question goes out as the form is parsed, and again a second later.
      await sleep(1500)
      expect([...new Set(asked)]).toEqual([new URL(site.origin).host])
    } finally {
      await engine.close()
    }
  })

  it('the flags switch off what Chromium asks for by itself: the browser’s own proxy hears only the sign-in check no flag stops, a page’s context only its page', async () => {
    const own = await startRecordingProxy()
    const form = await fetch(`${site.origin}/form.html`).then((res) => res.text())
    const pages = await startRecordingProxy((url) => (url === 'http://site.test/' ? form : null))
    const executablePath = findChromium()!
    const server = await chromium.launchServer({ executablePath, headless: true, args: chromiumFlags(), proxy: { server: own.server, bypass: LOOPBACK_BYPASS } })
    try {
      const browser = await chromium.connect(server.wsEndpoint())
      await sleep(1500)
      const context = await browser.newContext({ proxy: contextProxy(pages.server) })
      await (await context.newPage()).goto('http://site.test/')
      await sleep(1500)
      // Chromium 156 asks accounts.google.com which accounts are signed in (ListAccounts) at each
      // start, and retries; no switch of it stops that (the feature Playwright enables against it,
      // SkipListAccountsWithoutGaiaCookies, is not in Chromium 156). The engine points the
      // browser's own connections at a proxy that lets nothing out, never at a gate.
      expect([...new Set(own.hosts)].filter((host) => host !== 'accounts.google.com:443')).toEqual([])
      expect([...new Set(pages.hosts)]).toEqual(['site.test:80'])

      // Chromium reads only the last --disable-features: ours must carry every feature Playwright's own list turns off.
      const cmdline = `/proc/${server.process().pid}/cmdline`
      if (existsSync(cmdline)) {
        const lists = readFileSync(cmdline, 'utf8')
          .split('\0')
          .filter((arg) => arg.startsWith('--disable-features='))
          .map((arg) => arg.slice('--disable-features='.length).split(','))
        expect(lists.length).toBeGreaterThanOrEqual(2)
        const effective = new Set(lists.at(-1))
        expect(lists.flat().filter((feature) => !effective.has(feature))).toEqual([])
      }
    } finally {
      await server.close()
      await Promise.all([own.close(), pages.close()])
    }
  })
})
