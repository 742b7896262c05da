/// <reference lib="dom" />
/**
 * The inliner's output in a real Chromium: with the stylesheet held back (at least 2 s, and
 * until the test has seen the first paint), the page paints with the critical style and
 * ends with the full stylesheet; with `loader` the page's module script runs while the
 * stylesheet is still held (with `body` it waits for it); under a strict CSP the `loader`
 * and `body` strategies with a nonce, or the reported hash, raise no violation.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import type { PreloadStrategy } from '../../src/html/strategies.ts'
import { LOADER_FILE, LOADER_SCRIPT } from '../../src/html/loader.ts'
import { launchChromium } from '../fixtures/browser.ts'

const CRITICAL = 'h1{color:rgb(200, 0, 0);font:32px sans-serif}'
const FULL = 'h1{color:rgb(200, 0, 0);font:32px sans-serif}.below{color:rgb(0, 0, 200)}'
const PAGE = `<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>critical</title>
  <link rel="stylesheet" href="/full.css?RUN">
  APP
</head>
<body>
  <h1>Above the fold</h1>
  <p class="below">Further down</p>
</body>
</html>`
const STYLESHEET_DELAY_MS = 2000
/** A script-rendered app's entry, as Vite puts it in the head: it notes when it ran and renders a line. */
const APP = `window.__appRanAt = Date.now(); document.body.insertAdjacentHTML('beforeend', '<p class="below" id="rendered">Rendered</p>')`

interface Served {
  /** When each stylesheet was sent, by run id (ms since the epoch). */
  cssSentAt: Map<string, number>
  /** Sends a held stylesheet, no sooner than 2 s after it was asked for. */
  release: Map<string, () => void>
}

let server: Server
let origin: string
let browser: Browser
const served: Served = { cssSentAt: new Map(), release: new Map() }

/** Lets the stylesheet of `run` go once it has been asked for. */
async function release(run: string): Promise<void> {
  while (!served.release.has(run)) await new Promise((r) => setTimeout(r, 10))
  served.release.get(run)!()
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/full.css') {
      const run = url.search.slice(1)
      const askedAt = Date.now()
      const send = (): void => {
        served.cssSentAt.set(run, Date.now())
        res.writeHead(200, { 'content-type': 'text/css' })
        res.end(FULL)
      }
      // The CSP tests do not watch the first paint: theirs go after the delay alone.
      if (run.startsWith('csp-')) setTimeout(send, STYLESHEET_DELAY_MS)
      else served.release.set(run, () => setTimeout(send, Math.max(0, askedAt + STYLESHEET_DELAY_MS - Date.now())))
      return
    }
    if (url.pathname === `/${LOADER_FILE}` || url.pathname === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' })
      res.end(url.pathname === '/app.js' ? APP : LOADER_SCRIPT)
      return
    }
    if (url.pathname === '/page') {
      const run = url.searchParams.get('run') ?? ''
      const preload = (url.searchParams.get('preload') ?? 'body') as PreloadStrategy
      const nonce = url.searchParams.get('nonce') ?? undefined
      // CRLF in the css: the hash must be of the text as the browser reads it.
      const critical = url.searchParams.has('crlf') ? CRITICAL.replace('{', '{\r\n') : CRITICAL
      const app = url.searchParams.has('app') ? '<script type="module" src="/app.js"></script>' : ''
      const result = inlineCriticalCss(PAGE.replace('RUN', run).replace('APP', app), critical, { preload, loaderSrc: `/${LOADER_FILE}`, ...(nonce ? { nonce } : {}) })
      const html = result.html
      const csp = url.searchParams.get('csp')?.replace('HASH', `'${result.cspHash}'`)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(csp ? { 'content-security-policy': csp } : {}) })
      res.end(html)
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => server?.close(() => resolve()))
})

async function colours(page: Page): Promise<{ h1: string; below: string }> {
  return page.evaluate(() => ({
    h1: getComputedStyle(document.querySelector('h1')!).color,
    below: getComputedStyle(document.querySelector('.below')!).color,
  }))
}

/** Opens the page and reports when it first painted (ms since the epoch) and how it looked then. */
async function firstPaint(page: Page, query: string): Promise<{ paintedAt: number; atPaint: { h1: string; below: string } }> {
  await page.goto(`${origin}/page?${query}`, { waitUntil: 'commit' })
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 15_000, polling: 10 })
  const paintedAt = await page.evaluate(() => performance.timeOrigin + performance.getEntriesByName('first-contentful-paint')[0]!.startTime)
  return { paintedAt, atPaint: await colours(page) }
}

