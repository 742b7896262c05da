/**
 * Eleventy 3, built with its own CLI (`npx @11ty/eleventy`) over test/frameworks/eleventy,
 * whose config adds `unplugin-critical-css/eleventy` as a user would: every page it writes
 * gets critical CSS and nothing else changes, a rebuild needs no browser, a path prefix is
 * the base the pages are served below, and a 402 fails the build only with `strict`.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import { startFakeService, type FakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('eleventy')
const OUT = join(DIR, '_site')
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const QUOTA_ONE = 'tok_eleventy_quota1_0123456789'

/** Builds the site into `_site` (emptied first: Eleventy never removes what it wrote before) and reads it back. */
async function build(options: Options | null, env: Record<string, string> = {}, args: string[] = []): Promise<{ run: CommandResult; files: Map<string, Buffer> }> {
  await removeDirs(OUT)
  const run = await runIn(DIR, 'npx', ['@11ty/eleventy', ...args], options, env)
  return { run, files: run.code === 0 ? await readTree(OUT) : new Map() }
}

function pagesOf(files: Map<string, Buffer>): string[] {
  return [...files.keys()].filter((file) => file.endsWith('.html')).sort()
}

function criticalCss(page: Buffer | undefined): string {
  return CRITICAL.exec(page?.toString('utf8') ?? '')?.[1] ?? ''
}

/** The built tree is the baseline with only the inliner's edits: other files byte for byte, each page `inlineCriticalCss(baseline, its css)`. */
function expectOnlyEdits(baseline: Map<string, Buffer>, built: Map<string, Buffer>): void {
  expect([...built.keys()].sort()).toEqual([...baseline.keys()].sort())
  for (const [file, bytes] of baseline) {
    if (!file.endsWith('.html')) {
      expect(built.get(file)?.equals(bytes), file).toBe(true)
      continue
    }
    const css = criticalCss(built.get(file))
    expect(built.get(file)?.toString('utf8'), file).toBe(inlineCriticalCss(bytes.toString('utf8'), css).html)
  }
}

describe.sequential('Eleventy: eleventyConfig.addPlugin(criticalCss)', () => {
  let temp: string
  let baseline: Map<string, Buffer>
  let cold: Map<string, Buffer>

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'ucc-eleventy-'))
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expect(off.run.code, off.run.stderr).toBe(0)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(['about.html', 'index.html', 'pricing/index.html'])

    const on = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })
    expect(on.run.code, on.run.stderr).toBe(0)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expect(report.pages.map((entry) => entry.file).sort()).toEqual(pagesOf(cold))
    expect(report.pages.map((entry) => entry.outcome)).toEqual(['inlined', 'inlined', 'inlined'])
    for (const file of pagesOf(cold)) {
      const css = criticalCss(cold.get(file))
      // The hero fills the first screen; the footer is only below it.
      expect(css, file).toContain('.hero{')
      expect(css, file).not.toContain('.below')
    }
    expectOnlyEdits(baseline, cold)
  }, 60_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report-warm.json') }, { CHROME_PATH: '/nonexistent/chrome' })
    expect(again.run.code, again.run.stderr).toBe(0)
    const report = await readReport(join(temp, 'report-warm.json'))
    expect(report.pages.map((entry) => [entry.source, entry.outcome])).toEqual([
      ['cache', 'inlined'],
      ['cache', 'inlined'],
      ['cache', 'inlined'],
    ])
    expect(again.files).toEqual(cold)
  }, 60_000)

  it('serves the pages below the path prefix (`--pathprefix`)', async () => {
    const args = ['--pathprefix=/blog/']
    const off = await build(null, {}, args)
    expect(off.run.code, off.run.stderr).toBe(0)
    expect(off.files.get('index.html')?.toString('utf8')).toContain('href="/blog/css/style.css"')
    const on = await build({ cache: false, report: join(temp, 'report-prefix.json') }, {}, args)
    expect(on.run.code, on.run.stderr).toBe(0)
    const report = await readReport(join(temp, 'report-prefix.json'))
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/blog/about.html', 'inlined'],
      ['/blog/', 'inlined'],
      ['/blog/pricing/', 'inlined'],
    ])
    // Rendered from the prefixed stylesheet URL, so the page found its CSS.
    expect(criticalCss(on.files.get('index.html'))).toContain('.hero{')
    expectOnlyEdits(off.files, on.files)
  }, 60_000)

  describe('against a service whose quota runs out after one page', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startFakeService({
        tokens: { [QUOTA_ONE]: { plan: 'ent', quota: 1 } },
        behaviour: () => ({ css: '.hero{color:#123}', instant: true }),
      })
    })
    afterAll(async () => {
      await fake.close()
    })
    const service = (): Options => ({ baseUrl: fake.url, token: QUOTA_ONE, siteUrl: 'https://site.example/', cache: false, concurrency: 1 })

    it('without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402', async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout + run.stderr).toMatch(/402 plan_limit_reached/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'inlined'])
      for (const entry of report.pages) {
        if (entry.outcome === 'inlined') expect(criticalCss(files.get(entry.file))).toBe('.hero{color:#123}')
        else expect(files.get(entry.file)?.equals(baseline.get(entry.file)!), entry.file).toBe(true)
      }
      expectOnlyEdits(baseline, files)
    }, 60_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Eleventy wrote it', async () => {
      await removeDirs(OUT)
      const run = await runIn(DIR, 'npx', ['@11ty/eleventy'], { ...service(), strict: true }, {})
      expect(run.code).not.toBe(0)
      expect(run.stdout + run.stderr).toMatch(/`strict` is on/)
      const files = await readTree(OUT)
      expect([...files.keys()].sort()).toEqual([...baseline.keys()].sort())
      for (const [file, bytes] of baseline) expect(files.get(file)?.equals(bytes), file).toBe(true)
    }, 60_000)
  })
})
