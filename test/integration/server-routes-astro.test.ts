/**
 * Issue 50, Astro end to end: a server app (node adapter, standalone) built with our
 * integration and without it, each started as a user starts it. Pages rendered on demand get
 * their route's critical CSS at request time, a sampled URL and one the build never saw
 * alike; their first screen with every stylesheet held back is the plain app's, and so is the
 * fully loaded page; what the manifest does not cover goes out byte-identical.
 */
import { cp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { applyCriticalCss, loadManifest, type CriticalCssManifest } from '../../src/runtime.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { buildAstroServerApp, createAstroServerApp, removeAstroServerApp, SERVER_OUT, startAstroServer } from '../fixtures/astro-server-app.ts'
import { get, screen, type RunningApp } from '../fixtures/running-app.ts'
import { output } from '../fixtures/frameworks.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'
import { until } from '../fixtures/until.ts'

const VIEWPORTS: Viewport[] = [
  { width: 1300, height: 900 },
  { width: 412, height: 915 },
]
const SAMPLED = '/posts/hello'
const NOT_SAMPLED = '/posts/not-sampled'

describe.sequential('Astro server routes: `output: server` with the node adapter', () => {
  let root: string
  let plainOut: string
  let builtOut: string
  let buildLog: string
  let manifest: CriticalCssManifest
  let plain: RunningApp
  let built: RunningApp
  let browser: Browser

  beforeAll(async () => {
    root = await createAstroServerApp()
    const off = await buildAstroServerApp(root, null)
    expect(off.code, output(off)).toBe(0)
    plainOut = join(root, 'dist-plain')
    await rename(join(root, SERVER_OUT), plainOut)
    const on = await buildAstroServerApp(root, { cache: false, viewports: VIEWPORTS, samples: { '/posts/[slug]': SAMPLED } })
    buildLog = output(on)
    expect(on.code, buildLog).toBe(0)
    builtOut = join(root, SERVER_OUT)
    manifest = JSON.parse(await readFile(join(builtOut, 'server', 'critical-css.json'), 'utf8')) as CriticalCssManifest
    ;[plain, built, browser] = await Promise.all([startAstroServer(root, plainOut), startAstroServer(root, builtOut), launchChromium()])
  }, 180_000)

  afterAll(async () => {
    await Promise.all([plain?.stop(), built?.stop(), browser?.close()])
    if (root) await removeAstroServerApp(root)
  })

  it('the build renders every on-demand route, a route with a parameter from its sample, and writes the manifest into the server folder', () => {
    expect(manifest.routes.map((route) => route.route)).toEqual(['/about', '/blog/first-post', '/blog', '/posts/[slug]'])
    const posts = manifest.routes.find((route) => route.route === '/posts/[slug]')!
    // The post's header fills the first screen; its article and footer are below it.
    expect(posts.css).toContain('.post-header{')
    expect(posts.css).not.toContain('.post-footer')
    expect(posts.css).not.toContain('blockquote')
    expect(posts.sheets).toHaveLength(1)
    expect(buildLog).toMatch(/4 server routes get critical CSS at request time: \/about, \/blog\/first-post, \/blog, \/posts\/\[slug\] \(from \/posts\/hello\)/)
  })

  it('a page of a covered route, sampled or not, is the plain app’s page with the route’s CSS inserted as the runtime does', async () => {
    const loaded = loadManifest(manifest)
    for (const path of [SAMPLED, NOT_SAMPLED, '/about', '/blog']) {
      const [before, after] = await Promise.all([get(plain, path), get(built, path)])
      expect(before.status, path).toBe(200)
      const html = before.body.toString('utf8')
      expect(after.body.toString('utf8'), path).toBe(applyCriticalCss(html, path, loaded))
      expect(after.body.toString('utf8'), path).toMatch(CRITICAL)
    }
  })

  it('what the manifest does not cover is byte-identical to the plain app’s: a page linking another sheet, a 404, a static file, a path no route has', async () => {
    for (const path of ['/posts/styled', '/posts/nope', '/robots.txt', '/no-such-page']) {
      const [before, after] = await Promise.all([get(plain, path), get(built, path)])
      expect({ status: after.status, type: after.type }, path).toEqual({ status: before.status, type: before.type })
      expect(after.body.equals(before.body), path).toBe(true)
    }
    expect((await get(built, '/posts/styled')).body.toString('utf8')).toContain('href="/extra.css"')
  })

  it('a server whose manifest is missing or broken serves every page as the plain app does, and says so once; no request fails', async () => {
    for (const [name, manifestText] of [['missing', null], ['broken', '{"version":1,']] as const) {
      const copy = join(root, `dist-${name}`)
      await cp(builtOut, copy, { recursive: true })
      const file = join(copy, 'server', 'critical-css.json')
      if (manifestText === null) await rm(file)
      else await writeFile(file, manifestText)
      const app = await startAstroServer(root, copy)
      try {
        for (const path of [SAMPLED, NOT_SAMPLED, SAMPLED]) {
          const [before, after] = await Promise.all([get(plain, path), get(app, path)])
          expect(after.status, `${name} ${path}`).toBe(200)
          expect(after.body.equals(before.body), `${name} ${path}`).toBe(true)
        }
        // Its standard error is another pipe than the answers: the line may come after them.
        const said = (): string[] => app.output().split('\n').filter((line) => line.includes('pages are served without critical CSS'))
        expect(await until(() => said().length > 0, 15_000), name).toBe(true)
        expect(said(), name).toHaveLength(1)
        expect(said()[0]).toContain(file)
      } finally {
        await app.stop()
      }
    }
  })

  it('with every stylesheet held back, the first screen of a sampled and an unsampled page is the plain app’s fully loaded one, at each viewport', async () => {
    for (const path of [SAMPLED, NOT_SAMPLED]) {
      for (const viewport of VIEWPORTS) {
        const [loaded, first] = await Promise.all([screen(browser, plain, path, viewport, false), screen(browser, built, path, viewport, true)])
        expect(compareScreenshots(loaded, first).differentPixels, `${path} at ${viewport.width}×${viewport.height}`).toBe(0)
      }
    }
  }, 60_000)

  it('once every stylesheet has loaded, the page is pixel-identical to the plain app’s', async () => {
    for (const path of [SAMPLED, NOT_SAMPLED, '/about']) {
      for (const viewport of VIEWPORTS) {
        const [before, after] = await Promise.all([screen(browser, plain, path, viewport, false, true), screen(browser, built, path, viewport, false, true)])
        expect(compareScreenshots(before, after).differentPixels, `${path} at ${viewport.width}×${viewport.height}`).toBe(0)
      }
    }
  }, 60_000)
})
