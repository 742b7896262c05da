/**
 * Nuxt 4, as a user runs it: `modules: [['unplugin-critical-css/nuxt', options]]` in
 * test/frameworks/nuxt (the app/ folder: three pages, a global stylesheet, a component with
 * scoped styles), built with `nuxt generate`. Every page Nitro prerendered gets critical CSS,
 * nothing else changes, a rebuild is served from the cache without a browser, and 402 /
 * strict behave as in the plugin. Nuxt 3 (test/frameworks/nuxt3, the same site in Nuxt 3's
 * layout) is built once as its users build it, to show the module still works there.
 *
 * Either way the module says so when Nuxt inlined styles into the pages in place of links
 * (`features.inlineStyles`: every style by default in Nuxt 3, on request in Nuxt 4), and is
 * silent with Nuxt 4's default, which inlines components' styles but links them too.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaThenStrict, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type CriticalRules, type Tree } from '../../fixtures/frameworks.ts'

const NUXT4 = frameworkDir('nuxt')
const NUXT3 = frameworkDir('nuxt3')
const QUOTA_ONE = 'tok_nuxt_quota1_0123456789abcd'
const BUILD_TIMEOUT = 180_000

/** The module's hint that Nuxt inlined styles it did not link; group 1 is how many pages. */
const HINT = /Nuxt inlined styles it did not link into (\d+) pages?[^\n]*features: \{ inlineStyles: false \}/

/**
 * What each page's critical CSS must hold (its above-the-fold part) and must not (a part
 * the page has only below the fold). Nuxt writes 200.html and 404.html as empty shells the
 * app renders in the browser (its error page there): only the base rules are certain.
 */
const EXPECTED: Record<string, CriticalRules> = {
  'index.html': { holds: ['body{', '.hero{', '.hero h1{', 'nav[data-v-'], not: ['.below', 'footer p'] },
  'about/index.html': { holds: ['body{', '.hero{', '.hero h1{', 'nav[data-v-'], not: ['.below', 'footer p'] },
  'pricing/index.html': { holds: ['body{', '.hero{', '.hero h1{', 'nav[data-v-'], not: ['.below', 'footer p'] },
  '200.html': { holds: ['body{'], not: ['.hero', '.below'] },
  '404.html': { holds: ['body{'], not: ['.hero', '.below'] },
}
const PAGES = Object.keys(EXPECTED).sort()
const URLS = ['/', '/200.html', '/404.html', '/about/', '/pricing/']

/** `nuxt generate` in `dir`; UCC_TEST_NUXT_STYLES in `env` switches the project's `features.inlineStyles`. */
function generate(dir: string, options: Options | null, env: Record<string, string> = {}): Promise<CommandResult> {
  // Vitest's TEST=true makes Nuxt build for tests (`import.meta.test`, silent logs); empty is unset to it.
  return runIn(dir, 'npx', ['nuxt', 'generate'], options, { NUXT_TELEMETRY_DISABLED: '1', TEST: '', ...env })
}

/** The build, which must succeed, and the site it wrote. */
async function built(dir: string, options: Options | null, env: Record<string, string> = {}): Promise<{ run: CommandResult; tree: Tree }> {
  const run = await generate(dir, options, env)
  expectBuildOk(run)
  return { run, tree: comparable(await readTree(join(dir, '.output', 'public'))) }
}

/**
 * The site without what differs between any two builds: Nuxt's app manifest
 * (`_nuxt/builds/`) carries the build's start time and lists the prerendered routes in the
 * order they finished. (The fixture pins the build id and render time in the pages.)
 */
function comparable(tree: Tree): Tree {
  return new Map(
    [...tree].map(([file, bytes]): [string, Buffer] => {
      if (!file.startsWith('_nuxt/builds/')) return [file, bytes]
      const { timestamp: _, prerendered, ...rest } = JSON.parse(bytes.toString('utf8')) as { timestamp?: number; prerendered?: string[] }
      return [file, Buffer.from(JSON.stringify({ ...rest, prerendered: prerendered?.sort() }))]
    }),
  )
}

/** The hint's page count, or null when the build did not give it. */
function hinted(run: CommandResult): number | null {
  const found = HINT.exec(output(run))
  return found === null ? null : Number(found[1])
}

