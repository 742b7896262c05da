/// <reference lib="dom" />
/**
 * Next.js 16 static export, as a user runs it: no integration, the recipe
 * `"build": "next build && critical-css out"` in test/frameworks/next (app router,
 * `output: 'export'`, a global stylesheet, a CSS module on every page and one only on
 * /pricing). Every exported page gets critical CSS and nothing else changes, a rebuild needs
 * no browser, `basePath` is the `--base` the folder is served below.
 *
 * Next's runtime manages its stylesheets itself: React 19 adopts the `<link rel="stylesheet"
 * data-precedence>` it finds in the document when it hydrates, and inserts new ones for the
 * next page on a client-side navigation. So the processed site is also opened in Chromium,
 * next to the original: the same computed styles once loaded, each stylesheet fetched once
 * and linked once, and a client-side navigation (also one started while the stylesheets
 * are still loading) styles the page it goes to.
 */
import { cp } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../../fixtures/browser.ts'
import { serveFolder, type Served } from '../../fixtures/site-view.ts'
import { criticalCss, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('next')
const OUT = join(DIR, 'out')
const BUILD_TIMEOUT = 240_000
/** Next exports every route as `<route>.html`, its 404 page twice. */
const PAGES = ['404.html', '_not-found.html', 'about.html', 'index.html', 'pricing.html']
/** No telemetry, no download: the build stays on this machine. */
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: '1' }

/** `next build` alone: the site as Next exports it. */
async function nextBuild(env: Record<string, string> = {}): Promise<{ run: CommandResult; files: Tree }> {
  await removeDirs(OUT)
  const run = await runIn(DIR, 'npx', ['next', 'build'], null, { ...NEXT_ENV, ...env })
  return { run, files: run.code === 0 ? await readTree(OUT) : new Map() }
}

/** The recipe, `npm run build`, with `flags` for `critical-css out` (npm appends them to the script's last command). */
async function recipe(flags: string[], env: Record<string, string> = {}): Promise<{ run: CommandResult; files: Tree }> {
  await removeDirs(OUT)
  const run = await runIn(DIR, 'npm', ['run', 'build', '--', ...flags], null, { ...NEXT_ENV, ...env })
  return { run, files: run.code === 0 ? await readTree(OUT) : new Map() }
}

/** Its above-the-fold rules: the header on every page, the hero and the card where the page has them; never the content below the fold. */
function rulesFor(file: string): { holds: string[]; not: string[] } {
  const notFound = file === '404.html' || file === '_not-found.html'
  const holds = ['.site-header{', ...(notFound ? [] : ['.hero{', '_card{']), ...(file === 'pricing.html' ? ['_plan{'] : [])]
  // A 404 page is short: its footer is on the first screen.
  return { holds, not: ['.below{', '_fine{', ...(notFound ? [] : ['.site-footer{'])] }
}

// ---------------------------------------------------------------------------------------
// In the browser


/** The computed styles compared between the original and the processed site (null: no such element). */
const STYLED: Record<string, readonly string[]> = {
  body: ['margin-top', 'background-color', 'font-family'],
  '.site-header': ['background-color', 'display', 'padding-top'],
  '.hero': ['background-image', 'min-height'],
  '#card': ['background-color', 'border-top-left-radius', 'display'],
  '#plan': ['background-color', 'padding-left'],
  '#below': ['background-color', 'padding-top'],
  '#below h2': ['color'],
  '.site-footer': ['background-color'],
}

interface Look {
  path: string
  styles: Record<string, Record<string, string> | null>
  /** Each stylesheet URL the page fetched, with how many times (no duplicate may appear). */
  fetched: Record<string, number>
  /** Each `<link rel="stylesheet">` href in the document, with how many links name it. */
  linked: Record<string, number>
  /** Every stylesheet link has its sheet, and none is left at media="print". */
  allApplied: boolean
}

/** React has hydrated the header: its links carry React's fiber, so a click is a client-side navigation. */
async function hydrated(page: Page): Promise<void> {
  await page.waitForFunction(() => Object.keys(document.querySelector('.site-header a') ?? {}).some((key) => key.startsWith('__reactFiber')), undefined, { timeout: 15_000 })
}

