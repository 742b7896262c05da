/// <reference lib="dom" />
/**
 * The mission, end to end: the playground site built with Vite and with webpack in
 * embedded mode (no service configured; the plugin renders the fresh build in the system
 * Chromium), then every emitted page opened in Chromium. With every stylesheet request
 * held back, the first viewport already looks like the finished page (≤ 0.5 % of pixels
 * differ once the stylesheets arrive) and is clearly styled, not a flash of unstyled
 * content. A rebuild with nothing changed renders nothing; a changed stylesheet is
 * rendered again.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import pixelmatch from 'pixelmatch'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_VIEWPORTS, type Viewport } from '../../src/contract/api-contract.ts'
import type { BuildReport } from '../../src/core/report.ts'
import { serveBuild, type BuildServer } from '../../src/core/build-server.ts'
import { PAGES } from '../../playground/pages.ts'
import { launchChromium, withoutBrowser } from '../fixtures/browser.ts'

const PLAYGROUND_SITE = fileURLToPath(new URL('../../playground/site/', import.meta.url))
const REPO_MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url))
const MAX_DIFF = 0.005
/** Below this share of differing pixels from the unstyled page, a render would be a flash of unstyled content. */
const MIN_STYLED = 0.05

type Bundler = 'vite' | 'webpack'

interface Built {
  dist: string
  report: BuildReport
}

let browser: Browser
let work: string

beforeAll(async () => {
  browser = await launchChromium()
  work = await mkdtemp(join(tmpdir(), 'ccs-playground-'))
})
afterAll(async () => {
  await browser?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

/** A copy of the playground site, so a test may change it. */
async function copySite(name: string): Promise<string> {
  const site = join(work, name, 'site')
  await cp(PLAYGROUND_SITE, site, { recursive: true })
  await writeFile(join(work, name, 'package.json'), '{ "private": true, "type": "module" }\n')
  return site
}

/** The playground's own build config, pointed at `site`, its output and cache in the test's dir; no service configured. */
async function build(bundler: Bundler, site: string, name: string): Promise<Built> {
  for (const variable of ['CRITICAL_CSS_BASE_URL', 'CRITICAL_CSS_API_TOKEN', 'CRITICAL_CSS_SITE_URL']) delete process.env[variable]
  const dist = join(work, name, `dist-${bundler}`)
  const reportFile = join(work, name, `report-${bundler}.json`)
  const plugin = { report: reportFile, cache: { dir: join(work, name, `cache-${bundler}`) } }
  if (bundler === 'vite') {
    const { build: viteBuild } = await import('vite')
    const { playgroundConfig } = await import('../../playground/vite/vite.config.ts')
    await viteBuild({ ...playgroundConfig({ site, outDir: dist, plugin }), configFile: false, logLevel: 'warn' })
  } else {
    const webpack = (await import('webpack')).default
    const { playgroundConfig } = await import('../../playground/webpack/webpack.config.ts')
    // Loaders resolve from the repo, wherever the site is.
    const config = { ...playgroundConfig({ site, outDir: dist, plugin }), infrastructureLogging: { level: 'none' as const }, resolveLoader: { modules: [REPO_MODULES] } }
    const stats = await new Promise<import('webpack').Stats>((resolve, reject) => {
      const compiler = webpack(config)
      compiler.run((error, result) => compiler.close(() => (error || !result ? reject(error) : resolve(result))))
    })
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }))
  }
  return { dist, report: JSON.parse(await readFile(reportFile, 'utf8')) as BuildReport }
}

function decode(png: Buffer): PNG {
  return PNG.sync.read(png)
}

/** Share of pixels that differ (pixelmatch, threshold 0.1). */
function difference(a: Buffer, b: Buffer): number {
  const [one, two] = [decode(a), decode(b)]
  expect([one.width, one.height]).toEqual([two.width, two.height])
  return pixelmatch(one.data, two.data, undefined, one.width, one.height, { threshold: 0.1 }) / (one.width * one.height)
}

/** Opens `url` with every stylesheet request held until `release` is called; resolves once the page painted what it has. */
async function openHeld(page: Page, url: string): Promise<() => void> {
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  await page.route('**/*', async (route) => {
    if (route.request().resourceType() === 'stylesheet') await gate
    await route.continue().catch(() => {})
  })
  await page.goto(url, { waitUntil: 'commit' })
  // The parser waits at the stylesheet moved to the end of the body, and document.fonts.ready
  // waits for the document: the page has painted once its first contentful paint is in.
  await page.waitForFunction(() => performance.getEntriesByType('paint').some((entry) => entry.name === 'first-contentful-paint'), null, { polling: 50 })
  await page.evaluate(() => {
    const loads: Promise<unknown>[] = []
    document.fonts.forEach((face) => loads.push(face.load().catch(() => null)))
    return Promise.all(loads).then(() => undefined)
  })
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
  return release
}

