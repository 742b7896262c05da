/**
 * Issue 32, in the bundler plugin: a build whose bundler links relatively (Vite `base: './'`,
 * webpack `publicPath: 'auto'`) works at any path and from `file://`, and so must what the
 * plugin adds: the loader and the critical CSS's url()s. The site's hero has a background
 * image the bundler emits as a file, so the critical CSS names a file of the build. The same
 * site built without the plugin is the reference, opened the same way in Chromium.
 */
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SITE_CSS, buildSite, createProject, type BuildOutput } from '../fixtures/sites.ts'
import { compareScreenshots, startSiteViewer, type PageView, type SiteViewer, type Where } from '../fixtures/site-view.ts'
import { CRITICAL } from '../fixtures/html.ts'

/** Larger than Vite's 4 KiB inline limit, so it is emitted as a file, not a data: URL. */
const HERO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><!-- ${'x'.repeat(5000)} --><rect width="8" height="8" fill="#f80"/></svg>`
const STYLES = { '.hero': ['background-image', 'background-color', 'min-height'], footer: ['padding', 'color'] }

let viewer: SiteViewer | undefined
const roots: string[] = []

afterAll(async () => {
  await viewer?.close()
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

async function built(bundler: 'vite' | 'webpack', base: string, withoutPlugin: boolean): Promise<BuildOutput> {
  const root = await createProject(bundler)
  roots.push(root)
  await writeFile(join(root, 'src/style.css'), `${SITE_CSS}.hero{background-image:url(./hero.svg)}\n`)
  await writeFile(join(root, 'src/hero.svg'), HERO_SVG)
  const output = await buildSite(bundler, { root, base, withoutPlugin, plugin: { cache: false } })
  expect(output.error).toBeNull()
  return output
}

function expectSame(original: PageView, processed: PageView): void {
  const applied = (view: PageView): string[] => view.stylesheets.filter((sheet) => sheet.applied).map((sheet) => sheet.url)
  expect(applied(original).length, original.address).toBeGreaterThan(0)
  expect(applied(processed), `${processed.address}, failed: ${processed.failed.join(', ') || 'none'}`).toEqual(applied(original))
  expect(processed.failed, processed.address).toEqual(original.failed)
  expect(processed.styles, processed.address).toEqual(original.styles)
  const diff = compareScreenshots(original.screenshot, processed.screenshot)
  expect(diff.differentPixels, `screenshot of ${processed.address}`).toBe(0)
}

// Vite writes `crossorigin` on its stylesheet links, and Chromium makes no CORS request to
// `file:`: its build gets no stylesheet from disk, with or without the plugin.
describe.each([
  ['vite', './', ['/', '/project/']],
  ['webpack', 'auto', ['/', '/project/', 'file']],
] as const satisfies readonly (readonly [string, string, readonly Where[]])[])('%s with base %j', (bundler, base, places) => {
  it(`the pages get a relative loader and relative url()s, and work at ${places.join(', ')} as built without the plugin`, async () => {
    const [original, processed] = [await built(bundler, base, true), await built(bundler, base, false)]
    const nested = processed.files.get('pricing/index.html')!.toString()
    expect(nested).toMatch(/<script src="\.\.\/critical-css-loader\.[0-9a-f]{8}\.js"/)
    const css = CRITICAL.exec(nested)?.[1] ?? ''
    expect(css).toMatch(/\.hero\{[^}]*background-image:url\(\.\.\/[^)]+\.svg\)/)
    viewer ??= await startSiteViewer()
    for (const where of places) {
      for (const file of ['index.html', 'pricing/index.html']) {
        expectSame(await viewer.view(original.outDir, file, where, { styles: STYLES }), await viewer.view(processed.outDir, file, where, { styles: STYLES }))
      }
    }
  }, 180_000)
})
