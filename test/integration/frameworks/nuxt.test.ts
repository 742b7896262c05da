/**
 * Nuxt 3, as a user runs it: `modules: [['unplugin-critical-css/nuxt', options]]` in
 * test/frameworks/nuxt (three pages, a global stylesheet), built with `nuxt generate`.
 * Every page Nitro prerendered gets critical CSS, nothing else changes, a rebuild is served
 * from the cache without a browser, and 402 / strict behave as in the plugin.
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../../src/html/inline.ts'
import type { Options } from '../../../src/core/options.ts'
import { startFakeService } from '../../fixtures/fake-service.ts'
import { frameworkDir, readReport, readTree, removeDirs, runIn, type CommandResult } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('nuxt')
const OUT = join(DIR, '.output', 'public')
const CRITICAL = /<style data-critical-css>([^<]*)<\/style>/
const QUOTA_ONE = 'tok_nuxt_quota1_0123456789abcd'
const BUILD_TIMEOUT = 180_000

type Tree = Map<string, Buffer>

/**
 * What each page's critical CSS must hold (its above-the-fold part) and must not (a part
 * the page has only below the fold). Nuxt writes 200.html and 404.html as empty shells the
 * app renders in the browser (its error page there): only the base rules are certain.
 */
const EXPECTED: Record<string, { holds: string[]; not: string[] }> = {
  'index.html': { holds: ['body{', '.hero{', '.hero h1{'], not: ['.below'] },
  'about/index.html': { holds: ['body{', '.hero{', '.hero h1{'], not: ['.below'] },
  'pricing/index.html': { holds: ['body{', '.hero{', '.hero h1{'], not: ['.below'] },
  '200.html': { holds: ['body{'], not: ['.hero', '.below'] },
  '404.html': { holds: ['body{'], not: ['.hero', '.below'] },
}

function build(options: Options | null, env: Record<string, string> = {}): Promise<CommandResult> {
  // Vitest's TEST=true makes Nuxt build for tests (`import.meta.test`, silent logs); empty is unset to it.
  return runIn(DIR, 'npx', ['nuxt', 'generate'], options, { NUXT_TELEMETRY_DISABLED: '1', TEST: '', ...env })
}

async function built(options: Options | null, env: Record<string, string> = {}): Promise<Tree> {
  const result = await build(options, env)
  expect(result.code, result.stderr + result.stdout).toBe(0)
  return readTree(OUT)
}

const htmlFiles = (tree: Tree): string[] => [...tree.keys()].filter((file) => file.endsWith('.html')).sort()

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

describe.sequential('Nuxt (nuxt generate)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree
  let cacheDir: string

  beforeAll(async () => {
    const temp = await mkdtemp(join(tmpdir(), 'ucc-nuxt-'))
    temps.push(temp)
    cacheDir = join(temp, 'cache')
    baseline = comparable(await built(null))
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await removeDirs(join(DIR, '.output'), join(DIR, '.nuxt'), join(DIR, 'dist'), ...temps)
  })

  it('gives every page Nuxt prerendered its critical CSS and changes nothing else', async () => {
    const report = join(temps[0]!, 'report.json')
    cold = comparable(await built({ cache: { dir: cacheDir }, report }))
    const pages = htmlFiles(baseline)
    expect(pages).toEqual(Object.keys(EXPECTED).sort())
    const { pages: entries } = await readReport(report)
    expect(entries.map((entry) => [entry.file, entry.outcome]).sort()).toEqual(pages.map((file) => [file, 'inlined']))
    expect(entries.map((entry) => entry.url).sort()).toEqual(['/', '/200.html', '/404.html', '/about/', '/pricing/'])

    expect(htmlFiles(cold)).toEqual(pages)
    for (const [file, bytes] of baseline) {
      if (!file.endsWith('.html')) expect(cold.get(file)?.equals(bytes), file).toBe(true)
    }
    for (const file of pages) {
      const page = cold.get(file)!.toString('utf8')
      const css = CRITICAL.exec(page)?.[1] ?? ''
      for (const rule of EXPECTED[file]!.holds) expect(css, `${file} holds ${rule}`).toContain(rule)
      for (const rule of EXPECTED[file]!.not) expect(css, `${file} lacks ${rule}`).not.toContain(rule)
      expect(page, file).toBe(inlineCriticalCss(baseline.get(file)!.toString('utf8'), css).html)
    }
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temps[0]!, 'warm.json')
    const warm = comparable(await built({ cache: { dir: cacheDir }, report }, { CHROME_PATH: '/nonexistent/chrome' }))
    const { pages } = await readReport(report)
    expect(pages).toHaveLength(htmlFiles(baseline).length)
    expect(pages.every((entry) => entry.source === 'cache' && entry.outcome === 'inlined')).toBe(true)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as Nuxt wrote them; with strict the build fails and writes nothing', async () => {
    const fake = await startFakeService({ tokens: { [QUOTA_ONE]: { plan: 'ent', quota: 1 } } })
    try {
      const service = { baseUrl: fake.url, token: QUOTA_ONE, siteUrl: 'https://site.example/', cache: false as const, concurrency: 1 }
      const lenient = await build(service)
      expect(lenient.code, lenient.stderr + lenient.stdout).toBe(0)
      expect(lenient.stderr + lenient.stdout).toMatch(/402/)
      const tree = comparable(await readTree(OUT))
      const changed = htmlFiles(tree).filter((file) => !tree.get(file)!.equals(baseline.get(file)!))
      expect(changed).toHaveLength(1)
      expect(tree.get(changed[0]!)!.toString('utf8')).toMatch(CRITICAL)
      for (const [file, bytes] of baseline) if (file !== changed[0]) expect(tree.get(file)?.equals(bytes), file).toBe(true)

      const strict = await build({ ...service, strict: true })
      expect(strict.code).not.toBe(0)
      expect(strict.stderr + strict.stdout).toMatch(/`strict` is on/)
      expect(comparable(await readTree(OUT))).toEqual(baseline)
    } finally {
      await fake.close()
    }
  }, BUILD_TIMEOUT)
})
