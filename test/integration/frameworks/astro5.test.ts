/**
 * Astro 5, the last line that runs on Node 20 and a large installed base, over the same site as
 * astro.test.ts (test/frameworks/astro5, a copy pinned to Astro 5): one cold build, every page
 * gets its above-the-fold CSS and nothing else changes. The variants (base, server output,
 * cache, 402 and strict) run on Astro 7 in astro.test.ts; the integration has one code path
 * for both, so this file only checks that Astro 5's hooks still reach it.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { buildAndRead, expectAllInlined, expectBuildOk, expectCriticalRules, expectOnlyEdits, frameworkDir, pagesOf, readReport, removeDirs, tempDir, type CommandResult, type Tree } from '../../fixtures/frameworks.ts'

const DIR = frameworkDir('astro5')
const OUT = join(DIR, 'dist')
const PAGES = ['about/index.html', 'blog/first-post/index.html', 'blog/index.html', 'index.html']
const QUIET = { ASTRO_TELEMETRY_DISABLED: '1' }

function build(options: Options | null): Promise<{ run: CommandResult; files: Tree }> {
  return buildAndRead(DIR, 'npx', ['astro', 'build'], OUT, options, QUIET)
}

describe('Astro 5: integrations: [criticalCss()]', () => {
  let temp: string
  beforeAll(async () => {
    temp = await tempDir('astro5')
  })
  afterAll(async () => {
    await removeDirs(temp, OUT)
  })

  it('a cold build gives every page its above-the-fold CSS and changes nothing else', async () => {
    const off = await build(null)
    expectBuildOk(off.run)
    expect(pagesOf(off.files)).toEqual(PAGES)
    const on = await build({ cache: false, report: join(temp, 'report.json') })
    expectBuildOk(on.run)
    expectAllInlined(await readReport(join(temp, 'report.json')), PAGES)
    // The hero fills the first screen; the footer is only below it.
    expectCriticalRules(on.files, () => ({ holds: ['.hero{'], not: ['.site-footer'] }))
    expectOnlyEdits(off.files, on.files)
  }, 60_000)
})
