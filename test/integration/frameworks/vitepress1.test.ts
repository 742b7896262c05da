/**
 * VitePress 1.6.4, the registry's `latest` and what most VitePress sites run, over the same site
 * as vitepress.test.ts (test/frameworks/vitepress1, a copy pinned to 1.6.4, the site at the
 * package root and built with `vitepress build`): one cold build, every page gets its critical
 * CSS below the base and nothing else changes. The cache, the paths it lands on, 402 and strict
 * run on VitePress 2 in vitepress.test.ts: the `buildEnd` hook and the fields it reads are the
 * same in both lines.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, frameworkDir, pagesOf, readReport, readTree, removeDirs, runIn, tempDir, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('vitepress1')
const OUT = join(DIR, '.vitepress', 'dist')
const PAGES = ['404.html', 'about.html', 'guide.html', 'index.html', 'reference.html']
const BUILD_TIMEOUT = 180_000
const DOC = { holds: ['.VPNav', '.VPDoc', '.vp-doc h2'], not: ['.VPDocFooter'] }

async function built(options: Options | null): Promise<Tree> {
  const result = await runIn(DIR, 'npx', ['vitepress', 'build'], options)
  expectBuildOk(result)
  return readTree(OUT)
}

describe('VitePress 1 (buildEnd)', () => {
  let temp: string
  beforeAll(async () => {
    temp = await tempDir('vitepress1')
  })
  afterAll(async () => {
    await removeDirs(OUT, join(DIR, '.vitepress', 'cache'), temp)
  })

  it('gives every page VitePress wrote its critical CSS, below the base, and changes nothing else', async () => {
    const baseline = await built(null)
    expect(pagesOf(baseline)).toEqual(PAGES)
    const cold = await built({ cache: false, report: join(temp, 'report.json') })
    const report = await readReport(join(temp, 'report.json'))
    expectAllInlined(report, PAGES)
    expect(report.pages.map((entry) => entry.url).sort()).toEqual(['/docs/', '/docs/404.html', '/docs/about.html', '/docs/guide.html', '/docs/reference.html'])
    expectOnlyEdits(baseline, cold, { base: '/docs/' })
    // As in vitepress.test.ts: the hero or the doc layout is above the fold, the footer below; the 404 renders in the browser.
    expectCriticalRules(cold, {
      'index.html': { holds: ['.VPNav', '.VPHero', '.VPFeatures'], not: ['.VPFooter'] },
      'guide.html': DOC,
      'reference.html': DOC,
      'about.html': DOC,
      '404.html': { holds: ['body{'], not: ['.VPHero', '.VPDocFooter'] },
    })
  }, BUILD_TIMEOUT)
})
