/**
 * VitePress 2 (2.0.0-alpha.21, the newest the registry serves), as a user runs it:
 * `buildEnd: criticalCss()` from 'unplugin-critical-css/vitepress' in test/frameworks/vitepress
 * (default theme, `base: '/docs/'`, the site in docs/ as most projects keep it), built with
 * `vitepress build docs` from the package folder. Every page VitePress wrote gets critical CSS
 * rendered below the base, nothing else changes, `cache.dir` and `report` land below the
 * VitePress root (docs/, not the working directory), a rebuild is served from the cache without
 * a browser, and 402 / strict behave as in the plugin. VitePress 1.6.4, the `latest` most sites
 * run, has its one-build check in vitepress1.test.ts.
 *
 * The fixture's code blocks are `txt`: Shiki gives up highlighting a line that takes longer
 * than its time limit, so on a busy machine two builds of a highlighted block can differ,
 * and the test compares builds byte for byte.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { criticalCss, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaThenStrict, frameworkDir, NO_BROWSER, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type CriticalRules, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('vitepress')
/** The VitePress root: the folder that holds `.vitepress`, given to `vitepress build`. */
const ROOT = join(DIR, 'docs')
const OUT = join(ROOT, '.vitepress', 'dist')
/** `cache.dir` and `report` as a user writes them: relative, so against the VitePress root. */
const CACHE_DIR = '.vitepress/cache/critical-css'
const REPORT = '.vitepress/cache/critical-css-report.json'
/** Where the cache goes with no `cache.dir`: beside the nearest package.json, as for every integration. */
const DEFAULT_CACHE = join(DIR, 'node_modules', '.cache', 'unplugin-critical-css')
const QUOTA_ONE = 'tok_vitepress_quota1_0123456789'
const BUILD_TIMEOUT = 180_000

/**
 * What each page's critical CSS must hold (its above-the-fold part) and must not (a part
 * the page has only below the fold). Doc pages are long: their prev/next pager is far down.
 * VitePress writes 404.html with an empty #app and renders it in the browser, so whether
 * the render lands before the page is measured varies: only its base rules are certain.
 */
const EXPECTED: Record<string, CriticalRules> = {
  'index.html': { holds: ['.VPNav', '.VPHero', '.VPFeatures'], not: ['.VPFooter'] },
  'guide.html': { holds: ['.VPNav', '.VPDoc', '.vp-doc h2'], not: ['.VPDocFooter'] },
  'reference.html': { holds: ['.VPNav', '.VPDoc', '.vp-doc h2'], not: ['.VPDocFooter'] },
  'about.html': { holds: ['.VPNav', '.VPDoc', '.vp-doc h2'], not: ['.VPDocFooter'] },
  '404.html': { holds: ['body{'], not: ['.VPHero', '.VPDocFooter'] },
}

function build(options: Options | null, env: Record<string, string> = {}): Promise<CommandResult> {
  return runIn(DIR, 'npx', ['vitepress', 'build', 'docs'], options, env)
}

async function built(options: Options | null, env: Record<string, string> = {}): Promise<Tree> {
  const result = await build(options, env)
  expectBuildOk(result)
  return readTree(OUT)
}


describe.sequential('VitePress 2 (buildEnd)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree

  beforeAll(async () => {
    const temp = await tempDir('vitepress')
    temps.push(temp)
    await removeDirs(join(ROOT, '.vitepress', 'cache'), DEFAULT_CACHE)
    baseline = await built(null)
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await removeDirs(OUT, join(ROOT, '.vitepress', 'cache'), ...temps)
  })

  it('gives every page VitePress wrote its critical CSS, below the base, and changes nothing else; the cache and report land below the VitePress root', async () => {
    cold = await built({ cache: { dir: CACHE_DIR }, report: REPORT })
    const pages = pagesOf(baseline)
    expect(pages).toEqual(Object.keys(EXPECTED).sort())
    // Relative to docs/, the folder that holds .vitepress, as VitePress's own outDir and cacheDir are.
    expect(readdirSync(join(ROOT, CACHE_DIR)).length, 'cache entries below docs/').toBeGreaterThan(0)
    expect(existsSync(join(DIR, CACHE_DIR)), 'no cache below the working directory').toBe(false)
    expect(existsSync(DEFAULT_CACHE), 'no default cache').toBe(false)
    const coldReport = await readReport(join(ROOT, REPORT))
    expect(existsSync(join(DIR, REPORT)), 'no report below the working directory').toBe(false)
    expectAllInlined(coldReport, pages)
    // Rendered where VitePress serves them, below `base: '/docs/'`.
    expect(coldReport.pages.map((entry) => entry.url).sort()).toEqual(['/docs/', '/docs/404.html', '/docs/about.html', '/docs/guide.html', '/docs/reference.html'])

    expect(pagesOf(cold)).toEqual(pages)
    expectOnlyEdits(baseline, cold, { base: '/docs/' })
    expectCriticalRules(cold, EXPECTED)
    const stylesheet = [...baseline].find(([file]) => /^assets\/style\.[\w-]+\.css$/.test(file))?.[1]
    expect(stylesheet).toBeDefined()
    // The default theme's stylesheet is large: the page gets only a part of it.
    for (const file of pages) expect(criticalCss(cold.get(file)).length, file).toBeLessThan(stylesheet!.length / 2)
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temps[0]!, 'warm.json')
    const warm = await built({ cache: { dir: CACHE_DIR }, report }, NO_BROWSER)
    expectAllFromCache(await readReport(report), pagesOf(baseline).length)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as VitePress wrote them; with strict the build fails and writes nothing', async () => {
    await expectQuotaThenStrict({ token: QUOTA_ONE, build, read: () => readTree(OUT), baseline })
  }, BUILD_TIMEOUT)
})
