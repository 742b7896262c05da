/**
 * Tailwind 4 on Vite's defaults (test/frameworks/tailwind4), issue 49. Vite's minifier drops
 * Tailwind's `@layer theme, base, components, utilities;` statement, since the blocks already
 * come in that order. On this landing page nothing of the `components` layer is above the
 * fold, so the critical CSS holds no `components` block; the critical style stays in the page,
 * before the full sheet, and unless it declares the whole order, `components` is ordered last
 * once the full sheet loads and beats `utilities`: the pricing button turns from emerald,
 * square, 40 px padding to the kit's purple, rounded, 20 px. Fully loaded, the processed page
 * must be the plain build's, pixel for pixel, at both viewports.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../../src/core/options.ts'
import { criticalCss, expectBuildOk, frameworkDir, readTree, removeDirs, runIn, tempDir, type Tree } from '../../fixtures/frameworks.ts'
import { compareScreenshots, startSiteViewer, type SiteViewer } from '../../fixtures/site-view.ts'

const DIR = frameworkDir('tailwind4')
const BUILD_TIMEOUT = 180_000
const VIEWPORTS = [
  { width: 1300, height: 900 },
  { width: 412, height: 915 },
]
/** What the layers decide below the fold: a component class beside utilities that override it. */
const STYLES = {
  '#buy': ['background-color', 'border-top-left-radius', 'padding-left', 'color'],
  '#terms': ['color', 'text-decoration-line'],
  'h1': ['color', 'font-size'],
}

let temp: string
let viewer: SiteViewer

async function built(options: Options | null, name: string): Promise<{ dir: string; files: Tree }> {
  const dir = join(temp, name)
  const run = await runIn(DIR, 'npx', ['vite', 'build', '--outDir', dir], options)
  expectBuildOk(run)
  return { dir, files: await readTree(dir) }
}

describe.sequential('Tailwind 4 with Vite’s defaults: a landing page whose components layer has nothing above the fold', () => {
  let plain: { dir: string; files: Tree }
  let processed: { dir: string; files: Tree }

  beforeAll(async () => {
    temp = await tempDir('tailwind4')
    plain = await built(null, 'plain')
    processed = await built({ cache: false, report: false }, 'processed')
    viewer = await startSiteViewer()
  }, BUILD_TIMEOUT)

  afterAll(async () => {
    await viewer?.close()
    await removeDirs(temp)
  })

  it('as built: the sheet has Tailwind’s layers as blocks, with no statement of their order', () => {
    const css = [...plain.files].filter(([file]) => file.endsWith('.css')).map(([, bytes]) => bytes.toString())
    expect(css).toHaveLength(1)
    expect(css[0]).toMatch(/@layer theme\{.*@layer components\{.*@layer utilities\{/s)
    expect(css[0]).not.toMatch(/@layer [\w-]+,/)
    // The premise: no rule of the components layer is critical here.
    expect(criticalCss(processed.files.get('index.html'))).not.toContain('btn-primary')
  })

  it.each(VIEWPORTS)('fully loaded at $width×$height, the processed page is the plain build’s: the same computed styles, pixel for pixel', async (viewport) => {
    const before = await viewer.view(plain.dir, 'index.html', '/', { styles: STYLES, viewport })
    const after = await viewer.view(processed.dir, 'index.html', '/', { styles: STYLES, viewport })
    expect(after.failed).toEqual(before.failed)
    expect(after.styles).toEqual(before.styles)
    // The plain build's colours, not the kit's: the utilities beat the component.
    expect(before.styles['#buy']?.['padding-left']).toBe('40px')
    expect(compareScreenshots(before.screenshot, after.screenshot).differentPixels).toBe(0)
  }, 60_000)
})