/** Every stylesheet link has loaded (and the loader has given it its media back). */
async function stylesLoaded(page: Page): Promise<void> {
  await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')).every((link) => link.sheet !== null && !link.hasAttribute('data-critical-css-media')), undefined, {
    timeout: 15_000,
  })
}

async function look(page: Page, fetched: Map<string, number>): Promise<Look> {
  await page.waitForLoadState('networkidle', { timeout: 15_000 }).catch(() => {})
  await stylesLoaded(page)
  const seen = await page.evaluate((asked) => {
    const styles: Record<string, Record<string, string> | null> = {}
    for (const [selector, properties] of Object.entries(asked)) {
      const element = document.querySelector(selector)
      styles[selector] = element ? Object.fromEntries(properties.map((property) => [property, getComputedStyle(element).getPropertyValue(property)])) : null
    }
    const links = Array.from(document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]'))
    const linked: Record<string, number> = {}
    for (const link of links) linked[new URL(link.href).pathname] = (linked[new URL(link.href).pathname] ?? 0) + 1
    return { path: location.pathname, styles, linked, allApplied: links.every((link) => link.sheet !== null && link.media !== 'print') }
  }, STYLED)
  return { ...seen, fetched: Object.fromEntries([...fetched].sort()) }
}

interface Visit {
  /** The page as loaded, then after a client-side click to another page. */
  first: Look
  navigated: Look
  /** The document was not reloaded by the click: it was Next's router. */
  clientSide: boolean
  /** First contentful paint of the loaded page, ms. */
  fcp: number
  /** When React had hydrated the page (ms, about): from then on a click is the router's. */
  hydratedAt: number
  /** Some stylesheet of the first page was still loading just before the click. */
  stillLoading: boolean
}

/**
 * Opens `path` of the site, waits for it to be loaded and styled, then clicks the header's
 * link to `to` (whose heading is `title`). With `cssDelay`, every stylesheet answers that
 * late, and the click comes as soon as React has hydrated and the page has painted: on the
 * processed site, while the stylesheets of the first page are still loading.
 */
async function visit(browser: Browser, site: Served, prefix: string, path: string, [to, title]: readonly [string, string], cssDelay = 0): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 }, deviceScaleFactor: 1 })
  try {
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort('blockedbyclient'),
    )
    if (cssDelay > 0) {
      await context.route('**/*.css', async (route) => {
        await new Promise((done) => setTimeout(done, cssDelay))
        await route.continue()
      })
    }
    const page = await context.newPage()
    const fetched = new Map<string, number>()
    page.on('request', (request) => {
      if (request.resourceType() === 'stylesheet') {
        const key = new URL(request.url()).pathname
        fetched.set(key, (fetched.get(key) ?? 0) + 1)
      }
    })
    await page.goto(`${site.origin}${prefix}${path}`, { waitUntil: 'domcontentloaded' })
    await hydrated(page)
    const hydratedAt = await page.evaluate(() => performance.now())
    if (cssDelay === 0) await stylesLoaded(page)
    const fcp = await page.evaluate(
      () =>
        new Promise<number>((done) => {
          const entry = performance.getEntriesByName('first-contentful-paint')[0]
          if (entry) return done(entry.startTime)
          new PerformanceObserver((list) => {
            const painted = list.getEntriesByName('first-contentful-paint')[0]
            if (painted) done(painted.startTime)
          }).observe({ type: 'paint', buffered: true })
        }),
    )
    const first = cssDelay > 0 ? null : await look(page, fetched)
    const stillLoading = await page.evaluate(() => Array.from(document.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')).some((link) => link.sheet === null))
    await page.evaluate(() => ((window as unknown as { __mark: number }).__mark = 1))
    await page.click(`.site-header a[href="${prefix}${to}"]`)
    await page.waitForURL(`**${prefix}${to}`)
    await page.waitForFunction((heading) => document.querySelector('#title')?.textContent === heading, title)
    const navigated = await look(page, fetched)
    const clientSide = await page.evaluate(() => (window as unknown as { __mark?: number }).__mark === 1)
    return { first: first ?? navigated, navigated, clientSide, fcp, hydratedAt, stillLoading }
  } finally {
    await context.close()
  }
}

