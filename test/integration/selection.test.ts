/**
 * Issue 49, items 4 and 5: the user's say over the critical set, and other states of `<html>`.
 * Pages are rendered by the real engine (Chromium) from a local server; a themed page is then
 * opened in another browser as a visitor with the dark theme saved arrives, with its stylesheet
 * and with only the engine's CSS in its place, and the first viewports compared pixel by pixel.
 * The folder command shows that `keep` and `drop` reach the inlined CSS, cache or not.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Selection, Viewport } from '../../src/contract/api-contract.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import type { EngineResult } from '../../src/engine/engine.ts'
import { processDirectory } from '../../src/index.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 })

const DESKTOP = { width: 1300, height: 900 }
const PHONE = { width: 412, height: 915 }
const LINK = /<link rel="stylesheet" href="[^"]+">/

/** A saved theme applied before first paint, as theme switchers do. */
const THEME_SCRIPT = `<script>if (localStorage.getItem('theme') === 'dark') document.documentElement.setAttribute('data-theme', 'dark')</script>`

const page = (body: string, sheet: string, head = ''): string =>
  `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title>${head}<link rel="stylesheet" href="${sheet}"></head><body>${body}</body></html>`

/** The dark theme makes the hero short, so the features section is in its first screen only; the header's colours change too. */
const THEME_CSS = `
body{margin:0;font:16px/1.5 sans-serif}
header{height:80px;background:#123;color:#fff}
.hero{height:100vh;background:#e3f2fd}
.features{padding:30px;background:#0d47a1;color:#fff}
.footer{padding:30px;background:#333}
[data-theme=dark] body{background:#111;color:#eee}
[data-theme=dark] header{background:#000;color:#ffeb3b}
[data-theme=dark] .hero{height:200px;background:#263238}
`

/** A menu a script opens, a backdrop no page shows until a dialog opens, a banner above the fold, a web font and a spinner. */
const MENU_CSS = `
body{margin:0;font:16px/1.5 sans-serif}
header{height:80px;background:#123;color:#fff;font-family:Brand,sans-serif}
.menu{display:none}
.menu.is-open{display:block;background:#c00}
.menu > .item.is-active{color:#ff0}
@media (max-width:600px){.menu.is-open{position:fixed;top:0}}
.modal-backdrop{position:fixed;inset:0;background:rgba(0,0,0,.5)}
.cookie-banner{position:fixed;top:0;right:0;background:#fe0}
.spinner{width:20px;height:20px;animation:spin 1s linear infinite}
@font-face{font-family:Brand;src:url(/brand.woff2) format("woff2")}
@keyframes spin{to{transform:rotate(360deg)}}
`

/**
 * The saved theme shortens the hero, the system's dark preference drops the spacer below it:
 * only both at once bring the offer into the first screen (a hidden element counts as above
 * the fold, its rules keep it hidden: the offer is shown in every state).
 */
const COMBO_CSS = `
body{margin:0;font:16px/1.5 sans-serif}
header{height:80px;background:#123;color:#fff}
.hero{height:100vh;background:#e3f2fd}
.spacer{height:50vh}
.offer{padding:30px;background:#b71c1c;color:#fff}
[data-theme=dark] .hero{height:60vh}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}.spacer{height:0}}
`

const PAGES: Record<string, string> = {
  '/combo.html': page('<header>Head</header><section class="hero">Hero</section><div class="spacer"></div><section class="offer">Offer</section>', '/combo.css', THEME_SCRIPT),
  '/theme.html': page('<header>Head</header><section class="hero">Hero</section><section class="features">Features</section><footer class="footer">Foot</footer>', '/theme.css', THEME_SCRIPT),
  '/menu.html': page('<header>Head <nav class="menu"><a class="item">One</a></nav><div class="spinner"></div></header><div class="cookie-banner">Cookies</div><main>Text</main>', '/menu.css'),
}

let site: StaticServer
let engine: ChromiumEngine
let browser: Browser

beforeAll(async () => {
  site = await serveFiles({ ...PAGES, '/theme.css': THEME_CSS, '/menu.css': MENU_CSS, '/combo.css': COMBO_CSS })
  engine = createChromiumEngine()
  browser = await launchChromium()
})

afterAll(async () => {
  await Promise.all([engine?.close(), browser?.close(), site?.close()])
})

function render(path: string, viewports: Viewport[], selection?: Selection): Promise<EngineResult> {
  return engine.generate({ url: `${site.origin}${path}`, viewports, signal: AbortSignal.timeout(90_000), deadline: Date.now() + 90_000, ...(selection ? { selection } : {}) })
}

