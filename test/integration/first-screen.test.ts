/**
 * Issue 34: the first screen a visitor sees with only the critical CSS is the screen the full
 * CSS gives. Each page has a shape the fold test alone gets wrong; each is rendered by the
 * engine, then opened in another browser twice, with its stylesheet and with only the CSS
 * the engine made inlined in its place, and the first viewports are compared pixel by pixel.
 * The engine with its first-screen check off shows that each shape fails without it.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import type { EngineResult } from '../../src/engine/engine.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 })

const DESKTOP = { width: 1300, height: 900 }
const PHONE = { width: 412, height: 915 }
/** A page's one stylesheet link, which the critical CSS takes the place of. */
const LINK = /<link rel="stylesheet" href="[^"]+">/

const page = (body: string, sheet = '/site.css'): string =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title><link rel="stylesheet" href="${sheet}"></head><body>${body}</body></html>`

/** An image 650 px wide by nature: the photos below the fold. */
const WIDE_IMAGE = '<svg xmlns="http://www.w3.org/2000/svg" width="650" height="400"><rect width="650" height="400" fill="#888"/></svg>'

const SITE_CSS = `
body{margin:0;font:16px/1.5 sans-serif}
header{height:80px;background:#123;color:#fff}
main{padding:20px}
.site-footer{margin-top:120vh;background:#333;color:#eee;padding:40px}
.gallery img{max-width:100%;height:auto}
.gallery{padding:10px;background:#eef}
.spacer{height:1500px}
.bar{position:fixed;top:0;left:0;right:0;height:56px;background:#123;color:#fff}
.bar button{position:absolute;right:8px;top:8px}
table{border-collapse:collapse}
td{border:1px solid #999;padding:4px}
td.late{width:600px}
p{margin:0}
.lead{height:800px}
.edge{margin-top:40px;background:#12233d;color:#f4d35e}
`

/** What the components page's shadow trees read, and its badge's placeholder, beside rules nothing above the fold uses. */
const DARK_CSS = `
.moon{display:none}
.tall{height:100vh;background:#e3f2fd}
.features{padding:30px;background:#0d47a1;color:#fff}
@media (prefers-color-scheme: dark){
  body{background:#111;color:#eee}
  header{background:#000}
  .moon{display:inline-block;padding:0 8px;background:#ffeb3b;color:#000}
  .tall{height:200px;background:#263238}
}
`

const COMPONENTS_CSS = `
:root{--hero-bg:#4a148c;--hero-end:#f06292;--hero-ink:#fff;--badge-ink:#0a0;--unused-ink:#f00}
user-badge:not(:defined){display:inline-block;width:90px;height:24px;background:#ccc;color:transparent}
user-badge:defined{display:inline-block;padding:2px 6px;background:#eee}
.never-used{color:var(--unused-ink)}
`

let site: StaticServer
let engine: ChromiumEngine
let unchecked: ChromiumEngine
let browser: Browser

const PAGES: Record<string, string> = {
    // The footer's own rule keeps it out of the first screen: without it, it shows there.
    '/footer.html': page('<header>Head</header><main><p>Short</p></main><footer class="site-footer">Footer text</footer>'),
    // Images far below the fold, held to the screen's width only by a rule: without it a phone's document is 650 px wide, and the fixed bar with it (startbootstrap-creative's portfolio).
    '/gallery.html': page('<nav class="bar">Brand <button>Menu</button></nav><main><p>Short</p><div class="spacer"></div></main><section class="gallery"><img src="/wide.svg"><img src="/wide.svg"></section>'),
    // A paragraph its own top margin puts just below the fold: without it, a strip of unstyled text at the bottom edge (a Hugo home page at 1300×900).
  '/edge.html': page('<header>Head</header><p class="lead">Lead</p><p class="edge">Kept by hand</p>'),
  // A column's width set by a cell far below the fold: no rule of the first screen's own elements fixes it.
    '/table.html': page(`<header>Head</header><table><tr><td>first</td><td>row</td></tr>${'<tr><td>a</td><td>b</td></tr>'.repeat(60)}<tr><td class="late">late</td><td>row</td></tr></table>`),
  // Issue 49: a hero in a declarative shadow root, painted by the document's custom properties; a custom element whose
  // placeholder shows until its script defines it. The engine reads the page once the script ran.
  '/components.html': page(
    '<site-hero><template shadowrootmode="open"><style>:host{display:block;height:300px;background:linear-gradient(var(--hero-bg),var(--hero-end));color:var(--hero-ink)}h1{margin:0;padding:40px;font:700 40px/1 sans-serif}</style><h1><slot></slot></h1></template>Welcome</site-hero>' +
      '<header>Head <user-badge>Ann</user-badge></header><script src="/badge.js"></script>',
  ),
  // Issue 49: dark mode by media query, with an element only the dark theme shows, and a hero the dark theme makes short:
  // the section after it is in a dark first screen only.
  '/dark.html': page('<header>Head <span class="moon">Dark</span></header><section class="tall">Hero</section><section class="features">Features</section>', '/dark.css'),
}

/** The custom element's definition, which the visitor's browser may run after the first paint. */
const BADGE_JS = `customElements.define('user-badge', class extends HTMLElement {
  connectedCallback() { this.attachShadow({ mode: 'open' }).innerHTML = '<b style="color:var(--badge-ink)">' + this.textContent + '</b>' }
})`

beforeAll(async () => {
  site = await serveFiles({ ...PAGES, '/site.css': SITE_CSS + COMPONENTS_CSS, '/dark.css': SITE_CSS + DARK_CSS, '/wide.svg': WIDE_IMAGE, '/badge.js': BADGE_JS })
  engine = createChromiumEngine()
  unchecked = createChromiumEngine({ checkFirstScreen: false })
  browser = await launchChromium()
})

afterAll(async () => {
  await Promise.all([engine?.close(), unchecked?.close(), browser?.close(), site?.close()])
})

function render(target: ChromiumEngine, path: string, viewports: Viewport[], tenant?: string): Promise<EngineResult> {
  return target.generate({ url: `${site.origin}${path}`, viewports, signal: AbortSignal.timeout(60_000), deadline: Date.now() + 60_000, ...(tenant ? { tenant } : {}) })
}

/**
 * The first viewport of `path` as a phone or a desktop shows it, with `html` served in its place; and how wide its document is.
 * `scriptsLate`: the page's scripts have not come yet, as on a slow network.
 */
async function firstScreen(path: string, html: string, viewport: Viewport, scriptsLate = false, colorScheme: 'light' | 'dark' = 'light'): Promise<{ png: Buffer; width: number }> {
  const phone = viewport.width < 600
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: phone, hasTouch: phone, colorScheme })
  try {
    const tab = await context.newPage()
    await tab.route(`${site.origin}${path}`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }))
    if (scriptsLate) await tab.route((url) => url.pathname.endsWith('.js'), (route) => route.abort())
    await tab.goto(`${site.origin}${path}`, { waitUntil: 'load' })
    const width = await tab.evaluate(() => document.documentElement.scrollWidth)
    return { png: await tab.screenshot({ type: 'png' }), width }
  } finally {
    await context.close()
  }
}

/** Pixels of the first viewport that differ between the page and the page with only `css` in place of its stylesheet. */
async function differingPixels(path: string, css: string, viewport: Viewport, scriptsLate = false, colorScheme: 'light' | 'dark' = 'light'): Promise<{ pixels: number; widths: [number, number] }> {
  const original = PAGES[path]!
  const full = await firstScreen(path, original, viewport, scriptsLate, colorScheme)
  const critical = await firstScreen(path, original.replace(LINK, `<style>${css}</style>`), viewport, scriptsLate, colorScheme)
  return { pixels: compareScreenshots(full.png, critical.png).differentPixels, widths: [full.width, critical.width] }
}

describe('the first screen with only the critical CSS', () => {
  it.each([
    ['a footer its own margin keeps below the fold: without the check it shows in the first screen', '/footer.html', '.site-footer{margin-top:120vh'],
    ['a paragraph its own margin puts just below the fold: without the check a strip of it shows at the bottom edge', '/edge.html', '.edge{margin-top:40px'],
  ])('%s; with it its rule is in and the screens are the same', async (_shape, path, rule) => {
    const before = await render(unchecked, path, [DESKTOP])
    expect((await differingPixels(path, before.css, DESKTOP)).pixels).toBeGreaterThan(0)
    const after = await render(engine, path, [DESKTOP])
    expect(after.css).toContain(rule)
    expect((await differingPixels(path, after.css, DESKTOP)).pixels).toBe(0)
    expect(after.firstScreen).toEqual([])
  })

  it('images below the fold that widen a phone’s document without their rule: the rule is in, the document keeps the phone’s width, the screens are the same', async () => {
    const before = await render(unchecked, '/gallery.html', [DESKTOP, PHONE])
    const broken = await differingPixels('/gallery.html', before.css, PHONE)
    expect(broken.widths).toEqual([PHONE.width, 650])
    expect(broken.pixels).toBeGreaterThan(0)
    const after = await render(engine, '/gallery.html', [DESKTOP, PHONE])
    expect(after.css).toContain('.gallery img{max-width:100%;height:auto}')
    // Only what keeps the document narrow: the section's own padding and background are not needed.
    expect(after.css).not.toContain('#eef')
    for (const viewport of [DESKTOP, PHONE]) expect(await differingPixels('/gallery.html', after.css, viewport)).toEqual({ pixels: 0, widths: [viewport.width, viewport.width] })
    expect(after.firstScreen).toEqual([])
  })

  it('a difference no rule of its own elements repairs is reported, with the share of the screen and the elements, and the screens do differ', async () => {
    const result = await render(engine, '/table.html', [DESKTOP])
    expect((await differingPixels('/table.html', result.css, DESKTOP)).pixels).toBeGreaterThan(0)
    expect(result.css).not.toContain('.late')
    expect(result.firstScreen).toHaveLength(1)
    const [difference] = result.firstScreen!
    expect(difference!.viewport).toEqual(DESKTOP)
    expect(difference!.share).toBeGreaterThan(0)
    expect(difference!.share).toBeLessThan(1)
    expect(difference!.elements[0]).toBe('table')
  })

  it('shadow trees and custom elements: the custom properties a declarative shadow root reads, and an undefined element’s placeholder, are kept; with its script late the screens are the same', async () => {
    const result = await render(engine, '/components.html', [DESKTOP, PHONE])
    expect(result.css).toContain('--hero-bg:#4a148c')
    expect(result.css).toContain('--badge-ink:#0a0')
    expect(result.css).not.toContain('--unused-ink')
    expect(result.css).toContain('user-badge:not(:defined){')
    expect(result.css).toContain('user-badge:defined{')
    for (const viewport of [DESKTOP, PHONE]) {
      expect((await differingPixels('/components.html', result.css, viewport, true)).pixels).toBe(0)
      expect((await differingPixels('/components.html', result.css, viewport)).pixels).toBe(0)
    }
    expect(result.firstScreen).toEqual([])
  })

  it('a page with dark rules by media query: a visitor who prefers dark sees the same first screen with only the critical CSS, and so does one who prefers light', async () => {
    const result = await render(engine, '/dark.html', [DESKTOP, PHONE])
    for (const viewport of [DESKTOP, PHONE]) {
      for (const scheme of ['light', 'dark'] as const) expect({ scheme, ...(await differingPixels('/dark.html', result.css, viewport, false, scheme)) }).toMatchObject({ scheme, pixels: 0 })
    }
    expect(result.firstScreen).toEqual([])
  })

  it('the check leaves the page as it was: where it repairs nothing, the CSS of both viewports, and of a tenant’s next job on the same page, is the CSS without the check', async () => {
    const plain = await render(unchecked, '/table.html', [DESKTOP, PHONE])
    const checked = [await render(engine, '/table.html', [DESKTOP, PHONE], 'tenant'), await render(engine, '/table.html', [DESKTOP, PHONE], 'tenant')]
    expect(checked.map((result) => result.css)).toEqual([plain.css, plain.css])
    expect(checked[1]!.firstScreen).toEqual(checked[0]!.firstScreen)
  })
})
