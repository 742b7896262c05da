/**
 * Issue 49, SvelteKit: a route loaded on a client-side navigation imports a component the
 * start page uses too, with the component's UI-kit stylesheet; the start page's own sheet
 * overrides the kit's `.button`. Built plain and with our adapter in embedded mode, once per
 * preload strategy, and served with every stylesheet held back 300–800 ms (scripts 0–150 ms
 * late on every other load): each of 20 loads starts at the shop's home page, follows the
 * link to the lazy route, and must ask for each stylesheet once, have no two `<link>`s of one
 * kind for one href, apply the sheets in the plain build's order and end with the plain
 * build's button colour. SvelteKit starts from an inline script in the body, before the
 * parser reaches the body's end: with `body`, links moved there were not found by Vite's
 * preload helper as the app started, and it linked every sheet a second time (20 of 20 loads
 * before the fix: each sheet requested twice, the cascade 0 < kit < page < kit < page).
 */
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import type { PreloadStrategy } from '../../src/html/strategies.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { failures, raceLoads, type RaceOptions } from '../fixtures/race-loads.ts'
import { buildSvelteKitLazyApp, createSvelteKitLazyApp, removeSvelteKitLazyApp, SVELTEKIT_BASE, SVELTEKIT_BUTTON_COLOR, type SvelteKitLazyBuild } from '../fixtures/sveltekit-lazy-app.ts'

const LOADS = 20
const STRATEGIES: PreloadStrategy[] = ['loader', 'body', 'media', 'swap', 'none']

let browser: Browser
let root: string
let plain: SvelteKitLazyBuild
const built = new Map<PreloadStrategy, SvelteKitLazyBuild>()

/** The stylesheets the home page links, as paths, in the plain build's order: the layout's, the kit's, the page's. */
function order(): string[] {
  const html = plain.files.get(`${SVELTEKIT_BASE.slice(1)}/index.html`)!
  return [...html.matchAll(/<link href="\.\/([^"]+\.css)" rel="stylesheet">/g)].map((match) => `${SVELTEKIT_BASE}/${match[1]}`)
}

const visitLazyRoute: RaceOptions['visit'] = async (page) => {
  await page.waitForSelector('html[data-hydrated]', { state: 'attached', timeout: 10_000 })
  await page.click('#go')
  await page.waitForSelector('#buy', { timeout: 10_000 })
}

describe.skipIf(!findChromium())('a SvelteKit app whose lazily loaded route imports a component the home page uses, with its UI kit’s stylesheet', () => {
  beforeAll(async () => {
    root = await createSvelteKitLazyApp()
    plain = await buildSvelteKitLazyApp(root, null)
    // One at a time: each build writes the same project's output folders.
    for (const preload of STRATEGIES) built.set(preload, await buildSvelteKitLazyApp(root, { preload, cache: false, report: false }))
    browser = await launchChromium()
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    if (root) await removeSvelteKitLazyApp(root)
  })

  it('as built: the home page links the layout’s sheet, the kit’s, then its own override; the app’s route table names the kit’s', () => {
    const sheets = order()
    expect(sheets).toHaveLength(3)
    const kit = sheets[1]!.slice(sheets[1]!.lastIndexOf('/') + 1)
    expect(kit).toMatch(/^Card\./)
    // The app's route table names the CSS its route nodes load, the kit's among them: its preload helper looks that sheet up.
    const app = [...plain.files].find(([file]) => /\/entry\/app\.[^/]+\.js$/.test(file))![1]
    expect(app).toContain(`"../assets/${kit}"`)
  })

  it.concurrent(`as built: each stylesheet once, in order, the override's colour on the lazy route, in ${LOADS} of ${LOADS} loads`, async ({ expect }) => {
    const outcomes = await raceLoads(browser, plain.files, { loads: LOADS, sheets: order(), path: `${SVELTEKIT_BASE}/`, visit: visitLazyRoute })
    expect(failures(outcomes, { order: order(), color: SVELTEKIT_BUTTON_COLOR })).toEqual([])
  }, 180_000)

  it.concurrent.for(STRATEGIES)(`with the adapter and preload: '%s': critical CSS inline, and the same, in ${LOADS} of ${LOADS} loads`, { timeout: 180_000 }, async (preload, { expect }) => {
    const build = built.get(preload)!
    expect(build.files.get(`${SVELTEKIT_BASE.slice(1)}/index.html`)).toContain('<style data-critical-css>')
    const outcomes = await raceLoads(browser, build.files, { loads: LOADS, sheets: order(), path: `${SVELTEKIT_BASE}/`, visit: visitLazyRoute })
    expect(failures(outcomes, { order: order(), color: SVELTEKIT_BUTTON_COLOR })).toEqual([])
  })
})