/** The first viewport of `path` with `html` served in its place, as a visitor whose saved theme is `theme` (null: none) sees it. */
async function firstScreen(path: string, html: string, viewport: Viewport, theme: 'dark' | null, colorScheme: 'light' | 'dark' = 'light'): Promise<Buffer> {
  const phone = viewport.width < 600
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: phone, hasTouch: phone, colorScheme })
  try {
    if (theme) await context.addInitScript((saved) => localStorage.setItem('theme', saved), theme)
    const tab = await context.newPage()
    await tab.route(`${site.origin}${path}`, (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }))
    await tab.goto(`${site.origin}${path}`, { waitUntil: 'load' })
    return await tab.screenshot({ type: 'png' })
  } finally {
    await context.close()
  }
}

async function differingPixels(path: string, css: string, viewport: Viewport, theme: 'dark' | null, colorScheme: 'light' | 'dark' = 'light'): Promise<number> {
  const original = PAGES[path]!
  const full = await firstScreen(path, original, viewport, theme, colorScheme)
  const critical = await firstScreen(path, original.replace(LINK, `<style>${css}</style>`), viewport, theme, colorScheme)
  return compareScreenshots(full, critical).differentPixels
}

describe('states: other states of <html> a head script sets before first paint', () => {
  it('a saved dark theme that shortens the hero: with the state, a visitor in it sees the full page’s first screen with only the critical CSS, and so does one without; without the state the dark screen differs', async () => {
    const without = await render('/theme.html', [DESKTOP, PHONE])
    expect(without.css).not.toContain('[data-theme=dark]')
    expect(await differingPixels('/theme.html', without.css, DESKTOP, 'dark')).toBeGreaterThan(0)

    const withState = await render('/theme.html', [DESKTOP, PHONE], { states: ['[data-theme=dark]'] })
    expect(withState.css).toContain('[data-theme=dark] .hero{height:200px')
    expect(withState.css).toContain('[data-theme=dark] header{')
    // The section the dark hero brings into the first screen.
    expect(withState.css).toContain('.features{')
    for (const viewport of [DESKTOP, PHONE]) {
      for (const theme of ['dark', null] as const) expect({ viewport, theme, pixels: await differingPixels('/theme.html', withState.css, viewport, theme) }).toEqual({ viewport, theme, pixels: 0 })
    }
    expect(withState.firstScreen).toEqual([])
  })

  it('a state is read in both colour schemes where the page has dark rules: a saved theme with the system’s dark preference gets its first screen too', async () => {
    const result = await render('/combo.html', [DESKTOP, PHONE], { states: ['[data-theme=dark]'] })
    expect(result.css).toContain('.offer{padding:30px;background:#b71c1c;color:#fff}')
    for (const viewport of [DESKTOP, PHONE]) {
      for (const [theme, scheme] of [['dark', 'dark'], ['dark', 'light'], [null, 'dark'], [null, 'light']] as const) {
        expect({ viewport, theme, scheme, pixels: await differingPixels('/combo.html', result.css, viewport, theme, scheme) }).toEqual({ viewport, theme, scheme, pixels: 0 })
      }
    }
    expect(result.firstScreen).toEqual([])
  })

  it('a difference that stays in a state says the state it was read in: the dark header dropped differs in `[data-theme=dark]` only', async () => {
    const result = await render('/theme.html', [DESKTOP], { states: ['[data-theme=dark]'], drop: ['[data-theme=dark] header'] })
    expect(result.firstScreen?.map(({ viewport, state, elements }) => ({ viewport, state, header: elements.some((element) => element.startsWith('header')) }))).toEqual([{ viewport: DESKTOP, state: '[data-theme=dark]', header: true }])
  })

  it('the quoted and the class forms are read too; the next job without states, on the same parsed sheets, gets the plain CSS', async () => {
    const quoted = await render('/theme.html', [DESKTOP], { states: ['[data-theme="dark"]', '.unused-state'] })
    expect(quoted.css).toContain('[data-theme=dark] .hero{height:200px')
    const plain = await render('/theme.html', [DESKTOP])
    expect(plain.css).not.toContain('[data-theme=dark]')
  })
})

