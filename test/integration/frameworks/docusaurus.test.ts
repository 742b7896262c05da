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
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import { startFakeService, type FakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('docusaurus')
const OUT = join(DIR, 'build')
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const MAIN_BUNDLE = /main\.[0-9a-f]{8}\.js/g
const QUOTA_ONE = 'tok_docusaurus_quota1_012345678'
const PAGES = ['404.html', 'about/index.html', 'index.html', 'pricing/index.html']

/** Builds the site into `build/` (Docusaurus empties it first) and reads it back. */
async function build(options: Options | null, env: Record<string, string> = {}): Promise<{ run: CommandResult; files: Map<string, Buffer> }> {
  const run = await runIn(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], options, env)
  return { run, files: run.code === 0 ? await readTree(OUT) : new Map() }
}

function pagesOf(files: Map<string, Buffer>): string[] {
  return [...files.keys()].filter((file) => file.endsWith('.html')).sort()
}

function criticalCss(page: Buffer | undefined): string {
  return CRITICAL.exec(page?.toString('utf8') ?? '')?.[1] ?? ''
}

function masked(name: string): string {
  return name.replace(MAIN_BUNDLE, 'main.[hash].js')
}

/**
 * `built` is `baseline` with only the inliner's edits: every file but the main bundle byte
 * for byte, each page `inlineCriticalCss(baseline, its css)` with the bundle's name masked.
 */
function expectOnlyEdits(baseline: Map<string, Buffer>, built: Map<string, Buffer>): void {
  expect([...built.keys()].map(masked).sort()).toEqual([...baseline.keys()].map(masked).sort())
  for (const [file, bytes] of baseline) {
    if (masked(file) !== file) continue
    if (!file.endsWith('.html')) {
      expect(built.get(file)?.equals(bytes), file).toBe(true)
      continue
    }
    const page = built.get(file)?.toString('utf8') ?? ''
    expect(masked(page), file).toBe(masked(inlineCriticalCss(bytes.toString('utf8'), criticalCss(built.get(file))).html))
  }
}

describe.sequential("Docusaurus: plugins: [['unplugin-critical-css/docusaurus', options]]", () => {
  let temp: string
  let baseline: Map<string, Buffer>
  let cold: Map<string, Buffer>
  // The same options for the cold build and the rebuild, so the same main bundle too.
  const cached = (): Options => ({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'ucc-docusaurus-'))
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expect(off.run.code, off.run.stderr).toBe(0)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(PAGES)

    const on = await build(cached())
    expect(on.run.code, on.run.stderr).toBe(0)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/docs/404.html', 'inlined'],
      ['/docs/about/', 'inlined'],
      ['/docs/', 'inlined'],
      ['/docs/pricing/', 'inlined'],
    ])
    expect(report.pages.map((entry) => entry.file)).toEqual(pagesOf(cold))
    for (const file of PAGES) {
      const css = criticalCss(cold.get(file))
      // The navbar and the hero fill the first screen; the closing section is only below it.
      expect(css, file).toContain('.navbar{')
      if (file !== '404.html') expect(css, file).toContain('.ucc-hero{')
      expect(css, file).not.toContain('.ucc-below')
    }
    expectOnlyEdits(baseline, cold)
  }, 180_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build(cached(), { CHROME_PATH: '/nonexistent/chrome' })
    expect(again.run.code, again.run.stderr).toBe(0)
    const report = await readReport(join(temp, 'report.json'))
    expect(report.pages.map((entry) => [entry.source, entry.outcome])).toEqual(PAGES.map(() => ['cache', 'inlined']))
    expect(again.files).toEqual(cold)
  }, 180_000)

  it('refuses a token in the options, which Docusaurus would publish in the site, and names the env var', async () => {
    const run = await runIn(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], { token: 'tok_published_0123456789abcdef' }, {})
    expect(run.code).not.toBe(0)
    expect(run.stdout + run.stderr).toMatch(/option `token` would be public.*CRITICAL_CSS_API_TOKEN/)
  }, 60_000)

  describe('against a service whose quota runs out after one page', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startFakeService({
        tokens: { [QUOTA_ONE]: { plan: 'ent', quota: 1 } },
        behaviour: () => ({ css: '.ucc-hero{color:#123}', instant: true }),
      })
    })
    afterAll(async () => {
      await fake.close()
    })
    const service = (): Options => ({ baseUrl: fake.url, siteUrl: 'https://site.example/', cache: false, concurrency: 1 })
    const token = { CRITICAL_CSS_API_TOKEN: QUOTA_ONE }

    it('without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402', async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') }, token)
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout + run.stderr).toMatch(/402 plan_limit_reached/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'failed', 'inlined'])
      for (const entry of report.pages) {
        if (entry.outcome === 'inlined') expect(criticalCss(files.get(entry.file))).toBe('.ucc-hero{color:#123}')
        else expect(masked(files.get(entry.file)!.toString('utf8')), entry.file).toBe(masked(baseline.get(entry.file)!.toString('utf8')))
      }
      expectOnlyEdits(baseline, files)
    }, 180_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Docusaurus wrote it', async () => {
      const run = await runIn(DIR, 'npx', ['docusaurus', 'build', '--no-minify'], { ...service(), strict: true }, token)
      expect(run.code).not.toBe(0)
      expect(run.stdout + run.stderr).toMatch(/`strict` is on/)
      const files = await readTree(OUT)
      for (const file of PAGES) expect(criticalCss(files.get(file)), file).toBe('')
      expectOnlyEdits(baseline, files)
    }, 180_000)
  })
})
