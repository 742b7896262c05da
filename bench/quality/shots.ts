/**
 * Screenshots of the first viewport (what first paint shows) and their pixel difference.
 * Every variant of a page is served from the same URL (the document request is answered
 * with the variant's HTML), so relative URLs resolve identically, and every variant gets
 * the same style turning animations and transitions off and the same device: a phone for
 * a portrait viewport, a desktop browser otherwise.
 */
import pixelmatch from 'pixelmatch'
import { PNG } from 'pngjs'
import { chromium, type Browser, type BrowserContextOptions } from 'playwright-core'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { withStyle } from './html.ts'

const NO_MOTION = '*,*::before,*::after{transition:none!important;animation:none!important}'
export const PIXELMATCH_THRESHOLD = 0.1

export interface Shot {
  /** The first viewport, as a PNG. */
  png: Buffer
  /** The document's width in CSS px (`scrollWidth` of the root): wider than the viewport when something overflows it. */
  scrollWidth: number
}

export interface Shooter {
  version: string
  /** The first viewport of `url` rendered from `html`. */
  shoot(url: string, html: string, viewport: Viewport): Promise<Shot>
  /**
   * The whole page of `url` rendered from `html` once it has settled: the network idle,
   * every stylesheet applied with its own media (the loader's held ones given back), fonts in.
   * `files`: same-origin paths answered with these texts (the loader script a build emits).
   */
  shootFinal(url: string, html: string, viewport: Viewport, files?: Record<string, string>): Promise<Shot>
  close(): Promise<void>
}

/**
 * A portrait viewport (the default 412×915) is a phone's, so it is rendered as a phone
 * renders: the page's `<meta name=viewport>` applies, and a document wider than the
 * viewport widens the layout viewport (zoomed out, without `initial-scale`) instead of
 * only scrolling sideways, so what spans the layout viewport (a fixed navbar) moves on the
 * first screen when a rule that held the document narrow is missing.
 */
export function isPhone({ width, height }: Viewport): boolean {
  return height > width
}

/** The browser context a viewport is rendered in; device pixels 1:1 so that every shot of a viewport has the same size. */
function deviceOf(viewport: Viewport): BrowserContextOptions {
  return { viewport, deviceScaleFactor: 1, ...(isPhone(viewport) ? { isMobile: true, hasTouch: true } : {}) }
}

function isLoopback(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]'
}

export async function createShooter(executablePath: string, args: string[]): Promise<Shooter> {
  const browser: Browser = await chromium.launch({ executablePath, headless: true, args })
  return {
    version: browser.version(),
    async shoot(url, html, viewport) {
      const context = await browser.newContext(deviceOf(viewport))
      try {
        // The resolver rules already refuse other hosts; this also refuses IP literals.
        await context.route((u) => (u.protocol === 'http:' || u.protocol === 'https:') && !isLoopback(u), (route) => route.abort('addressunreachable'))
        const page = await context.newPage()
        await page.route(
          (u) => u.href === url,
          (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: withStyle(html, NO_MOTION) }),
        )
        await page.goto(url, { waitUntil: 'load', timeout: 30_000 })
        const scrollWidth = await page.evaluate(async () => {
          await document.fonts.ready
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))
          return document.documentElement.scrollWidth
        })
        return { png: await page.screenshot({ animations: 'disabled', caret: 'hide', type: 'png' }), scrollWidth }
      } finally {
        await context.close()
      }
    },
    async shootFinal(url, html, viewport, files = {}) {
      const context = await browser.newContext(deviceOf(viewport))
      try {
        await context.route((u) => (u.protocol === 'http:' || u.protocol === 'https:') && !isLoopback(u), (route) => route.abort('addressunreachable'))
        const page = await context.newPage()
        const origin = new URL(url).origin
        await page.route(
          (u) => u.origin === origin && u.pathname in files,
          (route) => route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body: files[new URL(route.request().url()).pathname]! }),
        )
        await page.route(
          (u) => u.href === url,
          (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: withStyle(html, NO_MOTION) }),
        )
        await page.goto(url, { waitUntil: 'load', timeout: 30_000 })
        await page.waitForLoadState('networkidle', { timeout: 10_000 }).catch(() => {})
        const scrollWidth = await page.evaluate(async () => {
          // The loader gives the held links their media back once all have loaded: the page is final after that.
          for (let waited = 0; waited < 5000 && document.querySelector('link[data-critical-css-media][media="print"]'); waited += 50) await new Promise((done) => setTimeout(done, 50))
          await document.fonts.ready
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))
          return document.documentElement.scrollWidth
        })
        return { png: await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide', type: 'png' }), scrollWidth }
      } finally {
        await context.close()
      }
    },
    close: () => browser.close(),
  }
}

export interface Diff {
  /** Differing pixels / all pixels, 0…1. */
  ratio: number
  /** The pixelmatch diff image. */
  png: Buffer
}

export function diff(a: Buffer, b: Buffer): Diff {
  const one = PNG.sync.read(a)
  const two = PNG.sync.read(b)
  if (one.width !== two.width || one.height !== two.height) throw new Error(`screenshot sizes differ: ${one.width}×${one.height} and ${two.width}×${two.height}`)
  const out = new PNG({ width: one.width, height: one.height })
  const differing = pixelmatch(one.data, two.data, out.data, one.width, one.height, { threshold: PIXELMATCH_THRESHOLD })
  return { ratio: differing / (one.width * one.height), png: PNG.sync.write(out) }
}
