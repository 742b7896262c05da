/**
 * Issue 33: the app's own start-up must never race the loader. A Vite app whose shared UI
 * chunk's CSS is both linked by the page and a dependency of a dynamic import made at
 * start-up, served with every stylesheet held back 300–800 ms (and, every other load, its
 * scripts 0–150 ms), loaded 20 times as built and 20 times with the plugin (default
 * `loader` strategy; and 10 times started from an inline script, as SvelteKit starts): each
 * load asks for each stylesheet once, has no two `<link>`s of one kind for one href,
 * applies the stylesheets in the plain build's order, and ends with the button the colour
 * the app gave it.
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../fixtures/browser.ts'
import { startFakeService, type FakeService } from '../fixtures/fake-service.ts'
import { failures, raceLoads } from '../fixtures/race-loads.ts'
import { APP_BUTTON_COLOR, buildUiChunkApp, buildUiChunkAppWebpack, createUiChunkApp, removeUiChunkApp, type UiChunkBuild } from '../fixtures/ui-chunk-app.ts'

const LOADS = 20
const TOKEN = 'tok_loader_race_0123456789'
/** What a render of the page would keep: both button rules, in the cascade's order. */
const CRITICAL_CSS = '.button{color:blue;font:16px system-ui,sans-serif;padding:.5rem 1rem}.button{color:red}#app{min-height:40vh}'
/** What a render keeps when every rule is above the fold: nearly all of both sheets, which a page with no lazy chunk would get whole (issue 35). */
const ALL_CSS = '.button{color:blue;font:16px system-ui,sans-serif;padding:.5rem 1rem}.card{border:1px solid #ccc;padding:1rem}#app{min-height:40vh}.button{color:red}'

let browser: Browser
let fake: FakeService
let fakeAll: FakeService
let root: string
let plain: UiChunkBuild
let withPlugin: UiChunkBuild
let nearlyAll: UiChunkBuild
let webpackPlain: UiChunkBuild
let webpackPlugin: UiChunkBuild
let webpackNearlyAll: UiChunkBuild
/** The app built with each other strategy than the default. */
const OTHER_STRATEGIES = ['body', 'media', 'swap', 'none'] as const
const byStrategy = new Map<(typeof OTHER_STRATEGIES)[number], UiChunkBuild>()

beforeAll(async () => {
  fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour: () => ({ css: CRITICAL_CSS, instant: true }) })
  root = await createUiChunkApp()
  plain = await buildUiChunkApp(root, 'plain', null)
  withPlugin = await buildUiChunkApp(root, 'plugin', { baseUrl: fake.url, token: TOKEN, siteUrl: 'https://shop.example', cache: false, report: false })
  fakeAll = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour: () => ({ css: ALL_CSS, instant: true }) })
  nearlyAll = await buildUiChunkApp(root, 'nearly-all', { baseUrl: fakeAll.url, token: TOKEN, siteUrl: 'https://shop.example', cache: false, report: false })
  webpackPlain = await buildUiChunkAppWebpack(root, 'webpack-plain', null)
  webpackPlugin = await buildUiChunkAppWebpack(root, 'webpack-plugin', { baseUrl: fake.url, token: TOKEN, siteUrl: 'https://shop.example', cache: false, report: false })
  webpackNearlyAll = await buildUiChunkAppWebpack(root, 'webpack-nearly-all', { baseUrl: fakeAll.url, token: TOKEN, siteUrl: 'https://shop.example', cache: false, report: false })
  for (const preload of OTHER_STRATEGIES) byStrategy.set(preload, await buildUiChunkApp(root, `plugin-${preload}`, { baseUrl: fake.url, token: TOKEN, siteUrl: 'https://shop.example', cache: false, report: false, preload }))
  browser = await launchChromium()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await fake?.close()
  await fakeAll?.close()
  if (root) await removeUiChunkApp(root)
})

