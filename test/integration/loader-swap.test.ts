/// <reference lib="dom" />
/**
 * Issue 35: the loader gives the deferred stylesheets their media back in one go, so the
 * cascade is at every moment the critical CSS alone or all of it. sb-admin's shape: a small
 * library sheet linked first arrives first; applied alone it comes after the inlined copies of
 * the site sheet's rules in the cascade and wins over them, and the table's rows move, then
 * move back when the site sheet lands. And a sheet that fails does not hold the others back.
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { LOADER_FILE, LOADER_SCRIPT } from '../../src/html/loader.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

const LIBRARY_CSS = 'td{padding:20px}'
const SITE_CSS = 'body{margin:0;font:16px/1.5 sans-serif}td{padding:4px;border:1px solid #999}'
/** The render's CSS: the first screen's rules of both sheets, in cascade order. */
const CRITICAL_CSS = `td{padding:20px}${SITE_CSS}`
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Tables</title>
<link rel="stylesheet" href="/library.css">
<link rel="stylesheet" href="/site.css">
</head><body><table><tr><td id="cell">one</td><td>two</td></tr></table></body></html>`
const LOADER_SRC = `/${LOADER_FILE}`

let browser: Browser
const closing: { close(): Promise<unknown> }[] = []

beforeAll(async () => {
  browser = await launchChromium()
}, 30_000)

afterAll(async () => {
  for (const thing of closing.reverse()) await thing.close().catch(() => {})
  await browser?.close()
})

/** Lets something go when the test says so. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { wait: () => opened, open }
}

async function serve(files: Parameters<typeof serveFiles>[0]): Promise<StaticServer> {
  const server = await serveFiles({ ...files, [LOADER_SRC]: { body: LOADER_SCRIPT, type: 'text/javascript; charset=utf-8' } })
  closing.push(server)
  return server
}

async function open(server: StaticServer): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } })
  closing.push(page.context())
  await page.goto(`${server.origin}/`, { waitUntil: 'commit' })
  return page
}

const padding = (page: Page): Promise<string> => page.evaluate(() => getComputedStyle(document.querySelector('#cell')!).paddingTop)
const sheetLoaded = (page: Page, href: string): Promise<unknown> =>
  page.waitForFunction((path) => document.querySelector<HTMLLinkElement>(`link[href="${path}"]`)?.sheet != null, href, { timeout: 15_000, polling: 20 })
const allApplied = (page: Page): Promise<unknown> =>
  page.waitForFunction(() => document.readyState === 'complete' && document.querySelectorAll('link[data-critical-css-media]').length === 0, undefined, { timeout: 15_000, polling: 20 })

describe('the loader swaps every deferred stylesheet in at once', () => {
  const processed = inlineCriticalCss(PAGE, CRITICAL_CSS, { loaderSrc: LOADER_SRC })

  it('the library sheet that arrives first stays held until the site sheet is in too: the cell keeps the padding of the page as built', async () => {
    expect(processed.deferred).toEqual(['/library.css', '/site.css'])
    const site = gate()
    const server = await serve({ '/': processed.html, '/library.css': LIBRARY_CSS, '/site.css': { body: SITE_CSS, hold: site.wait } })
    const page = await open(server)
    await sheetLoaded(page, '/library.css')
    await page.waitForFunction(() => document.readyState !== 'loading', undefined, { timeout: 15_000, polling: 20 })
    // As built, the site sheet's 4px wins; the critical CSS gives the same, and so must the page while the site sheet is still coming.
    expect(await padding(page)).toBe('4px')
    expect(await page.evaluate(() => document.querySelectorAll('link[data-critical-css-media]').length)).toBe(2)
    site.open()
    await allApplied(page)
    expect(await padding(page)).toBe('4px')
  }, 60_000)

  it('a sheet that fails (404) does not hold the others back, also when it failed before the loader ran', async () => {
    const loader = gate()
    const broken = inlineCriticalCss(PAGE.replace('/library.css', '/missing.css'), CRITICAL_CSS, { loaderSrc: LOADER_SRC }).html
    const server = await serveFiles({ '/': broken, '/site.css': SITE_CSS, [LOADER_SRC]: { body: LOADER_SCRIPT, type: 'text/javascript; charset=utf-8', hold: loader.wait } })
    closing.push(server)
    const page = await open(server)
    await sheetLoaded(page, '/site.css')
    await page.waitForFunction(() => performance.getEntriesByName(new URL('/missing.css', location.href).href).length > 0, undefined, { timeout: 15_000, polling: 20 })
    loader.open()
    await allApplied(page)
    expect(await page.evaluate(() => document.querySelector<HTMLLinkElement>('link[href="/site.css"]')!.media)).toBe('')
    expect(await padding(page)).toBe('4px')
  }, 60_000)
})
