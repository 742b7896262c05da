/**
 * SvelteKit with adapter-static, as a user runs it: `adapter: criticalCss(adapter(...))` from
 * 'unplugin-critical-css/sveltekit' (3 prerendered pages, `paths.base: '/shop'`,
 * `precompress: true`), built with `vite build`, on the current major and the previous one:
 *
 * - test/frameworks/sveltekit: kit 3 + adapter-static 4, configured in vite.config.js. The
 *   full set: every prerendered page gets critical CSS rendered below the base, its .br/.gz
 *   are made from the final page, nothing else changes, kit prints no deprecation warning
 *   (kit 3 warns when an adapter reads `builder.config.kit`), a rebuild is served from the
 *   cache without a browser, and 402 / strict behave as in the plugin.
 * - test/frameworks/sveltekit2: kit 2 + adapter-static 3, configured in svelte.config.js. The
 *   cold build only: it proves the wrapper still finds the pages and the base there.
 */
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaThenStrict, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type Tree } from '../../fixtures/frameworks.ts'

const QUOTA_ONE = 'tok_sveltekit_quota1_0123456789'
const PAGES = ['about.html', 'index.html', 'pricing.html']
const BUILD_TIMEOUT = 180_000

/** adapter-static's precompressed copy of a page: made from the page, so it changes with it. */
const compressedPage = (file: string): boolean => /\.html\.(br|gz)$/.test(file)

/** Every precompressed page decompresses to the page as it is now. */
function expectCompressedPagesMatch(tree: Tree): void {
  for (const file of pagesOf(tree)) {
    const page = tree.get(file)!
    expect(gunzipSync(tree.get(`${file}.gz`)!).equals(page), `${file}.gz`).toBe(true)
    expect(brotliDecompressSync(tree.get(`${file}.br`)!).equals(page), `${file}.br`).toBe(true)
  }
}

interface Project {
  /** test/frameworks/<name> */
  name: string
  title: string
  /** The full set; else the cold build alone. */
  full: boolean
}

const PROJECTS: readonly Project[] = [
  { name: 'sveltekit', title: 'SvelteKit 3 with adapter-static 4 (adapter wrapper)', full: true },
  { name: 'sveltekit2', title: 'SvelteKit 2 with adapter-static 3 (adapter wrapper)', full: false },
]

for (const { name, title, full } of PROJECTS) {
  const dir = frameworkDir(name)
  const out = join(dir, 'build')

  const build = (options: Options | null, env: Record<string, string> = {}): Promise<CommandResult> => runIn(dir, 'npx', ['vite', 'build'], options, env)

  async function built(options: Options | null, env: Record<string, string> = {}): Promise<Tree> {
    const result = await build(options, env)
    expectBuildOk(result)
    return readTree(out)
  }

  describe.sequential(title, () => {
    let temp: string
    let baseline: Tree
    let cold: Tree

    beforeAll(async () => {
      temp = await tempDir(name)
      baseline = await built(null)
    }, BUILD_TIMEOUT)

    afterAll(async () => {
      await removeDirs(out, join(dir, '.svelte-kit'), temp)
    })

    it('gives every prerendered page its critical CSS, below the base, and changes nothing else', async () => {
      const report = join(temp, 'report.json')
      const run = await build({ cache: { dir: join(temp, 'cache') }, report })
      expectBuildOk(run)
      // Kit 3 warns (`adapter_config_kit_deprecated`) once an adapter reads `builder.config.kit`.
      expect(output(run)).not.toMatch(/deprecat/i)
      cold = await readTree(out)
      expect(pagesOf(baseline)).toEqual(PAGES)
      const coldReport = await readReport(report)
      expectAllInlined(coldReport, PAGES)
      // Rendered where the site is served, below `paths.base: '/shop'`.
      expect(coldReport.pages.map((entry) => entry.url).sort()).toEqual(['/shop/', '/shop/about.html', '/shop/pricing.html'])

      expectOnlyEdits(baseline, cold, { skip: compressedPage, base: '/shop/', precompressed: true })
      expectCompressedPagesMatch(cold)
      // Above the fold: the header and the 100vh hero; below it: the details and the footer.
      expectCriticalRules(cold, () => ({ holds: ['.masthead{', '.hero{'], not: ['.site-footer', '.details'] }))
    }, BUILD_TIMEOUT)

    // The previous major proves the wrapper still works there; the rest runs on the current one.
    if (!full) return

    it('a rebuild is served from the cache without a browser and writes the same site', async () => {
      const report = join(temp, 'warm.json')
      const warm = await built({ cache: { dir: join(temp, 'cache') }, report }, NO_BROWSER)
      expectAllFromCache(await readReport(report), PAGES.length)
      expect(warm).toEqual(cold)
    }, BUILD_TIMEOUT)

    it('402 leaves the pages it hit as adapter-static wrote them; with strict the build fails and writes nothing', async () => {
      await expectQuotaThenStrict({ token: QUOTA_ONE, build, read: () => readTree(out), baseline, copiesOf: (page) => [`${page}.br`, `${page}.gz`], lenientTree: expectCompressedPagesMatch })
    }, BUILD_TIMEOUT)
  })
}
