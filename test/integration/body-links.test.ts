/// <reference lib="dom" />
/**
 * Issue 34: Chromium's parser waits at a `<link rel=stylesheet>` in the body until the sheet
 * has loaded, so nothing after it is painted before then (Starlight puts its code blocks'
 * stylesheet there). A page with a head stylesheet and its content after a body stylesheet
 * link, every stylesheet held until the test lets it go. As built, nothing paints while they
 * are held, and paints once they come. Processed (default `loader`), it paints with the
 * critical CSS, the text after the body link with it, while they are still held; once they
 * come it ends with the styles of the page as built, each stylesheet asked for once. And a
 * loader that ran before the parser reached the body link still gives that link its media
 * back, together with the head's (issue 35: one swap).
 */
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { LOADER_FILE, LOADER_SCRIPT } from '../../src/html/loader.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { serveFiles, type ServedFile, type StaticServer } from '../fixtures/static-server.ts'

const HEAD_SHEET = '/assets/site.css'
const BODY_SHEET = '/assets/code.css'
const SITE_CSS = 'body{margin:0;font:16px/1.5 sans-serif;color:rgb(20, 20, 20)}h1{color:rgb(200, 0, 0);font-size:32px;margin:16px}p{margin:8px 16px}'
const CODE_CSS = '.code{background:rgb(30, 30, 60);color:rgb(230, 230, 230);padding:12px;margin:0 16px;font:14px monospace}#after{color:rgb(0, 120, 0)}'
/** What a render keeps: the rules of both sheets for what is above the fold, not the colour of the line after the code. */
const CRITICAL_CSS = `${SITE_CSS}.code{background:rgb(30, 30, 60);color:rgb(230, 230, 230);padding:12px;margin:0 16px;font:14px monospace}`

/** Up to the body's stylesheet link, and from it on. */
const TOP = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Installing</title>
  <link rel="stylesheet" href="${HEAD_SHEET}">
</head>
<body>
  <h1>Installing</h1>
  <p>Run this:</p>
  `
const BOTTOM = `<link rel="stylesheet" href="${BODY_SHEET}">
  <pre class="code" id="code">npm install unplugin-critical-css</pre>
  <p id="after">Then add it to your config.</p>
