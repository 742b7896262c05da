/**
 * Astro 7, built with its own CLI (`npx astro build`) over test/frameworks/astro, whose config
 * adds `unplugin-critical-css/astro` as a user would: every page it writes gets critical CSS
 * and nothing else changes, a rebuild needs no browser, `base` is the path the pages are
 * served below, a server build gives its prerendered pages CSS and its on-demand routes a
 * manifest, and a 402 fails the build only with `strict`. Astro 7 needs Node ≥ 22.12: on an older
 * Node the build runs on the newest line scripts/node.mjs installs (its `engines`). Astro 5 has
 * its own one-build check in astro5.test.ts; Starlight over Astro 7 in starlight.test.ts.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import type { FakeService } from '../../fixtures/fake-service.ts'
import { buildAndRead, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaOutcome, expectStrictFailure, expectUnchanged, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, startQuotaOneService, tempDir, type CommandResult, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('astro')
const OUT = join(DIR, 'dist')
const OUT_BASE = join(DIR, 'dist-base')
const OUT_SERVER = join(DIR, 'dist-server')
const PAGES = ['about/index.html', 'blog/first-post/index.html', 'blog/index.html', 'index.html']
const QUOTA_ONE = 'tok_astro_quota1_0123456789ab'
// Telemetry would reach out to the network on every build.
const QUIET = { ASTRO_TELEMETRY_DISABLED: '1' }
// The variants check where pages are found, not the renders: one viewport is enough and halves the browser's work.
const ONE_VIEWPORT = { cache: false, viewports: [{ width: 1300, height: 900 }] } satisfies Options

/** Builds the site (Astro empties its output folder first) and reads back `out`. */
function build(options: Options | null, env: Record<string, string> = {}, out = OUT): Promise<{ run: CommandResult; files: Tree }> {
  return buildAndRead(DIR, 'npx', ['astro', 'build'], out, options, { ...QUIET, ...env })
}

/** The hero fills the first screen; the footer is only below it. */
function expectAboveTheFold(files: Tree): void {
  expectCriticalRules(files, () => ({ holds: ['.hero{'], not: ['.site-footer'] }))
}

describe.sequential('Astro: integrations: [criticalCss()]', () => {
  let temp: string
  let baseline: Tree
  let cold: Tree

  beforeAll(async () => {
    temp = await tempDir('astro')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT, OUT_BASE, OUT_SERVER)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expectBuildOk(off.run)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(PAGES)
    // The stylesheets are files the pages link: what critical CSS lets load without blocking.
    expect(baseline.get('index.html')?.toString('utf8')).toMatch(/<link rel="stylesheet" href="\/_astro\/[^"]+\.css">/)

    const on = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })
    expectBuildOk(on.run)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expectAllInlined(report, pagesOf(cold))
    expect(report.pages).toHaveLength(PAGES.length)
    expectAboveTheFold(cold)
    expectOnlyEdits(baseline, cold)
  }, 60_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report-warm.json') }, NO_BROWSER)
    expectBuildOk(again.run)
    expectAllFromCache(await readReport(join(temp, 'report-warm.json')), PAGES.length)
    expect(again.files).toEqual(cold)
  }, 60_000)

  it('serves the pages below `base`', async () => {
    const on = await build({ ...ONE_VIEWPORT, report: join(temp, 'report-base.json') }, { UCC_ASTRO_BASE: '/docs' }, OUT_BASE)
    expectBuildOk(on.run)
    expect(pagesOf(on.files)).toEqual(PAGES)
    const report = await readReport(join(temp, 'report-base.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/docs/about/', 'inlined'],
      ['/docs/blog/first-post/', 'inlined'],
      ['/docs/blog/', 'inlined'],
      ['/docs/', 'inlined'],
    ])
    // Rendered from the stylesheets below /docs/, so each page found its CSS.
    expect(on.files.get('index.html')?.toString('utf8')).toContain('href="/docs/_astro/')
    expectAboveTheFold(on.files)
  }, 60_000)

  it("`output: 'server'`: the prerendered page gets its CSS, and the routes rendered on demand are rendered from the built server into its manifest", async () => {
    const on = await build({ ...ONE_VIEWPORT, report: join(temp, 'report-server.json') }, { UCC_ASTRO_OUTPUT: 'server' }, join(OUT_SERVER, 'client'))
    expectBuildOk(on.run)
    expect(pagesOf(on.files)).toEqual(['index.html'])
    const report = await readReport(join(temp, 'report-server.json'))
    expect(report.pages.map((entry) => [entry.file, entry.outcome])).toEqual([['index.html', 'inlined']])
    expectAboveTheFold(on.files)
    expect(output(on.run)).toMatch(/3 server routes get critical CSS at request time: \/about, \/blog\/first-post, \/blog\n/)
    // Beside the server's code, which reads it (test/integration/server-routes-astro.test.ts serves it).
    const manifest = JSON.parse(await readFile(join(OUT_SERVER, 'server', 'critical-css.json'), 'utf8')) as { routes: { route: string }[] }
    expect(manifest.routes.map((route) => route.route)).toEqual(['/about', '/blog/first-post', '/blog'])
  }, 60_000)

  describe('against a service whose quota runs out after one page', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startQuotaOneService(QUOTA_ONE, '.hero{color:#123}')
    })
    afterAll(async () => {
      await fake.close()
    })
    // No `siteUrl`: the integration takes the page URLs from the fixture's Astro `site`.
    const service = (): Options => ({ baseUrl: fake.url, token: QUOTA_ONE, cache: false, concurrency: 1 })

    it("without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402; the page URLs default to Astro's `site`", async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') })
      expectBuildOk(run)
      expect(output(run)).toMatch(/402/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.url)).toEqual(PAGES.map((file) => `https://site.example/${file.replace(/index\.html$/, '')}`))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'failed', 'inlined'])
      expectQuotaOutcome(report, files, baseline, '.hero{color:#123}')
    }, 60_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Astro wrote it', async () => {
      const run = await runIn(DIR, 'npx', ['astro', 'build'], { ...service(), siteUrl: 'https://site.example/', strict: true }, QUIET)
      expectStrictFailure(run)
      expectUnchanged(baseline, await readTree(OUT))
    }, 60_000)
  })
})