/** The build said nothing of `features.inlineStyles`, in these words or others. */
function expectNoHint(run: CommandResult): void {
  expect(output(run)).not.toMatch(/inlineStyles/)
}

/** Whether a page holds the global stylesheet as a `<style>` Nuxt inlined. */
function inlinesGlobalCss(page: Buffer | undefined): boolean {
  return /<style>body\{[^<]*\.hero\{/.test(page?.toString('utf8') ?? '')
}

const outputs = (dir: string): string[] => ['.output', '.nuxt', 'dist'].map((name) => join(dir, name))

describe.sequential('Nuxt 4 (nuxt generate)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree
  let cacheDir: string

  beforeAll(async () => {
    const temp = await tempDir('nuxt')
    temps.push(temp)
    cacheDir = join(temp, 'cache')
    baseline = (await built(NUXT4, null)).tree
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await removeDirs(...outputs(NUXT4), ...temps)
  })

  it('gives every page Nuxt prerendered its critical CSS, changes nothing else, and gives no inlining hint', async () => {
    const report = join(temps[0]!, 'report.json')
    const { run, tree } = await built(NUXT4, { cache: { dir: cacheDir }, report })
    cold = tree
    const pages = pagesOf(baseline)
    expect(pages).toEqual(PAGES)
    // Nuxt 4's default: the global stylesheet linked, the component's styles inlined and linked.
    expect(inlinesGlobalCss(baseline.get('index.html'))).toBe(false)
    expect(baseline.get('index.html')!.toString('utf8')).toMatch(/<style>nav\[data-v-/)
    expectNoHint(run)

    const coldReport = await readReport(report)
    expectAllInlined(coldReport, pages)
    expect(coldReport.pages.map((entry) => entry.url).sort()).toEqual(URLS)
    expect(pagesOf(cold)).toEqual(pages)
    expectOnlyEdits(baseline, cold)
    expectCriticalRules(cold, EXPECTED)
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temps[0]!, 'warm.json')
    const { tree: warm } = await built(NUXT4, { cache: { dir: cacheDir }, report }, NO_BROWSER)
    expectAllFromCache(await readReport(report), pagesOf(baseline).length)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as Nuxt wrote them; with strict the build fails and writes nothing', async () => {
    await expectQuotaThenStrict({
      token: QUOTA_ONE,
      build: (options) => generate(NUXT4, options),
      read: async () => comparable(await readTree(join(NUXT4, '.output', 'public'))),
      baseline,
    })
  }, BUILD_TIMEOUT)

  it('with `features.inlineStyles: true` Nuxt inlines every style, and the build says so', async () => {
    const { run, tree } = await built(NUXT4, { cache: { dir: cacheDir } }, { UCC_TEST_NUXT_STYLES: 'inline' })
    for (const page of PAGES) expect(inlinesGlobalCss(tree.get(page)), page).toBe(true)
    expect(hinted(run)).toBe(PAGES.length)
  }, BUILD_TIMEOUT)
})

describe.sequential('Nuxt 3 (nuxt generate)', () => {
  const temps: string[] = []

  beforeAll(async () => {
    temps.push(await tempDir('nuxt3'))
  })

  afterAll(async () => {
    await removeDirs(...outputs(NUXT3), ...temps)
  })

  it('with `features.inlineStyles: false` gives every page its critical CSS and no hint', async () => {
    const report = join(temps[0]!, 'report.json')
    const { run, tree } = await built(NUXT3, { cache: { dir: join(temps[0]!, 'cache') }, report })
    expect(pagesOf(tree)).toEqual(PAGES)
    expectNoHint(run)
    const coldReport = await readReport(report)
    expectAllInlined(coldReport, PAGES)
    expect(coldReport.pages.map((entry) => entry.url).sort()).toEqual(URLS)
    expectCriticalRules(tree, EXPECTED)
  }, BUILD_TIMEOUT)

  it("with Nuxt 3's default Nuxt inlines every style, and the build says so", async () => {
    const { run, tree } = await built(NUXT3, { cache: { dir: join(temps[0]!, 'cache') } }, { UCC_TEST_NUXT_STYLES: 'default' })
    for (const page of PAGES) expect(inlinesGlobalCss(tree.get(page)), page).toBe(true)
    expect(hinted(run)).toBe(PAGES.length)
  }, BUILD_TIMEOUT)
})
