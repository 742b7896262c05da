/**
 * VitePress, as a user runs it: `buildEnd: criticalCss()` from 'unplugin-critical-css/vitepress'
 * in test/frameworks/vitepress (default theme, `base: '/docs/'`), built with `vitepress build`.
 * Every page VitePress wrote gets critical CSS rendered below the base, nothing else changes,
 * a rebuild is served from the cache without a browser, and 402 / strict behave as in the plugin.
 *
 * The fixture's code blocks are `txt`: Shiki gives up highlighting a line that takes longer
 * than its time limit, so on a busy machine two builds of a highlighted block can differ,
 * and the test compares builds byte for byte.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { criticalCss, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaThenStrict, frameworkDir, NO_BROWSER, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type CriticalRules, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('vitepress')
const OUT = join(DIR, '.vitepress', 'dist')
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
  return runIn(DIR, 'npx', ['vitepress', 'build'], options, env)
}

async function built(options: Options | null, env: Record<string, string> = {}): Promise<Tree> {
  const result = await build(options, env)
  expectBuildOk(result)
  return readTree(OUT)
}


describe.sequential('VitePress (buildEnd)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree
  let cacheDir: string

  beforeAll(async () => {
    const temp = await tempDir('vitepress')
    temps.push(temp)
    cacheDir = join(temp, 'cache')
    baseline = await built(null)
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await removeDirs(OUT, join(DIR, '.vitepress', 'cache'), ...temps)
  })

  it('gives every page VitePress wrote its critical CSS, below the base, and changes nothing else', async () => {
    const report = join(temps[0]!, 'report.json')
    cold = await built({ cache: { dir: cacheDir }, report })
    const pages = pagesOf(baseline)
    expect(pages).toEqual(Object.keys(EXPECTED).sort())
    const coldReport = await readReport(report)
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
    const warm = await built({ cache: { dir: cacheDir }, report }, NO_BROWSER)
    expectAllFromCache(await readReport(report), pagesOf(baseline).length)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as VitePress wrote them; with strict the build fails and writes nothing', async () => {
    await expectQuotaThenStrict({ token: QUOTA_ONE, build, read: () => readTree(OUT), baseline })
  }, BUILD_TIMEOUT)
})
