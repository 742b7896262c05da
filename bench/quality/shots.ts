/**
 * Screenshots of the first viewport (what first paint shows) and their pixel difference.
 * Every variant of a page is served from the same URL (the document request is answered
 * with the variant's HTML), so relative URLs resolve identically, and every variant gets
 * the same style turning animations and transitions off.
 */
import pixelmatch from 'pixelmatch'
import { PNG } from 'pngjs'
import { chromium, type Browser } from 'playwright-core'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { withStyle } from './html.ts'

const NO_MOTION = '*,*::before,*::after{transition:none!important;animation:none!important}'
export const PIXELMATCH_THRESHOLD = 0.1

export interface Shooter {
  version: string
  /** A PNG of the first viewport of `url` rendered from `html`. */
  shoot(url: string, html: string, viewport: Viewport): Promise<Buffer>
  close(): Promise<void>
}

function isLoopback(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]'
}

export async function createShooter(executablePath: string, args: string[]): Promise<Shooter> {
  const browser: Browser = await chromium.launch({ executablePath, headless: true, args })
  return {
    version: browser.version(),
    async shoot(url, html, viewport) {
      const context = await browser.newContext({ viewport, deviceScaleFactor: 1 })
      try {
        // The resolver rules already refuse other hosts; this also refuses IP literals.
        await context.route((u) => (u.protocol === 'http:' || u.protocol === 'https:') && !isLoopback(u), (route) => route.abort('addressunreachable'))
        const page = await context.newPage()
        await page.route(
          (u) => u.href === url,
          (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: withStyle(html, NO_MOTION) }),
        )
        await page.goto(url, { waitUntil: 'load', timeout: 30_000 })
        await page.evaluate(async () => {
          await document.fonts.ready
          await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))
        })
        return await page.screenshot({ animations: 'disabled', caret: 'hide', type: 'png' })
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
