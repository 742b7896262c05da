/**
 * Nuxt 3, as a user runs it: `modules: [['unplugin-critical-css/nuxt', options]]` in
 * test/frameworks/nuxt (three pages, a global stylesheet), built with `nuxt generate`.
 * Every page Nitro prerendered gets critical CSS, nothing else changes, a rebuild is served
 * from the cache without a browser, and 402 / strict behave as in the plugin.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, expectQuotaThenStrict, frameworkDir, NO_BROWSER, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type CommandResult, type CriticalRules, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('nuxt')
const OUT = join(DIR, '.output', 'public')
const QUOTA_ONE = 'tok_nuxt_quota1_0123456789abcd'
const BUILD_TIMEOUT = 180_000

/**
 * What each page's critical CSS must hold (its above-the-fold part) and must not (a part
 * the page has only below the fold). Nuxt writes 200.html and 404.html as empty shells the
 * app renders in the browser (its error page there): only the base rules are certain.
 */
const EXPECTED: Record<string, CriticalRules> = {
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
  expectBuildOk(result)
  return readTree(OUT)
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

describe.sequential('Nuxt (nuxt generate)', () => {
  const temps: string[] = []
  let baseline: Tree
  let cold: Tree
  let cacheDir: string

  beforeAll(async () => {
    const temp = await tempDir('nuxt')
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
    const pages = pagesOf(baseline)
    expect(pages).toEqual(Object.keys(EXPECTED).sort())
    const coldReport = await readReport(report)
    expectAllInlined(coldReport, pages)
    expect(coldReport.pages.map((entry) => entry.url).sort()).toEqual(['/', '/200.html', '/404.html', '/about/', '/pricing/'])

    expect(pagesOf(cold)).toEqual(pages)
    expectOnlyEdits(baseline, cold)
    expectCriticalRules(cold, EXPECTED)
  }, BUILD_TIMEOUT)

  it('a rebuild is served from the cache without a browser and writes the same site', async () => {
    const report = join(temps[0]!, 'warm.json')
    const warm = comparable(await built({ cache: { dir: cacheDir }, report }, NO_BROWSER))
    expectAllFromCache(await readReport(report), pagesOf(baseline).length)
    expect(warm).toEqual(cold)
  }, BUILD_TIMEOUT)

  it('402 leaves the pages it hit as Nuxt wrote them; with strict the build fails and writes nothing', async () => {
    await expectQuotaThenStrict({ token: QUOTA_ONE, build, read: async () => comparable(await readTree(OUT)), baseline })
  }, BUILD_TIMEOUT)
})
