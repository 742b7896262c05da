/**
 * Issue 50, Nuxt 4 end to end: a server build (`nuxt build`, Nitro's node-server preset)
 * with our module and without it, each started as a user starts it. Pages Nitro renders get
 * their route's critical CSS from the Nitro plugin, a sampled URL and one the build never saw
 * alike; their first screen with every stylesheet held back is the plain app's, and so is the
 * fully loaded page; what the manifest does not cover goes out byte-identical.
 */
import { readFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { applyCriticalCss, loadManifest, type CriticalCssManifest } from '../../src/runtime.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { output } from '../fixtures/frameworks.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { buildNuxtServerApp, createNuxtServerApp, removeNuxtServerApp, startNuxtServer } from '../fixtures/nuxt-server-app.ts'
import { get, screen, type RunningApp } from '../fixtures/running-app.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'

const VIEWPORTS: Viewport[] = [
  { width: 1300, height: 900 },
  { width: 412, height: 915 },
]
const SAMPLED = '/posts/hello'
const NOT_SAMPLED = '/posts/not-sampled'

describe.sequential('Nuxt 4 server routes: `nuxt build` (node-server)', () => {
  let root: string
  let buildLog: string
  let manifest: CriticalCssManifest
  let plain: RunningApp
  let built: RunningApp
  let browser: Browser

  beforeAll(async () => {
    root = await createNuxtServerApp()
    const off = await buildNuxtServerApp(root, null)
    expect(off.code, output(off)).toBe(0)
    await rename(join(root, '.output'), join(root, 'output-plain'))
    const on = await buildNuxtServerApp(root, { cache: false, viewports: VIEWPORTS, samples: { '/posts/:slug()': SAMPLED } })
    buildLog = output(on)
    expect(on.code, buildLog).toBe(0)
    manifest = JSON.parse(await readFile(join(root, '.output', 'server', 'critical-css.json'), 'utf8')) as CriticalCssManifest
    ;[plain, built, browser] = await Promise.all([startNuxtServer(root, join(root, 'output-plain')), startNuxtServer(root, join(root, '.output')), launchChromium()])
  }, 240_000)

  afterAll(async () => {
    await Promise.all([plain?.stop(), built?.stop(), browser?.close()])
    if (root) await removeNuxtServerApp(root)
  })

  it('the build renders every page route, the one with a parameter from its sample, into the manifest beside the server', () => {
    expect(manifest.routes.map((route) => route.route).sort()).toEqual(['/', '/about', '/posts/:slug()', '/pricing'])
    const posts = manifest.routes.find((route) => route.route === '/posts/:slug()')!
    expect(posts.css).toContain('.post-header{')
    expect(posts.css).not.toContain('blockquote')
    expect(buildLog).toMatch(/4 server routes get critical CSS at request time: .*\/posts\/:slug\(\) \(from \/posts\/hello\)/)
  })

  it('a page of a covered route, sampled or not, is the plain app’s page with the route’s CSS inserted as the runtime does', async () => {
    const loaded = loadManifest(manifest)
    for (const path of [SAMPLED, NOT_SAMPLED, '/about', '/']) {
      const [before, after] = await Promise.all([get(plain, path), get(built, path)])
      expect(before.status, path).toBe(200)
      expect(after.body.toString('utf8'), path).toBe(applyCriticalCss(before.body.toString('utf8'), path, loaded))
      expect(after.body.toString('utf8'), path).toMatch(CRITICAL)
    }
  })

  it('what the manifest does not cover is byte-identical to the plain app’s: an error page of a covered route, a payload, a file', async () => {
    for (const path of ['/posts/nope', '/no-such-page', '/posts/hello/_payload.json']) {
      const [before, after] = await Promise.all([get(plain, path), get(built, path)])
      expect({ status: after.status, type: after.type }, path).toEqual({ status: before.status, type: before.type })
      expect(after.body.equals(before.body), path).toBe(true)
    }
    const sheet = manifest.routes[0]!.sheets[0]!
    const [before, after] = await Promise.all([get(plain, sheet), get(built, sheet)])
    expect(after.body.equals(before.body)).toBe(true)
  })

  it('with every stylesheet held back, the first screen of a sampled and an unsampled page is the plain app’s fully loaded one, at each viewport', async () => {
    for (const path of [SAMPLED, NOT_SAMPLED, '/about']) {
      for (const viewport of VIEWPORTS) {
        const [loaded, first] = await Promise.all([screen(browser, plain, path, viewport, false), screen(browser, built, path, viewport, true)])
        expect(compareScreenshots(loaded, first).differentPixels, `${path} at ${viewport.width}×${viewport.height}`).toBe(0)
      }
    }
  }, 90_000)

  it('once every stylesheet has loaded, the page is pixel-identical to the plain app’s', async () => {
    for (const path of [SAMPLED, NOT_SAMPLED, '/about']) {
      for (const viewport of VIEWPORTS) {
        const [before, after] = await Promise.all([screen(browser, plain, path, viewport, false, true), screen(browser, built, path, viewport, false, true)])
        expect(compareScreenshots(before, after).differentPixels, `${path} at ${viewport.width}×${viewport.height}`).toBe(0)
      }
    }
  }, 90_000)
})