describe.sequential('Next.js static export: `next build && critical-css out`', () => {
  let temp: string
  let baseline: Tree
  let cold: Tree

  beforeAll(async () => {
    temp = await tempDir('next')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT, join(DIR, '.next'))
  })

  it('a cold build gives every exported page its above-the-fold CSS and changes nothing else', async () => {
    const off = await nextBuild()
    expectBuildOk(off.run)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(PAGES)
    // Next links its CSS as React 19 stylesheet resources: those are what the runtime adopts when it hydrates.
    expect(baseline.get('index.html')!.toString('utf8')).toMatch(/<link rel="stylesheet" href="\/_next\/static\/[^"]+\.css" data-precedence="next"\/>/)
    await cp(OUT, join(temp, 'original'), { recursive: true })

    const on = await recipe(['--cache-dir', join(temp, 'cache'), '--report', join(temp, 'report.json')])
    expectBuildOk(on.run)
    cold = on.files
    expectAllInlined(await readReport(join(temp, 'report.json')), PAGES)
    expectCriticalRules(cold, rulesFor)
    expectOnlyEdits(baseline, cold)
    // The RSC payloads a client-side navigation fetches are Next's, byte for byte (checked above), and still name the full stylesheets.
    expect(cold.get('pricing.txt')!.toString('utf8')).toMatch(/\/_next\/static\/[^"]+\.css/)
    await cp(OUT, join(temp, 'processed'), { recursive: true })
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await recipe(['--cache-dir', join(temp, 'cache'), '--report', join(temp, 'report-warm.json')], NO_BROWSER)
    expectBuildOk(again.run)
    expectAllFromCache(await readReport(join(temp, 'report-warm.json')), PAGES.length)
    expect(again.files).toEqual(cold)
  }, BUILD_TIMEOUT)

  describe('in Chromium, next to the original', () => {
    let browser: Browser
    let original: Served
    let processed: Served
    beforeAll(async () => {
      browser = await launchChromium()
      original = await serveFolder(join(temp, 'original'), '/')
      processed = await serveFolder(join(temp, 'processed'), '/')
    })
    afterAll(async () => {
      await Promise.all([browser?.close(), original?.close(), processed?.close()])
    })

    it('each page looks the same once loaded, fetches and links each stylesheet once, and a client-side navigation styles the next page', async () => {
      // Each page, and a navigation to one that needs a stylesheet it has not got yet (only /pricing has its own CSS module).
      const visits = [['', ['pricing', 'Pricing']], ['about', ['pricing', 'Pricing']], ['pricing', ['about', 'About']]] as const
      for (const [path, to] of visits) {
        const before = await visit(browser, original, '/', path, to)
        const after = await visit(browser, processed, '/', path, to)
        expect(after.first.allApplied && after.navigated.allApplied, path).toBe(true)
        expect(after.first.styles, path).toEqual(before.first.styles)
        expect(after.navigated.styles, `${path} → pricing`).toEqual(before.navigated.styles)
        if (to[0] === 'pricing') expect(after.navigated.styles['#plan']?.['background-color']).toBe('rgb(15, 123, 79)')
        expect(after.clientSide && before.clientSide, `${path} → pricing is client-side`).toBe(true)
        // The same stylesheets, each fetched once and linked once: the runtime found ours and added no copy.
        expect(after.first.fetched, path).toEqual(before.first.fetched)
        expect(after.navigated.fetched, `${path} → pricing`).toEqual(before.navigated.fetched)
        expect(Object.values(after.navigated.fetched).every((count) => count === 1), JSON.stringify(after.navigated.fetched)).toBe(true)
        expect(after.navigated.linked, `${path} → pricing`).toEqual(before.navigated.linked)
        expect(Object.values(after.navigated.linked).every((count) => count === 1), JSON.stringify(after.navigated.linked)).toBe(true)
      }
    }, 120_000)

    it('with slow stylesheets the page paints at once, and a navigation started while they load still styles the next page', async () => {
      // Long enough that a busy machine still paints the processed page well before it.
      const DELAY = 3000
      const before = await visit(browser, original, '/', '', ['pricing', 'Pricing'], DELAY)
      const after = await visit(browser, processed, '/', '', ['pricing', 'Pricing'], DELAY)
      // The original's first paint waits for its stylesheets; the processed page's does not. Nor
      // does its hydration: the original's inline RSC scripts wait for the blocking stylesheets,
      // so there the click can only come once they are in; here it comes while they load.
      expect(before.fcp).toBeGreaterThanOrEqual(DELAY)
      expect(after.fcp).toBeLessThan(DELAY)
      expect(before.stillLoading).toBe(false)
      expect(after.stillLoading, 'the click comes while the stylesheets load').toBe(true)
      expect(after.clientSide).toBe(true)
      expect(after.navigated.allApplied).toBe(true)
      expect(after.navigated.styles).toEqual(before.navigated.styles)
      expect(after.navigated.fetched).toEqual(before.navigated.fetched)
      expect(Object.values(after.navigated.fetched).every((count) => count === 1), JSON.stringify(after.navigated.fetched)).toBe(true)
      expect(after.navigated.linked).toEqual(before.navigated.linked)
      console.info(`next, stylesheets ${DELAY} ms late: first contentful paint ${Math.round(before.fcp)} → ${Math.round(after.fcp)} ms, hydrated at ${Math.round(before.hydratedAt)} → ${Math.round(after.hydratedAt)} ms (original → processed)`)
    }, 120_000)
  })

  it('with `basePath`, the pages are rendered below it (`critical-css out --base /docs/`) and still navigate styled', async () => {
    const env = { NEXT_BASE_PATH: '/docs' }
    const off = await nextBuild(env)
    expectBuildOk(off.run)
    expect(off.files.get('index.html')!.toString('utf8')).toContain('href="/docs/_next/static/')
    await removeDirs(join(temp, 'original-docs'))
    await cp(OUT, join(temp, 'original-docs'), { recursive: true })

    const on = await recipe(['--base', '/docs/', '--no-cache', '--report', join(temp, 'report-docs.json')], env)
    expectBuildOk(on.run)
    expect(output(on.run)).not.toMatch(/not in the build output/)
    const report = await readReport(join(temp, 'report-docs.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome]).sort()).toEqual([
      ['/docs/', 'inlined'],
      ['/docs/404.html', 'inlined'],
      ['/docs/_not-found.html', 'inlined'],
      ['/docs/about.html', 'inlined'],
      ['/docs/pricing.html', 'inlined'],
    ])
    // Rendered from the stylesheets below /docs/, so the page found its CSS.
    expect(criticalCss(on.files.get('index.html'))).toContain('.hero{')
    expectCriticalRules(on.files, rulesFor)
    expectOnlyEdits(off.files, on.files, { base: '/docs/' })
    await removeDirs(join(temp, 'processed-docs'))
    await cp(OUT, join(temp, 'processed-docs'), { recursive: true })

    const browser = await launchChromium()
    const sites = await Promise.all([serveFolder(join(temp, 'original-docs'), '/docs/'), serveFolder(join(temp, 'processed-docs'), '/docs/')])
    try {
      const before = await visit(browser, sites[0], '/docs/', 'about', ['pricing', 'Pricing'])
      const after = await visit(browser, sites[1], '/docs/', 'about', ['pricing', 'Pricing'])
      expect(after.first.styles).toEqual(before.first.styles)
      expect(after.navigated.styles).toEqual(before.navigated.styles)
      expect(after.clientSide).toBe(true)
      expect(after.navigated.fetched).toEqual(before.navigated.fetched)
    } finally {
      await Promise.all([browser.close(), ...sites.map((site) => site.close())])
    }
  }, BUILD_TIMEOUT)
})