</body>
</html>
`
const PAGE = TOP + BOTTOM
const LOADER_SRC = `/${LOADER_FILE}`
/** The elements whose final styles are compared. */
const COMPARED = ['body', 'h1', '#code', '#after']

/** Lets something go when the test says so. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { wait: () => opened, open }
}

interface HeldSite {
  server: StaticServer
  /** How often each stylesheet was asked for. */
  cssRequests(): Record<string, number>
}

/** When each stylesheet may be sent. */
type Holds = Record<typeof HEAD_SHEET | typeof BODY_SHEET, () => Promise<void>>

/** Serves `html` at `/`, each stylesheet once `holds` lets it go, and the loader script. */
async function serveHeld(html: string | ServedFile, holds: Holds): Promise<HeldSite> {
  const server = await serveFiles({
    '/': html,
    [HEAD_SHEET]: { body: SITE_CSS, hold: holds[HEAD_SHEET] },
    [BODY_SHEET]: { body: CODE_CSS, hold: holds[BODY_SHEET] },
    [LOADER_SRC]: { body: LOADER_SCRIPT, type: 'text/javascript; charset=utf-8' },
  })
  return {
    server,
    cssRequests: () => {
      const counts: Record<string, number> = {}
      for (const path of server.requests) if (path.endsWith('.css')) counts[path] = (counts[path] ?? 0) + 1
      return counts
    },
  }
}

let browser: Browser
const opened: { close(): Promise<unknown> }[] = []

beforeAll(async () => {
  browser = await launchChromium()
}, 30_000)

afterAll(async () => {
  for (const thing of opened.reverse()) await thing.close().catch(() => {})
  await browser?.close()
})

/** A fresh page (its own context, so its own cache) at the site's `/`, once its HTML has begun to arrive. */
async function open(site: HeldSite): Promise<Page> {
  opened.push(site.server)
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } })
  opened.push(page.context())
  await page.goto(`${site.server.origin}/`, { waitUntil: 'commit' })
  return page
}

const paintCount = (page: Page): Promise<number> => page.evaluate(() => performance.getEntriesByType('paint').length)
const waitForPaint = (page: Page): Promise<unknown> =>
  page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 15_000, polling: 20 })

/** The line after the code block is in the document, laid out, and what the page shows at its place. */
async function waitUntilShown(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const after = document.querySelector('#after')
      if (!after) return false
      const box = after.getBoundingClientRect()
      return box.height > 0 && box.bottom <= innerHeight && document.elementFromPoint(box.left + 4, box.top + box.height / 2) === after
    },
    undefined,
    { timeout: 15_000, polling: 20 },
  )
}

/** Every stylesheet link applies with its own media (the loader has given each back). */
async function waitUntilApplied(page: Page): Promise<void> {
  await page.waitForFunction(
    (hrefs) =>
      hrefs.every((href) => {
        const link = document.querySelector<HTMLLinkElement>(`link[rel=stylesheet][href="${href}"]`)
        return link?.sheet != null && !link.hasAttribute('data-critical-css-media') && matchMedia(link.media || 'all').matches
      }),
    [HEAD_SHEET, BODY_SHEET],
    { timeout: 15_000, polling: 20 },
  )
}

function finalStyles(page: Page): Promise<string[]> {
  return page.evaluate(
    (selectors) =>
      selectors.map((selector) => {
        const style = getComputedStyle(document.querySelector(selector)!)
        return [selector, style.color, style.backgroundColor, style.fontSize, style.fontFamily, style.padding, style.margin].join(' | ')
      }),
    COMPARED,
  )
}

describe('a page whose content comes after a stylesheet link in the body, every stylesheet held', () => {
  it('as built it paints nothing until they come; processed it paints, the text after the link too, and ends as built', async () => {
    const css = gate()
    const holds = { [HEAD_SHEET]: css.wait, [BODY_SHEET]: css.wait }
    const processed = inlineCriticalCss(PAGE, CRITICAL_CSS, { loaderSrc: LOADER_SRC })
    expect(processed).toMatchObject({ deferred: [HEAD_SHEET, BODY_SHEET], stillBlocking: [] })
    const original = await serveHeld(PAGE, holds)
    const withPlugin = await serveHeld(processed.html, holds)

    const asBuilt = await open(original)
    // It has asked for both: what it shows from here on waits for them alone.
    await expect.poll(() => original.cssRequests(), { timeout: 15_000, interval: 20 }).toEqual({ [HEAD_SHEET]: 1, [BODY_SHEET]: 1 })
    const page = await open(withPlugin)
    await waitForPaint(page)
    await waitUntilShown(page)
    // Painted while neither stylesheet has come, with the critical CSS: the code block as the body's sheet styles it.
    expect(await page.evaluate(() => [...document.querySelectorAll<HTMLLinkElement>('link[rel=stylesheet][media=print]')].map((link) => link.sheet))).toEqual([null, null])
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('#code')!).backgroundColor)).toBe('rgb(30, 30, 60)')
    // Meanwhile the page as built has painted nothing, and its parser still waits at the body's link.
    expect(await paintCount(asBuilt)).toBe(0)
    expect(await asBuilt.evaluate(() => document.querySelector('#after'))).toBeNull()

    css.open()
    // The stylesheets were all it waited for.
    await waitForPaint(asBuilt)
    await waitUntilShown(asBuilt)
    await waitUntilApplied(page)
    expect(await finalStyles(page)).toEqual(await finalStyles(asBuilt))
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('#after')!).color)).toBe('rgb(0, 120, 0)')
    expect(withPlugin.cssRequests()).toEqual({ [HEAD_SHEET]: 1, [BODY_SHEET]: 1 })
    expect(original.cssRequests()).toEqual({ [HEAD_SHEET]: 1, [BODY_SHEET]: 1 })
  }, 60_000)

  it('a loader that ran before the parser reached the body link gives both links their media back together, once the document is parsed and both have loaded', async () => {
    const headCss = gate()
    const bodyCss = gate()
    const tail = gate()
    const html = inlineCriticalCss(PAGE, CRITICAL_CSS, { loaderSrc: LOADER_SRC }).html
    const split = html.indexOf(`<link rel="stylesheet" href="${BODY_SHEET}"`)
    expect(split).toBeGreaterThan(html.indexOf(LOADER_SRC))
    // The document arrives in two parts: the second, with the body's link, when the test says.
    const site = await serveHeld({ body: html.slice(0, split), rest: { body: html.slice(split), hold: tail.wait } }, { [HEAD_SHEET]: headCss.wait, [BODY_SHEET]: bodyCss.wait })
    const page = await open(site)
    // The loader has arrived, so it has run: an async script runs as soon as it is in.
    await page.waitForFunction((src) => performance.getEntriesByName(new URL(src, location.href).href).length > 0, LOADER_SRC, { timeout: 15_000, polling: 20 })

    headCss.open()
    // The head's sheet has loaded, but the page is not all there: it stays held, the cascade is the critical CSS alone.
    await page.waitForFunction((href) => document.querySelector<HTMLLinkElement>(`link[href="${href}"]`)?.sheet != null, HEAD_SHEET, { timeout: 15_000, polling: 20 })
    expect(await page.evaluate(() => [document.readyState, document.querySelectorAll('link[rel=stylesheet]').length, document.querySelectorAll('link[data-critical-css-media]').length])).toEqual(['loading', 1, 1])

    tail.open()
    await waitUntilShown(page)
    // Parsed, the body's sheet still coming: still the critical CSS alone.
    expect(await page.evaluate(() => document.querySelectorAll('link[data-critical-css-media]').length)).toBe(2)
    // Each batch of mutations the observer is given is one task's: the media of both must come back in one.
    await page.evaluate(() => {
      const batches: number[] = []
      ;(window as unknown as { swapBatches: number[] }).swapBatches = batches
      new MutationObserver((records) => batches.push(records.filter((record) => record.attributeName === 'data-critical-css-media').length)).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-critical-css-media'] })
    })
    bodyCss.open()
    await waitUntilApplied(page)
    expect(await page.evaluate(() => (window as unknown as { swapBatches: number[] }).swapBatches)).toEqual([2])
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('#after')!).color)).toBe('rgb(0, 120, 0)')
    expect(site.cssRequests()).toEqual({ [HEAD_SHEET]: 1, [BODY_SHEET]: 1 })
  }, 60_000)
})