async function shoot(page: Page): Promise<Buffer> {
  return page.screenshot({ animations: 'disabled', caret: 'hide' })
}

/** The page as a browser shows it with no CSS at all: every style removed (the critical one, or the sheet inlined whole; the playground has none of its own), stylesheets refused. */
async function unstyled(url: string, viewport: Viewport): Promise<Buffer> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 })
  try {
    const page = await context.newPage()
    await page.route('**/*', async (route) => {
      const request = route.request()
      if (request.resourceType() === 'stylesheet') return route.abort()
      if (request.resourceType() !== 'document') return route.continue()
      const response = await route.fetch()
      const html = (await response.text()).replace(/<style\b[^>]*>[\s\S]*?<\/style>/g, '')
      return route.fulfill({ response, body: html })
    })
    await page.goto(url, { waitUntil: 'load' })
    return await shoot(page)
  } finally {
    await context.close()
  }
}

describe.each(['vite', 'webpack'] as const)('the %s playground built in embedded mode', (bundler) => {
  let built: Built
  let server: BuildServer

  beforeAll(async () => {
    built = await build(bundler, PLAYGROUND_SITE, `browser-${bundler}`)
    const { directoryOutput } = await import('../../src/core/build-server.ts')
    server = await serveBuild(directoryOutput(built.dist), '/')
  }, 120_000)
  afterAll(async () => {
    await server?.close()
  })

  it('inlined critical CSS into every page', () => {
    expect(built.report.pages.map((page) => [page.file, page.outcome]).sort()).toEqual(PAGES.map((file) => [file, 'inlined']).sort())
  })

  for (const file of PAGES) {
    for (const viewport of DEFAULT_VIEWPORTS) {
      it(`${file} at ${viewport.width}×${viewport.height}: the first paint with stylesheets held is the finished page, styled`, async () => {
        const url = new URL(file.replace(/index\.html$/, ''), server.siteUrl).href
        const context = await browser.newContext({ viewport, deviceScaleFactor: 1 })
        try {
          const page = await context.newPage()
          const release = await openHeld(page, url)
          const held = await shoot(page)
          release()
          await page.waitForLoadState('load')
          await page.evaluate(() => document.fonts.ready.then(() => undefined))
          const finished = await shoot(page)
          expect(difference(held, finished)).toBeLessThanOrEqual(MAX_DIFF)
          // Held forever, the page is still styled: far from what it looks like with no CSS.
          expect(difference(held, await unstyled(url, viewport))).toBeGreaterThan(MIN_STYLED)
        } finally {
          await context.close()
        }
      }, 30_000)
    }
  }
})

describe.each(['vite', 'webpack'] as const)('rebuilding the %s playground', (bundler) => {
  it('renders nothing when nothing changed, and renders again the pages whose stylesheet changed', async () => {
    const name = `rebuild-${bundler}`
    const site = await copySite(name)
    const first = await build(bundler, site, name)
    expect(first.report.pages.map((page) => page.source)).toEqual(['embedded', 'embedded', 'embedded'])
    const firstHtml = await Promise.all(PAGES.map((file) => readFile(join(first.dist, file), 'utf8')))

    // Not one generate request, and no browser needed: with none on the machine the rebuild still succeeds.
    const again = await withoutBrowser(() => build(bundler, site, name))
    expect(again.report.pages.map((page) => page.source)).toEqual(['cache', 'cache', 'cache'])
    expect(await Promise.all(PAGES.map((file) => readFile(join(again.dist, file), 'utf8')))).toEqual(firstHtml)

    const css = join(site, 'site.css')
    await writeFile(css, (await readFile(css, 'utf8')).replace('.hero p { font-size: 1.25rem;', '.hero p { font-size: 1.3rem;'))
    const changed = await build(bundler, site, name)
    expect(changed.report.pages.map((page) => page.source)).toEqual(['embedded', 'embedded', 'embedded'])
    for (const file of PAGES) expect(await readFile(join(changed.dist, file), 'utf8')).toMatch(/\.hero p\{[^}]*font-size:1\.3rem/)
  }, 120_000)
})
