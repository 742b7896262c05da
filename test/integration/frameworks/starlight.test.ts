/**
 * Starlight, the docs theme most Astro docs sites use, over Astro 7: test/frameworks/starlight
 * (a splash page, three doc pages, Starlight's own 404) adds `unplugin-critical-css/astro` after
 * `starlight()`, as its docs tell a user to add an integration. Every page Starlight writes gets
 * its above-the-fold CSS, nothing else changes (its Pagefind search index and sitemap included),
 * and a rebuild comes from the cache with no browser.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { buildAndRead, expectAllFromCache, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, frameworkDir, NO_BROWSER, pagesOf, readReport, removeDirs, tempDir, type CommandResult, type CriticalRules, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('starlight')
const OUT = join(DIR, 'dist')
const PAGES = ['404.html', 'guides/configuration/index.html', 'guides/getting-started/index.html', 'index.html', 'reference/options/index.html']
const QUIET = { ASTRO_TELEMETRY_DISABLED: '1' }

/**
 * Every page has Starlight's header; a doc page's first screen is its title and first
 * paragraphs, and its code block, its tip aside and its prev/next links are far below. The
 * splash page and the 404 are short: their whole page is in the first screen on a desktop.
 */
const DOC: CriticalRules = { holds: ['.site-title', '.sl-markdown-content', '.content-panel'], not: ['.expressive-code', '.starlight-aside', '.pagination-links'] }
const EXPECTED: Record<string, CriticalRules> = {
  '404.html': { holds: ['.site-title', '.hero:where'], not: [] },
  'index.html': { holds: ['.site-title', '.hero:where', '.card-grid'], not: [] },
  'guides/configuration/index.html': DOC,
  'guides/getting-started/index.html': DOC,
  'reference/options/index.html': DOC,
}

function build(options: Options | null, env: Record<string, string> = {}): Promise<{ run: CommandResult; files: Tree }> {
  return buildAndRead(DIR, 'npx', ['astro', 'build'], OUT, options, { ...QUIET, ...env })
}

describe.sequential('Starlight (Astro 7): integrations: [starlight(), criticalCss()]', () => {
  let temp: string
  let cold: Tree

  beforeAll(async () => {
    temp = await tempDir('starlight')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expectBuildOk(off.run)
    expect(pagesOf(off.files)).toEqual(PAGES)
    // Starlight's stylesheet is a file every page links: what critical CSS lets load without blocking.
    expect(off.files.get('index.html')?.toString('utf8')).toMatch(/<link rel="stylesheet" href="\/_astro\/[^"]+\.css">/)

    const on = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report.json') })
    expectBuildOk(on.run)
    cold = on.files
    expectAllInlined(await readReport(join(temp, 'report.json')), PAGES)
    expectCriticalRules(cold, EXPECTED)
    // The search index Pagefind built from the pages and the sitemap are byte for byte as without us.
    expect([...cold.keys()].filter((file) => file.startsWith('pagefind/')).length).toBeGreaterThan(0)
    expectOnlyEdits(off.files, cold)
  }, 90_000)

  it('a rebuild is served from the cache, with no browser on the machine, and writes the same site', async () => {
    const again = await build({ cache: { dir: join(temp, 'cache') }, report: join(temp, 'report-warm.json') }, NO_BROWSER)
    expectBuildOk(again.run)
    expectAllFromCache(await readReport(join(temp, 'report-warm.json')), PAGES.length)
    expect(again.files).toEqual(cold)
  }, 60_000)
})