describe('a Vite app whose shared UI chunk’s CSS is linked and a dependency of a start-up import', () => {
  /** The stylesheets' paths as the plain build links them: the UI kit's, then the app's. */
  const order = (): string[] => {
    const css = [...plain.files.keys()].filter((file) => file.endsWith('.css'))
    return [css.find((file) => file.includes('/ui-'))!, css.find((file) => file.includes('/index-'))!].map((file) => `/${file}`)
  }

  it('as built: links the UI CSS before the app CSS, and names it among the dynamic import’s deps', () => {
    const [ui, app] = order() as [string, string]
    const html = plain.files.get('index.html')!
    expect(html.indexOf(`href="${ui}"`)).toBeGreaterThan(0)
    expect(html.indexOf(`href="${ui}"`)).toBeLessThan(html.indexOf(`href="${app}"`))
    const entry = [...plain.files].find(([file]) => /^assets\/index-.*\.js$/.test(file))![1]
    expect(entry).toContain(`"${ui.slice(1)}"`)
    expect(entry).toContain('__vitePreload')
  })

  it('with the plugin: the critical CSS is inline and no stylesheet blocks render', () => {
    const html = withPlugin.files.get('index.html')!
    expect(html).toContain('<style data-critical-css>')
    expect(html).toMatch(/critical-css-loader\.[0-9a-f]{8}\.js/)
    expect(withPlugin.warnings).toEqual([])
  })

  // Each run of loads has its own server: they run side by side, which only adds to the jitter the loads are made to meet.
  it.concurrent(`as built: each stylesheet once, in order, the app's colour, in ${LOADS} of ${LOADS} loads`, async ({ expect }) => {
    const outcomes = await raceLoads(browser, plain.files, { loads: LOADS, sheets: order() })
    expect(failures(outcomes, { order: order(), color: APP_BUTTON_COLOR })).toEqual([])
  }, 120_000)

  it.concurrent(`with the plugin: the same, in ${LOADS} of ${LOADS} loads`, async ({ expect }) => {
    const outcomes = await raceLoads(browser, withPlugin.files, { loads: LOADS, sheets: order() })
    expect(failures(outcomes, { order: order(), color: APP_BUTTON_COLOR })).toEqual([])
  }, 120_000)

  it.concurrent(`with critical CSS that is nearly all of the sheets: they stay linked, since the lazy chunk asks for the UI kit’s; the same, in ${LOADS} of ${LOADS} loads`, async ({ expect }) => {
    // Inlined whole, the kit's sheet had no link: the chunk's preload helper appended one after the app's inlined sheet, and the kit's blue won.
    const html = nearlyAll.files.get('index.html')!
    for (const sheet of order()) expect(html).toContain(`href="${sheet}"`)
    expect(html).toContain('<style data-critical-css>')
    const outcomes = await raceLoads(browser, nearlyAll.files, { loads: LOADS, sheets: order() })
    expect(failures(outcomes, { order: order(), color: APP_BUTTON_COLOR })).toEqual([])
  }, 120_000)

  it.concurrent.for(OTHER_STRATEGIES)(`with the plugin and preload: '%s': the same, in ${LOADS} of ${LOADS} loads`, { timeout: 120_000 }, async (preload, { expect }) => {
    const built = byStrategy.get(preload)!
    expect(built.files.get('index.html')).toContain('<style data-critical-css>')
    const outcomes = await raceLoads(browser, built.files, { loads: LOADS, sheets: order() })
    expect(failures(outcomes, { order: order(), color: APP_BUTTON_COLOR })).toEqual([])
  })

  it.concurrent(`with the plugin, the app started from an inline script in the body as SvelteKit starts it: the same, in ${LOADS / 2} of ${LOADS / 2} loads`, async ({ expect }) => {
    const files = new Map(withPlugin.files).set('index.html', startedInline(withPlugin.files.get('index.html')!))
    const outcomes = await raceLoads(browser, files, { loads: LOADS / 2, sheets: order() })
    expect(failures(outcomes, { order: order(), color: APP_BUTTON_COLOR })).toEqual([])
  }, 120_000)
})

/**
 * The page with its entry imported by an inline classic script at the end of the body: it
 * runs while the document is still parsed, before any deferred script, so no placement of
 * the loader could make it run first.
 */
function startedInline(html: string): string {
  const entry = /<script type="module" crossorigin src="([^"]+)"><\/script>/.exec(html)
  if (!entry) throw new Error('no entry script in the page')
  return html.replace(entry[0], '').replace('</body>', `<script>import(${JSON.stringify(entry[1])})</script>\n</body>`)
}

describe('the same app built by webpack with mini-css-extract-plugin: the UI kit a chunk of its own, linked, and imported again by an async chunk', () => {
  /** The stylesheets as the plain build links them: the UI kit's chunk, then the entry's. */
  const order = (): string[] => {
    const css = [...webpackPlain.files.keys()].filter((file) => file.endsWith('.css'))
    return [css.find((file) => file.startsWith('assets/ui.'))!, css.find((file) => file.startsWith('assets/main.'))!].map((file) => `/${file}`)
  }

  it('as built: links the UI CSS before the app CSS', () => {
    const [ui, app] = order() as [string, string]
    const html = webpackPlain.files.get('index.html')!
    expect(html.indexOf(ui)).toBeGreaterThan(0)
    expect(html.indexOf(ui)).toBeLessThan(html.indexOf(app))
  })

  it.concurrent.for([
    ['as built', () => webpackPlain],
    ['with the plugin', () => webpackPlugin],
    ['with critical CSS that is nearly all of the sheets', () => webpackNearlyAll],
  ] as const)(`%s: each stylesheet asked for at most once, the app's colour, in ${LOADS} of ${LOADS} loads`, { timeout: 120_000 }, async ([, build], { expect }) => {
    const files = build().files
    // Inlined whole (webpack's runtime counts an initial chunk's CSS as loaded and never asks for it), a sheet is asked for by no load.
    const inline = order().filter((sheet) => !files.get('index.html')!.includes(sheet))
    const outcomes = await raceLoads(browser, files, { loads: LOADS, sheets: order().filter((sheet) => !inline.includes(sheet)) })
    expect(failures(outcomes, { order: order().filter((sheet) => !inline.includes(sheet)), color: APP_BUTTON_COLOR })).toEqual([])
  })
})
