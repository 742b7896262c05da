/**
 * Astro 5, built with its own CLI (`npx astro build`) over test/frameworks/astro, whose config
 * adds `unplugin-critical-css/astro` as a user would: every page it writes gets critical CSS
 * and nothing else changes, a rebuild needs no browser, `base` is the path the pages are
 * served below, a server build gives its prerendered pages CSS and says what happens to the
 * others, and a 402 fails the build only with `strict`.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import { startFakeService, type FakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('astro')
const OUT = join(DIR, 'dist')
const OUT_BASE = join(DIR, 'dist-base')
const OUT_SERVER = join(DIR, 'dist-server')
const PAGES = ['about/index.html', 'blog/first-post/index.html', 'blog/index.html', 'index.html']
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const QUOTA_ONE = 'tok_astro_quota1_0123456789ab'
// Telemetry would reach out to the network on every build.
const QUIET = { ASTRO_TELEMETRY_DISABLED: '1' }
// The variants check where pages are found, not the renders: one viewport is enough and halves the browser's work.
const ONE_VIEWPORT = { cache: false, viewports: [{ width: 1300, height: 900 }] } satisfies Options

/** Builds the site (Astro empties its output folder first) and reads back `out`. */
async function build(options: Options | null, env: Record<string, string> = {}, out = OUT): Promise<{ run: CommandResult; files: Map<string, Buffer> }> {
  const run = await runIn(DIR, 'npx', ['astro', 'build'], options, { ...QUIET, ...env })
  return { run, files: run.code === 0 ? await readTree(out) : new Map() }
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

/** The hero fills the first screen; the footer is only below it. */
function expectAboveTheFold(files: Map<string, Buffer>): void {
  for (const file of pagesOf(files)) {
    const css = criticalCss(files.get(file))
    expect(css, file).toContain('.hero{')
    expect(css, file).not.toContain('.site-footer')
  }
}

describe.sequential('Astro: integrations: [criticalCss()]', () => {
  let temp: string
  let baseline: Map<string, Buffer>
  let cold: Map<string, Buffer>

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'ucc-astro-'))
  })
  afterAll(async () => {
    await removeDirs(temp, OUT, OUT_BASE, OUT_SERVER)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expect(off.run.code, off.run.stderr).toBe(0)
    baseline = off.files
    expect(pagesOf(baseline)).toEqual(PAGES)
    // The stylesheets are files the pages link: what critical CSS lets load without blocking.
    expect(baseline.get('index.html')?.toString('utf8')).toMatch(/<link rel="stylesheet" href="\/_astro\/[^"]+\.css">/)

    const on = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })
    expect(on.run.code, on.run.stderr).toBe(0)
    cold = on.files
    const report = await readReport(join(temp, 'report.json'))
    expect(report.pages.map((entry) => entry.file).sort()).toEqual(pagesOf(cold))
    expect(report.pages.map((entry) => entry.outcome)).toEqual(PAGES.map(() => 'inlined'))
    expectAboveTheFold(cold)
    expectOnlyEdits(baseline, cold)
  }, 60_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report-warm.json') }, { CHROME_PATH: '/nonexistent/chrome' })
    expect(again.run.code, again.run.stderr).toBe(0)
    const report = await readReport(join(temp, 'report-warm.json'))
    expect(report.pages.map((entry) => [entry.source, entry.outcome])).toEqual(PAGES.map(() => ['cache', 'inlined']))
    expect(again.files).toEqual(cold)
  }, 60_000)

  it('serves the pages below `base`', async () => {
    const on = await build({ ...ONE_VIEWPORT, report: join(temp, 'report-base.json') }, { UCC_ASTRO_BASE: '/docs' }, OUT_BASE)
    expect(on.run.code, on.run.stderr).toBe(0)
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

  it("`output: 'server'`: the prerendered page gets its CSS, and the log names the pages rendered on demand", async () => {
    const on = await build({ ...ONE_VIEWPORT, report: join(temp, 'report-server.json') }, { UCC_ASTRO_OUTPUT: 'server' }, join(OUT_SERVER, 'client'))
    expect(on.run.code, on.run.stderr).toBe(0)
    expect(pagesOf(on.files)).toEqual(['index.html'])
    const report = await readReport(join(temp, 'report-server.json'))
    expect(report.pages.map((entry) => [entry.file, entry.outcome])).toEqual([['index.html', 'inlined']])
    expectAboveTheFold(on.files)
    expect(on.run.stdout + on.run.stderr).toMatch(/3 pages are rendered on demand \(\/about, \/blog\/first-post, \/blog\)/)
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
    // No `siteUrl`: the integration takes the page URLs from the fixture's Astro `site`.
    const service = (): Options => ({ baseUrl: fake.url, token: QUOTA_ONE, cache: false, concurrency: 1 })

    it("without strict: the build succeeds, one page is inlined, the others stay byte-identical, and the warning names 402; the page URLs default to Astro's `site`", async () => {
      const { run, files } = await build({ ...service(), report: join(temp, 'report-402.json') })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout + run.stderr).toMatch(/402/)
      const report = await readReport(join(temp, 'report-402.json'))
      expect(report.pages.map((entry) => entry.url)).toEqual(PAGES.map((file) => `https://site.example/${file.replace(/index\.html$/, '')}`))
      expect(report.pages.map((entry) => entry.outcome).sort()).toEqual(['failed', 'failed', 'failed', 'inlined'])
      for (const entry of report.pages) {
        if (entry.outcome === 'inlined') expect(criticalCss(files.get(entry.file))).toBe('.hero{color:#123}')
        else expect(files.get(entry.file)?.equals(baseline.get(entry.file)!), entry.file).toBe(true)
      }
      expectOnlyEdits(baseline, files)
    }, 60_000)

    it('with strict: the build exits non-zero naming `strict`, and every page is as Astro wrote it', async () => {
      const run = await runIn(DIR, 'npx', ['astro', 'build'], { ...service(), siteUrl: 'https://site.example/', strict: true }, QUIET)
      expect(run.code).not.toBe(0)
      expect(run.stdout + run.stderr).toMatch(/`strict` is on/)
      const files = await readTree(OUT)
      expect([...files.keys()].sort()).toEqual([...baseline.keys()].sort())
      for (const [file, bytes] of baseline) expect(files.get(file)?.equals(bytes), file).toBe(true)
    }, 60_000)
  })
})
