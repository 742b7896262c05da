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
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import type { Options } from '../../../src/core/options.ts'
import { startFakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('vitepress')
const OUT = join(DIR, '.vitepress', 'dist')
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const QUOTA_ONE = 'tok_vitepress_quota1_0123456789'
const BUILD_TIMEOUT = 180_000

type Tree = Map<string, Buffer>

/**
 * What each page's critical CSS must hold (its above-the-fold part) and must not (a part
 * the page has only below the fold). Doc pages are long: their prev/next pager is far down.
 * VitePress writes 404.html with an empty #app and renders it in the browser, so whether
 * the render lands before the page is measured varies: only its base rules are certain.
 */
const EXPECTED: Record<string, { holds: string[]; not: string[] }> = {
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
  expect(result.code, result.stderr + result.stdout).toBe(0)
  return readTree(OUT)
}

const htmlFiles = (tree: Tree): string[] => [...tree.keys()].filter((file) => file.endsWith('.html')).sort()

describe.sequential('VitePress (buildEnd)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree
  let cacheDir: string

  beforeAll(async () => {
    const temp = await mkdtemp(join(tmpdir(), 'ucc-vitepress-'))
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
    const pages = htmlFiles(baseline)
    expect(pages).toEqual(Object.keys(EXPECTED).sort())
    const { pages: entries } = await readReport(report)
    expect(entries.map((entry) => [entry.file, entry.outcome]).sort()).toEqual(pages.map((file) => [file, 'inlined']))
    // Rendered where VitePress serves them, below `base: '/docs/'`.
    expect(entries.map((entry) => entry.url).sort()).toEqual(['/docs/', '/docs/404.html', '/docs/about.html', '/docs/guide.html', '/docs/reference.html'])

    expect(htmlFiles(cold)).toEqual(pages)
    for (const [file, bytes] of baseline) {
      if (!file.endsWith('.html')) expect(cold.get(file)?.equals(bytes), file).toBe(true)
    }
    const stylesheet = [...baseline].find(([file]) => /^assets\/style\.[\w-]+\.css$/.test(file))?.[1]
    expect(stylesheet).toBeDefined()
    for (const file of pages) {
      const page = cold.get(file)!.toString('utf8')
      const css = CRITICAL.exec(page)?.[1] ?? ''
      for (const rule of EXPECTED[file]!.holds) expect(css, `${file} holds ${rule}`).toContain(rule)
      for (const rule of EXPECTED[file]!.not) expect(css, `${file} lacks ${rule}`).not.toContain(rule)
      // The default theme's stylesheet is large: the page gets only a part of it.
      expect(css.length, file).toBeLessThan(stylesheet!.length / 2)
      expect(page, file).toBe(inlineCriticalCss(baseline.get(file)!.toString('utf8'), css).html)
    }
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temps[0]!, 'warm.json')
    const warm = await built({ cache: { dir: cacheDir }, report }, { CHROME_PATH: '/nonexistent/chrome' })
    const { pages } = await readReport(report)
    expect(pages).toHaveLength(htmlFiles(baseline).length)
    expect(pages.every((entry) => entry.source === 'cache' && entry.outcome === 'inlined')).toBe(true)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as VitePress wrote them; with strict the build fails and writes nothing', async () => {
    const fake = await startFakeService({ tokens: { [QUOTA_ONE]: { plan: 'ent', quota: 1 } } })
    try {
      const service = { baseUrl: fake.url, token: QUOTA_ONE, siteUrl: 'https://site.example/', cache: false as const, concurrency: 1 }
      const lenient = await build(service)
      expect(lenient.code, lenient.stderr + lenient.stdout).toBe(0)
      expect(lenient.stderr + lenient.stdout).toMatch(/402/)
      const tree = await readTree(OUT)
      const changed = htmlFiles(tree).filter((file) => !tree.get(file)!.equals(baseline.get(file)!))
      expect(changed).toHaveLength(1)
      expect(tree.get(changed[0]!)!.toString('utf8')).toMatch(CRITICAL)
      for (const [file, bytes] of baseline) if (file !== changed[0]) expect(tree.get(file)?.equals(bytes), file).toBe(true)

      const strict = await build({ ...service, strict: true })
      expect(strict.code).not.toBe(0)
      expect(strict.stderr + strict.stdout).toMatch(/`strict` is on/)
      expect(await readTree(OUT)).toEqual(baseline)
    } finally {
      await fake.close()
    }
  }, BUILD_TIMEOUT)
})
