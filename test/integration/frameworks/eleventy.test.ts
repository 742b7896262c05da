/**
 * Eleventy 3, built with its own CLI (`npx @11ty/eleventy`) over test/frameworks/eleventy,
 * whose config adds `unplugin-critical-css/eleventy` as a user would: every page it writes
 * gets critical CSS and nothing else changes, a rebuild needs no browser, a path prefix is
 * the base the pages are served below, and a 402 fails the build only with `strict`.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import type { FakeService } from '../../fixtures/fake-service.ts'
import { buildAndRead, criticalCss, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaOutcome, expectStrictFailure, expectUnchanged, frameworkDir, NO_BROWSER, output, pagesOf, readReport, readTree, removeDirs, runIn, startQuotaOneService, tempDir, type CommandResult, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('eleventy')
const OUT = join(DIR, '_site')
const QUOTA_ONE = 'tok_eleventy_quota1_0123456789'

/** Builds the site into `_site` (emptied first: Eleventy never removes what it wrote before) and reads it back. */
async function build(options: Options | null, env: Record<string, string> = {}, args: string[] = []): Promise<{ run: CommandResult; files: Tree }> {
  await removeDirs(OUT)
  return buildAndRead(DIR, 'npx', ['@11ty/eleventy', ...args], OUT, options, env)
}

describe.sequential('Eleventy: eleventyConfig.addPlugin(criticalCss)', () => {
  let temp: string
  let baseline: Tree
  let cold: Tree

  beforeAll(async () => {
    temp = await tempDir('eleventy')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expectBuildOk(off.run)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(['about.html', 'index.html', 'pricing/index.html'])

    const on = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })
    expectBuildOk(on.run)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expectAllInlined(report, pagesOf(cold))
    expect(report.pages).toHaveLength(3)
    // The hero fills the first screen; the footer is only below it.
    expectCriticalRules(cold, () => ({ holds: ['.hero{'], not: ['.below'] }))
    expectOnlyEdits(baseline, cold)
  }, 60_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report-warm.json') }, NO_BROWSER)
    expectBuildOk(again.run)
    expectAllFromCache(await readReport(join(temp, 'report-warm.json')), 3)
    expect(again.files).toEqual(cold)
  }, 60_000)

  it('serves the pages below the path prefix (`--pathprefix`)', async () => {
    const args = ['--pathprefix=/blog/']
    const off = await build(null, {}, args)
    expectBuildOk(off.run)
    expect(off.files.get('index.html')?.toString('utf8')).toContain('href="/blog/css/style.css"')
    const on = await build({ cache: false, report: join(temp, 'report-prefix.json') }, {}, args)
    expectBuildOk(on.run)
    const report = await readReport(join(temp, 'report-prefix.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/blog/about.html', 'inlined'],
      ['/blog/', 'inlined'],
      ['/blog/pricing/', 'inlined'],
    ])
    // Rendered from the prefixed stylesheet URL, so the page found its CSS.
    expect(criticalCss(on.files.get('index.html'))).toContain('.hero{')
    expectOnlyEdits(off.files, on.files, { base: '/blog/' })
  }, 60_000)

  describe('against a service whose quota runs out after one page', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startQuotaOneService(QUOTA_ONE, '.hero{color:#123}')
    })
    afterAll(async () => {
      await fake.close()
    })
    const service = (): Options => ({ baseUrl: fake.url, token: QUOTA_ONE, siteUrl: 'https://site.example/', cache: false, concurrency: 1 })

    it('without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402', async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') })
      expectBuildOk(run)
      expect(output(run)).toMatch(/402 plan_limit_reached/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'inlined'])
      expectQuotaOutcome(report, files, baseline, '.hero{color:#123}')
    }, 60_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Eleventy wrote it', async () => {
      await removeDirs(OUT)
      const run = await runIn(DIR, 'npx', ['@11ty/eleventy'], { ...service(), strict: true }, {})
      expectStrictFailure(run)
      expectUnchanged(baseline, await readTree(OUT))
    }, 60_000)
  })
})
