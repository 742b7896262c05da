/**
 * SvelteKit with adapter-static, as a user runs it: `adapter: criticalCss(adapter(...))` from
 * 'unplugin-critical-css/sveltekit' in test/frameworks/sveltekit (3 prerendered pages,
 * `paths.base: '/shop'`, `precompress: true`), built with `vite build`. Every prerendered page
 * gets critical CSS rendered below the base, its .br/.gz are made from the final page, nothing
 * else changes, a rebuild is served from the cache without a browser, and 402 / strict behave
 * as in the plugin.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import type { Options } from '../../../src/core/options.ts'
import { startFakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('sveltekit')
const OUT = join(DIR, 'build')
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const QUOTA_ONE = 'tok_sveltekit_quota1_0123456789'
const PAGES = ['about.html', 'index.html', 'pricing.html']
const BUILD_TIMEOUT = 180_000

type Tree = Map<string, Buffer>

function build(options: Options | null, env: Record<string, string> = {}): Promise<CommandResult> {
  return runIn(DIR, 'npx', ['vite', 'build'], options, env)
}

async function built(options: Options | null, env: Record<string, string> = {}): Promise<Tree> {
  const result = await build(options, env)
  expect(result.code, result.stderr + result.stdout).toBe(0)
  return readTree(OUT)
}

const htmlFiles = (tree: Tree): string[] => [...tree.keys()].filter((file) => file.endsWith('.html')).sort()
/** adapter-static's precompressed copy of a page: made from the page, so it changes with it. */
const compressedPage = (file: string): boolean => /\.html\.(br|gz)$/.test(file)

/** Every precompressed page decompresses to the page as it is now. */
function expectCompressedPagesMatch(tree: Tree): void {
  for (const file of htmlFiles(tree)) {
    const page = tree.get(file)!
    expect(gunzipSync(tree.get(`${file}.gz`)!).equals(page), `${file}.gz`).toBe(true)
    expect(brotliDecompressSync(tree.get(`${file}.br`)!).equals(page), `${file}.br`).toBe(true)
  }
}

describe.sequential('SvelteKit with adapter-static (adapter wrapper)', () => {
  let temp: string
  let baseline: Tree
  let cold: Tree

  beforeAll(async () => {
    temp = await mkdtemp(join(tmpdir(), 'ucc-sveltekit-'))
    baseline = await built(null)
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await removeDirs(OUT, join(DIR, '.svelte-kit'), temp)
  })

  it('gives every prerendered page its critical CSS, below the base, and changes nothing else', async () => {
    const report = join(temp, 'report.json')
    cold = await built({ cache: { dir: join(temp, 'cache') }, report })
    expect(htmlFiles(baseline)).toEqual(PAGES)
    const { pages } = await readReport(report)
    expect(pages.map((entry) => [entry.file, entry.outcome]).sort()).toEqual(PAGES.map((file) => [file, 'inlined']))
    // Rendered where the site is served, below `paths.base: '/shop'`.
    expect(pages.map((entry) => entry.url).sort()).toEqual(['/shop/', '/shop/about.html', '/shop/pricing.html'])

    expect([...cold.keys()].sort()).toEqual([...baseline.keys()].sort())
    for (const [file, bytes] of baseline) {
      if (!file.endsWith('.html') && !compressedPage(file)) expect(cold.get(file)?.equals(bytes), file).toBe(true)
    }
    expectCompressedPagesMatch(cold)
    for (const file of PAGES) {
      const page = cold.get(file)!.toString('utf8')
      const css = CRITICAL.exec(page)?.[1] ?? ''
      // Above the fold: the header and the 100vh hero; below it: the details and the footer.
      expect(css, file).toContain('.masthead{')
      expect(css, file).toContain('.hero{')
      expect(css, file).not.toContain('.site-footer')
      expect(css, file).not.toContain('.details')
      expect(page, file).toBe(inlineCriticalCss(baseline.get(file)!.toString('utf8'), css).html)
    }
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temp, 'warm.json')
    const warm = await built({ cache: { dir: join(temp, 'cache') }, report }, { CHROME_PATH: '/nonexistent/chrome' })
    const { pages } = await readReport(report)
    expect(pages.map((entry) => [entry.source, entry.outcome])).toEqual(PAGES.map(() => ['cache', 'inlined']))
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as adapter-static wrote them; with strict the build fails and writes nothing', async () => {
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
      for (const [file, bytes] of baseline) {
        if (!file.startsWith(changed[0]!)) expect(tree.get(file)?.equals(bytes), file).toBe(true)
      }
      expectCompressedPagesMatch(tree)

      const strict = await build({ ...service, strict: true })
      expect(strict.code).not.toBe(0)
      expect(strict.stderr + strict.stdout).toMatch(/`strict` is on/)
      expect(await readTree(OUT)).toEqual(baseline)
    } finally {
      await fake.close()
    }
  }, BUILD_TIMEOUT)
})