describe('in Chromium, with the stylesheet held back', () => {
  it.concurrent.each(['loader', 'body', 'media', 'swap'] as const)('%s: paints without it, with the critical style, then applies the full stylesheet', async (preload) => {
    const page = await browser.newPage()
    try {
      const run = `${preload}-${Date.now()}`
      const { paintedAt, atPaint } = await firstPaint(page, `preload=${preload}&run=${run}`)
      expect(served.cssSentAt.has(run)).toBe(false)
      expect(atPaint.h1).toBe('rgb(200, 0, 0)')
      expect(atPaint.below).not.toBe('rgb(0, 0, 200)')
      await release(run)
      await page.waitForFunction(() => getComputedStyle(document.querySelector('.below')!).color === 'rgb(0, 0, 200)', undefined, { timeout: 15_000 })
      expect(paintedAt).toBeLessThan(served.cssSentAt.get(run)!)
    } finally {
      await page.close()
    }
  })

  it.concurrent('loader: a script-rendered page runs its module script while the stylesheet is held, and ends styled', async () => {
    const page = await browser.newPage()
    try {
      const run = `loader-app-${Date.now()}`
      await firstPaint(page, `preload=loader&app=1&run=${run}`)
      await page.waitForFunction(() => document.querySelector('#rendered') !== null, undefined, { timeout: 15_000, polling: 10 })
      expect(served.cssSentAt.has(run)).toBe(false)
      await release(run)
      await page.waitForFunction(() => getComputedStyle(document.querySelector('#rendered')!).color === 'rgb(0, 0, 200)', undefined, { timeout: 15_000 })
      // One stylesheet, in the head where the link was (right after the critical style), its media as written (none): the cascade's order is the page's.
      const sheets = await page.evaluate(() =>
        Array.from(document.querySelectorAll('link[rel=stylesheet]')).map((link) => `${link.parentElement!.tagName} ${link.previousElementSibling?.tagName} ${link.getAttribute('media')} ${link.hasAttribute('data-critical-css-media')}`),
      )
      expect(sheets).toEqual(['HEAD STYLE null false'])
    } finally {
      await page.close()
    }
  })

  it.concurrent('body: the same page holds its module script until the stylesheet came (why loader is the default)', async () => {
    const page = await browser.newPage()
    try {
      const run = `body-app-${Date.now()}`
      await firstPaint(page, `preload=body&app=1&run=${run}`)
      await release(run)
      await page.waitForFunction(() => document.querySelector('#rendered') !== null, undefined, { timeout: 15_000, polling: 10 })
      const ranAt = await page.evaluate(() => (window as unknown as { __appRanAt: number }).__appRanAt)
      expect(ranAt).toBeGreaterThanOrEqual(served.cssSentAt.get(run)!)
    } finally {
      await page.close()
    }
  })

  it.concurrent('none: the stylesheet still blocks the first paint, and the critical style is there', async () => {
    const page = await browser.newPage()
    try {
      const run = `none-${Date.now()}`
      const painted = firstPaint(page, `preload=none&run=${run}`)
      await release(run)
      const { paintedAt, atPaint } = await painted
      expect(paintedAt).toBeGreaterThanOrEqual(served.cssSentAt.get(run)!)
      expect(atPaint).toEqual({ h1: 'rgb(200, 0, 0)', below: 'rgb(0, 0, 200)' })
    } finally {
      await page.close()
    }
  })
})

describe("under Content-Security-Policy: style-src 'self' 'nonce-…'", () => {
  const csp = encodeURIComponent("default-src 'self'; style-src 'self' 'nonce-Rm9vQmFy'; script-src 'none'")

  async function violations(query: string, policy = csp): Promise<{ found: string[]; final: { h1: string; below: string } }> {
    const page = await browser.newPage()
    try {
      await page.addInitScript(() => {
        const seen: string[] = []
        ;(window as unknown as { __violations: string[] }).__violations = seen
        document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.effectiveDirective} ${event.blockedURI}`))
      })
      // The load event waits for the held-back stylesheet, and for its own load handler.
      await page.goto(`${origin}/page?${query}&csp=${policy}&run=csp-${Date.now()}-${Math.random()}`, { waitUntil: 'load' })
      const found = await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)
      return { found, final: await colours(page) }
    } finally {
      await page.close()
    }
  }

  it.concurrent("loader under script-src 'self' and the nonce: no violation, critical and full styles both apply", async () => {
    const policy = encodeURIComponent("script-src 'self'; style-src 'self' 'nonce-Rm9vQmFy'")
    const { found, final } = await violations('preload=loader&app=1&nonce=Rm9vQmFy', policy)
    expect(found).toEqual([])
    expect(final).toEqual({ h1: 'rgb(200, 0, 0)', below: 'rgb(0, 0, 200)' })
  })

  it.concurrent('loader under a nonce-only style policy: the deferred stylesheet carries the nonce', async () => {
    const policy = encodeURIComponent("script-src 'self'; style-src 'nonce-Rm9vQmFy'")
    const { found, final } = await violations('preload=loader&nonce=Rm9vQmFy', policy)
    expect(found).toEqual([])
    expect(final).toEqual({ h1: 'rgb(200, 0, 0)', below: 'rgb(0, 0, 200)' })
  })

  it.concurrent("loader under a policy without 'self' for scripts: the loader is refused (the check above can fail)", async () => {
    const { found, final } = await violations('preload=loader&nonce=Rm9vQmFy')
    expect(found.some((v) => v.startsWith('script-src'))).toBe(true)
    expect(final.below).not.toBe('rgb(0, 0, 200)')
  })

  it.concurrent('body with the nonce: no violation, critical and full styles both apply', async () => {
    const { found, final } = await violations('preload=body&nonce=Rm9vQmFy')
    expect(found).toEqual([])
    expect(final).toEqual({ h1: 'rgb(200, 0, 0)', below: 'rgb(0, 0, 200)' })
  })

  it.concurrent('body without the nonce: the inline style is refused (the check above can fail)', async () => {
    const { found } = await violations('preload=body')
    expect(found.some((v) => v.startsWith('style-src'))).toBe(true)
  })

  it.concurrent('body under a hash-based policy: the reported hash admits the style, CRLF in the css and all', async () => {
    const { found, final } = await violations('preload=body&crlf=1', encodeURIComponent("default-src 'self'; style-src 'self' HASH; script-src 'none'"))
    expect(found).toEqual([])
    expect(final.h1).toBe('rgb(200, 0, 0)')
  })

  it.concurrent('media: its onload handler is refused by such a policy, which is why the default has none', async () => {
    const { found, final } = await violations('preload=media&nonce=Rm9vQmFy')
    expect(found.some((v) => v.startsWith('script-src'))).toBe(true)
    expect(final.below).not.toBe('rgb(0, 0, 200)')
  })
})