describe('keep, drop, keepFontFaces and keepKeyframes', () => {
  it('keep adds the rules of selectors no first screen shows (their media still apply), drop takes out a rule above the fold, and font faces and keyframes can be left out; a job without a say after it gets the plain CSS', async () => {
    const selection: Selection = { keep: ['.menu.is-open', '.modal-backdrop', '.menu>.item.is-active'], drop: ['.cookie-banner'], fontFaces: false, keyframes: false }
    const said = await render('/menu.html', [DESKTOP], selection)
    const plain = await render('/menu.html', [DESKTOP])

    expect(plain.css).not.toContain('.menu.is-open')
    expect(plain.css).not.toContain('.modal-backdrop')
    expect(plain.css).toContain('.cookie-banner{')
    expect(plain.css).toContain('@font-face{font-family:Brand')
    expect(plain.css).toContain('@keyframes spin')

    expect(said.css).toContain('.menu.is-open{display:block;background:#c00}')
    expect(said.css).toContain('.modal-backdrop{')
    // Compared as css-tree writes selectors: the spacing of `.menu > .item.is-active` does not matter.
    expect(said.css).toContain('.menu>.item.is-active{color:#ff0}')
    // Kept as if above the fold, not past its media query: the phone-only rule is not in a desktop-only render.
    expect(said.css).not.toContain('top:0')
    expect(said.css).not.toContain('cookie-banner')
    expect(said.css).not.toContain('@font-face')
    expect(said.css).not.toContain('@keyframes')
    // The rules that use them stay: only the at-rules go.
    expect(said.css).toContain('font-family:Brand,sans-serif')
    expect(said.css).toContain('.spinner{')
  })
})

/** A folder with one page and its sheet, in its own directory below `root`. */
async function folder(root: string, name: string): Promise<string> {
  const dist = join(root, name)
  const files: Record<string, string> = { 'index.html': PAGES['/menu.html']!, 'menu.css': MENU_CSS }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dist, file)), { recursive: true })
    await writeFile(join(dist, file), text)
  }
  return dist
}

const quiet = (): BuildLogger => ({ info: () => {}, warn: () => {} })

describe('the folder command', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ucc-selection-'))
    await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('inlines what keep and drop say, and never takes the cached CSS of the same page made without them', async () => {
    const plainDist = await folder(root, 'plain')
    await processDirectory(plainDist, {}, { root, logger: quiet(), env: {} })
    const plain = CRITICAL.exec(await readFile(join(plainDist, 'index.html'), 'utf8'))?.[1] ?? ''
    expect(plain).toContain('.cookie-banner{')
    expect(plain).not.toContain('.menu.is-open')

    // The same page in a folder of the same root: the same cache, which holds the CSS made without a say.
    const saidDist = await folder(root, 'said')
    const { report } = await processDirectory(saidDist, { keep: ['.menu.is-open'], drop: ['.cookie-banner'] }, { root, logger: quiet(), env: {} })
    expect(report.pages.map((entry) => entry.source)).toEqual(['embedded'])
    const said = CRITICAL.exec(await readFile(join(saidDist, 'index.html'), 'utf8'))?.[1] ?? ''
    expect(said).toContain('.menu.is-open{display:block;background:#c00}')
    expect(said).not.toContain('cookie-banner')
  })

  it('keep and drop as RegExps: the selectors they match in the folder’s stylesheets are kept and dropped as if written out', async () => {
    const dist = await folder(root, 'patterns')
    await processDirectory(dist, { keep: [/^\.menu\.is-/], drop: [/cookie/] }, { root, logger: quiet(), env: {} })
    const css = CRITICAL.exec(await readFile(join(dist, 'index.html'), 'utf8'))?.[1] ?? ''
    expect(css).toContain('.menu.is-open{display:block;background:#c00}')
    expect(css).not.toContain('cookie-banner')
  })

  it('with preloadFonts, the font the critical CSS uses is preloaded before it and fetched once; a second run changes nothing', async () => {
    const dist = await folder(root, 'fonts')
    await processDirectory(dist, { preloadFonts: true }, { root, logger: quiet(), env: {} })
    const html = await readFile(join(dist, 'index.html'), 'utf8')
    const preload = '<link rel="preload" as="font" type="font/woff2" href="/brand.woff2" crossorigin data-critical-css>'
    expect(html).toContain(`${preload}<style data-critical-css>`)
    expect(html.split(preload)).toHaveLength(2)
    const again = await processDirectory(dist, { preloadFonts: true }, { root, logger: quiet(), env: {} })
    expect(again.written).toEqual([])

    // The preload is the request the face uses: a preload that did not match it (no crossorigin) would be fetched a second time.
    const served = await serveFiles({ '/index.html': html, '/menu.css': MENU_CSS, '/brand.woff2': 'not a font' })
    const context = await browser.newContext()
    try {
      const tab = await context.newPage()
      await tab.goto(`${served.origin}/index.html`, { waitUntil: 'load' })
      await tab.evaluate(() => document.fonts.ready)
      expect(served.requests.filter((path) => path === '/brand.woff2')).toEqual(['/brand.woff2'])
    } finally {
      await context.close()
      await served.close()
    }
  })
})
