/**
 * Docusaurus 3, built with its own CLI (`npx docusaurus build`) over test/frameworks/docusaurus
 * (preset-classic, three pages and the 404 page, baseUrl /docs/), whose config lists
 * `['unplugin-critical-css/docusaurus', options]` as a user would: every page gets critical
 * CSS and nothing else changes, a rebuild needs no browser, a 402 fails the build only with
 * `strict`, and a token in the options (which Docusaurus would publish) is refused.
 *
 * Docusaurus bundles the site config, plugin options included, into assets/js/main.<hash>.js,
 * so that one file (and its name in every page) differs between builds with different
 * options; it is masked when builds with different configs are compared, and every other
 * file is compared byte for byte. `--no-minify`: a new main bundle costs a 25 s terser pass
 * per build on two cores, and minifying is not what these tests are about.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import type { FakeService } from '../../fixtures/fake-service.ts'
import { buildAndRead, criticalCss, expectAllFromCache, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaOutcome, expectStrictFailure, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, startQuotaOneService, tempDir, type CommandResult, type OnlyEditsOptions, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('docusaurus')
const OUT = join(DIR, 'build')
const MAIN_BUNDLE = /main\.[0-9a-f]{8}\.js/g
const QUOTA_ONE = 'tok_docusaurus_quota1_012345678'
const PAGES = ['404.html', 'about/index.html', 'index.html', 'pricing/index.html']

/** Builds the site into `build/` (Docusaurus empties it first) and reads it back. */
function build(options: Options | null, env: Record<string, string> = {}): Promise<{ run: CommandResult; files: Tree }> {
  return buildAndRead(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], OUT, options, env)
}

/**
 * Builds with different options differ only in the main bundle: its file is skipped and its
 * name masked in the pages when they are compared with `expectOnlyEdits`.
 */
const MASKED: OnlyEditsOptions = { mask: (text) => text.replace(MAIN_BUNDLE, 'main.[hash].js'), base: '/docs/' }

describe.sequential("Docusaurus: plugins: [['unplugin-critical-css/docusaurus', options]]", () => {
  let temp: string
  let baseline: Tree
  let cold: Tree
  // The same options for the cold build and the rebuild, so the same main bundle too.
  const cached = (): Options => ({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })

  beforeAll(async () => {
    temp = await tempDir('docusaurus')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expectBuildOk(off.run)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(PAGES)

    const on = await build(cached())
    expectBuildOk(on.run)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/docs/404.html', 'inlined'],
      ['/docs/about/', 'inlined'],
      ['/docs/', 'inlined'],
      ['/docs/pricing/', 'inlined'],
    ])
    expect(report.pages.map((entry) => entry.file)).toEqual(pagesOf(cold))
    // The navbar and the hero fill the first screen; the closing section is only below it.
    expectCriticalRules(cold, (file) => ({ holds: file === '404.html' ? ['.navbar{'] : ['.navbar{', '.ucc-hero{'], not: ['.ucc-below'] }))
    expectOnlyEdits(baseline, cold, MASKED)
  }, 180_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build(cached(), NO_BROWSER)
    expectBuildOk(again.run)
    expectAllFromCache(await readReport(join(temp, 'report.json')), PAGES.length)
    expect(again.files).toEqual(cold)
  }, 180_000)

  it('refuses a token in the options, which Docusaurus would publish in the site, and names the env var', async () => {
    const run = await runIn(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], { token: 'tok_published_0123456789abcdef' }, {})
    expect(run.code).not.toBe(0)
    expect(output(run)).toMatch(/option `token` would be public.*CRITICAL_CSS_API_TOKEN/)
  }, 60_000)

  describe('against a service whose quota runs out after one page', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startQuotaOneService(QUOTA_ONE, '.ucc-hero{color:#123}')
    })
    afterAll(async () => {
      await fake.close()
    })
    const service = (): Options => ({ baseUrl: fake.url, siteUrl: 'https://site.example/', cache: false, concurrency: 1 })
    const token = { CRITICAL_CSS_API_TOKEN: QUOTA_ONE }

    it('without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402', async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') }, token)
      expectBuildOk(run)
      expect(output(run)).toMatch(/402 plan_limit_reached/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'failed', 'inlined'])
      expectQuotaOutcome(report, files, baseline, '.ucc-hero{color:#123}', MASKED)
    }, 180_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Docusaurus wrote it', async () => {
      const run = await runIn(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], { ...service(), strict: true }, token)
      expectStrictFailure(run)
      const files = await readTree(OUT)
      for (const file of PAGES) expect(criticalCss(files.get(file)), file).toBe('')
      expectOnlyEdits(baseline, files, MASKED)
    }, 180_000)
  })
})
