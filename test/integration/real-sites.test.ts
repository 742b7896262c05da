/**
 * Issue 32, "Folders that work wherever they worked before", on real sites: Hugo, MkDocs and
 * TypeDoc build a small site each, the `critical-css` command processes a copy, and Chromium
 * opens the original and the copy the same way: served at the root, below `/project/`, and
 * from `file://`. Wherever the original gets its full stylesheets, the processed copy must
 * too, fail no request the original did not, and look exactly the same.
 * Plus what a sub-path site, the cache, and an absolute-URL theme need: a Hugo site built
 * for a project page names the `--base` it needs under `--strict`; a run without the base
 * never serves a later run with it; a theme linking `https://example.org/css/main.css` is
 * inlined with `--site-url`.
 * A generator that is not installed skips its block and says why (scripts/site-generators.ts
 * installs them in `pretest`).
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BuildReport } from '../../src/core/report.ts'
import { generatorVersion, missingReason, type Generator } from '../../scripts/site-generators.ts'
import { runCli } from '../fixtures/cli.ts'
import { HUGO_PAGES, MKDOCS_PAGES, TYPEDOC_PAGES, buildHugoSite, buildMkDocsSite, buildTypeDocSite } from '../fixtures/real-sites.ts'
import { compareScreenshots, startSiteViewer, type PageView, type SiteViewer, type Where } from '../fixtures/site-view.ts'
import { tree } from '../fixtures/folders.ts'
import { CRITICAL } from '../fixtures/html.ts'

/** Every page renders once per viewport; two small sites' worth of Chromium on a 2-core machine. */
const SLOW = 240_000

const temps: string[] = []
let viewer: SiteViewer | undefined

/** One Chromium for every view of the file, started by the first test that needs it. */
async function views(): Promise<SiteViewer> {
  viewer ??= await startSiteViewer()
  return viewer
}

afterAll(async () => {
  await viewer?.close()
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function workspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ucc-real-sites-'))
  temps.push(dir)
  return dir
}

/** The generator's version for the block's title, or why the block skips. */
function installed(name: Generator): { version: string | null; title: string } {
  const version = generatorVersion(name)
  return { version, title: version ?? `skipped: ${missingReason(name)}` }
}


interface Processed {
  dir: string
  code: number | null
  stderr: string
  report: BuildReport | null
}

/** A copy of `original`, processed by the command as a user runs it (`critical-css <copy> …flags --json`). */
async function processCopy(work: string, original: string, flags: readonly string[]): Promise<Processed> {
  const dir = await mkdtemp(join(work, 'processed-'))
  await cp(original, dir, { recursive: true })
  const run = await runCli(work, [dir, ...flags, '--json'])
  let report: BuildReport | null = null
  try {
    report = JSON.parse(run.stdout) as BuildReport
  } catch {
    // No report: the run failed before it had one, and `stderr` says why.
  }
  return { dir, code: run.code, stderr: run.stderr, report }
}

/** The run went through and every page got critical CSS. */
function expectInlined(processed: Processed): void {
  expect(processed.code, processed.stderr).toBe(0)
  expect(processed.report?.pages.map((page) => [page.file, page.outcome, page.message]).filter(([, outcome]) => outcome !== 'inlined')).toEqual([])
  // Each first screen with only its critical CSS is the full one: icon fonts, SVG icons and footers included (issue 34).
  expect(processed.report?.pages.filter((page) => page.firstScreen.length > 0).map((page) => [page.file, page.firstScreen])).toEqual([])
}

/** Where the original works: every stylesheet applied, no request failed but the ones it is known to (else a comparison there would prove nothing). */
function expectWorks(view: PageView, known?: RegExp): void {
  expect(view.stylesheets.length, view.address).toBeGreaterThan(0)
  expect(view.stylesheets.filter((sheet) => !sheet.applied), view.address).toEqual([])
  expect(view.failed.filter((failure) => !known?.test(failure)), view.address).toEqual([])
}

/** The stylesheets the run put inline whole in `file` (its critical CSS was nearly all of them), as linked. */
function inlinedWhole(report: BuildReport | null, file: string): string[] {
  return report?.pages.find((page) => page.file === file)?.inlinedWhole ?? []
}

/**
 * The processed page as its user sees it, against the original opened the same way. `whole`:
 * the sheets the run inlined whole there, which the page holds instead of linking them.
 */
function expectSame(original: PageView, processed: PageView, whole: readonly string[]): void {
  const applied = (view: PageView): string[] => view.stylesheets.filter((sheet) => sheet.applied).map((sheet) => sheet.url)
  const linked = applied(original).filter((url) => !whole.some((href) => href.endsWith(url)))
  // The failed requests say why a sheet is missing (a loader or a url() the page cannot reach from here).
  expect(applied(processed), `${processed.address}, failed: ${processed.failed.join(', ') || 'none'}`).toEqual(expect.arrayContaining(linked))
  expect(processed.failed.filter((failure) => !original.failed.includes(failure)), processed.address).toEqual([])
  expect(processed.styles, processed.address).toEqual(original.styles)
  const diff = compareScreenshots(original.screenshot, processed.screenshot)
  expect(diff, `screenshot of ${processed.address}`).toEqual({ differentPixels: 0, sizes: [diff.sizes[0], diff.sizes[0]] })
}

interface SiteCase {
  title: string
  build(work: string): Promise<string>
  /** Flags after the folder. */
  flags: readonly string[]
  /** Pages opened. */
  pages: readonly string[]
  /** Where the original gets its stylesheets (asserted), and so where the processed copy must too. */
  works: readonly Where[]
  /** Computed styles compared, beside the screenshot: above the fold, and below it (the full stylesheet's alone). */
  styles: Record<string, readonly string[]>
  /** Requests the original itself fails, per place: the generator's own limits, not ours. */
  originalFails?: Partial<Record<Where, RegExp>>
}

const EVERYWHERE: readonly Where[] = ['/', '/project/', 'file']

/** A site built, a copy processed, and both opened at each place the original works. */
function describeSite(site: SiteCase): void {
  describe(site.title, () => {
    let original = ''
    let processed: Processed

    beforeAll(async () => {
      const work = await workspace()
      original = await site.build(work)
      processed = await processCopy(work, original, [...site.flags, '--cache-dir', join(work, 'cache')])
    }, SLOW)

    it('the command inlines every page', () => {
      expectInlined(processed)
    })

    it.each(site.works)('opened at %s, the processed pages get the full stylesheets and look the same', async (where) => {
      const viewer = await views()
      for (const page of site.pages) {
        const before = await viewer.view(original, page, where, { styles: site.styles })
        expectWorks(before, site.originalFails?.[where])
        const after = await viewer.view(processed.dir, page, where, { styles: site.styles })
        expectSame(before, after, inlinedWhole(processed.report, page))
      }
    }, SLOW)
  })
}

const HUGO_STYLES = { body: ['background-image', 'font-family'], '.masthead .mark': ['background-image'], footer: ['background-color', 'color'] }
const MKDOCS_STYLES = { 'body::before': ['background-image'], '.navbar': ['background-color'], footer: ['margin-top', 'text-align'], 'i.fa, .fa': ['font-family'] }
const TYPEDOC_STYLES = { body: ['background-color', 'font-family'], '.tsd-page-toolbar': ['background-color'], footer: ['border-top-width', 'background-color'] }

const hugo = installed('hugo')
describe.skipIf(!hugo.version)(`Hugo (${hugo.title})`, () => {
  describeSite({
    title: 'built for https://example.org/ (links /css/main.css)',
    build: (work) => buildHugoSite(work, { baseURL: 'https://example.org/' }),
    flags: [],
    pages: HUGO_PAGES,
    works: ['/'],
    styles: HUGO_STYLES,
  })
  describeSite({
    title: 'built for https://example.org/project/ (links /project/css/main.css), processed with --base /project/',
    build: (work) => buildHugoSite(work, { baseURL: 'https://example.org/project/' }),
    flags: ['--base', '/project/'],
    pages: HUGO_PAGES,
    works: ['/project/'],
    styles: HUGO_STYLES,
  })
  describeSite({
    title: 'with relativeURLs (links ../../css/main.css)',
    build: (work) => buildHugoSite(work, { baseURL: 'https://example.org/', relativeURLs: true }),
    flags: [],
    pages: HUGO_PAGES,
    works: EVERYWHERE,
    styles: HUGO_STYLES,
  })

  it('a site built for https://user.github.io/fieldnotes/, processed without --base under --strict: exit 1 naming `--base /fieldnotes/`, nothing written', async () => {
    const work = await workspace()
    const original = await buildHugoSite(work, { baseURL: 'https://user.github.io/fieldnotes/' })
    const run = await processCopy(work, original, ['--strict', '--no-cache'])
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toContain('--base /fieldnotes/')
    expect(await tree(run.dir, 'latin1')).toEqual(await tree(original, 'latin1'))
  }, SLOW)

  it('a run without --base never serves a later run with --base /project/: the pages equal a cold run with the base, and a third run is all cache hits', async () => {
    const work = await workspace()
    const original = await buildHugoSite(work, { baseURL: 'https://example.org/project/' })
    const shared = join(work, 'cache')
    await processCopy(work, original, ['--cache-dir', shared])
    const withBase = await processCopy(work, original, ['--base', '/project/', '--cache-dir', shared])
    const cold = await processCopy(work, original, ['--base', '/project/', '--cache-dir', join(work, 'cold-cache')])
    expectInlined(cold)
    expectInlined(withBase)
    expect(await tree(withBase.dir, 'latin1')).toEqual(await tree(cold.dir, 'latin1'))
    const again = await processCopy(work, original, ['--base', '/project/', '--cache-dir', shared])
    expect(again.report?.pages.map((page) => page.source)).toEqual(withBase.report?.pages.map(() => 'cache'))
    expect(await tree(again.dir, 'latin1')).toEqual(await tree(cold.dir, 'latin1'))
    // And the page the cache gave works where the site is served.
    const viewer = await views()
    const before = await viewer.view(original, HUGO_PAGES[1], '/project/', { styles: HUGO_STYLES })
    expectWorks(before)
    expectSame(before, await viewer.view(again.dir, HUGO_PAGES[1], '/project/', { styles: HUGO_STYLES }), inlinedWhole(again.report, HUGO_PAGES[1]))
  }, SLOW)

  it('an absURL theme (links https://example.org/css/main.css), processed with --site-url https://example.org/: inlined, and the same at https://example.org/', async () => {
    const work = await workspace()
    const original = await buildHugoSite(work, { baseURL: 'https://example.org/', link: 'absURL' })
    expect(await readFile(join(original, 'index.html'), 'utf8')).toContain('<link rel="stylesheet" href="https://example.org/css/main.css">')
    const processed = await processCopy(work, original, ['--site-url', 'https://example.org/', '--strict', '--no-cache'])
    expectInlined(processed)
    for (const page of processed.report?.pages ?? []) {
      expect(page.skippedHosts, page.file).toEqual([])
      expect(page.unreadStylesheets, page.file).toEqual([])
    }
    const css = CRITICAL.exec(await readFile(join(processed.dir, 'index.html'), 'utf8'))?.[1] ?? ''
    expect(css).toContain('.masthead')
    // The build server's address never reaches the output.
    expect(css).not.toMatch(/127\.0\.0\.1|localhost/)
    const viewer = await views()
    for (const page of HUGO_PAGES) {
      const before = await viewer.view(original, page, 'https://example.org/', { styles: HUGO_STYLES })
      expectWorks(before)
      expectSame(before, await viewer.view(processed.dir, page, 'https://example.org/', { styles: HUGO_STYLES }), inlinedWhole(processed.report, page))
    }
  }, SLOW)
})

const mkdocs = installed('mkdocs')
describe.skipIf(!mkdocs.version)(`MkDocs (${mkdocs.title})`, () => {
  describeSite({ title: 'default theme (links ../../css/base.css)', build: buildMkDocsSite, flags: [], pages: MKDOCS_PAGES, works: EVERYWHERE, styles: MKDOCS_STYLES })
  describeSite({ title: 'default theme, site_url https://example.org/project/, processed with --base /project/', build: (work) => buildMkDocsSite(work, 'https://example.org/project/'), flags: ['--base', '/project/'], pages: MKDOCS_PAGES, works: EVERYWHERE, styles: MKDOCS_STYLES })
})

// From disk Chromium refuses `<use href="../assets/icons.svg#…">` (another file is another origin); TypeDoc's icons.js draws them instead.
const TYPEDOC_FAILS = { file: /^assets\/icons\.svg: / }

const typedoc = installed('typedoc')
describe.skipIf(!typedoc.version)(`TypeDoc (${typedoc.title})`, () => {
  describeSite({ title: 'default theme (links ../assets/style.css)', build: buildTypeDocSite, flags: [], pages: TYPEDOC_PAGES, works: EVERYWHERE, styles: TYPEDOC_STYLES, originalFails: TYPEDOC_FAILS })
  describeSite({ title: 'default theme, processed with --base /project/', build: buildTypeDocSite, flags: ['--base', '/project/'], pages: TYPEDOC_PAGES, works: EVERYWHERE, styles: TYPEDOC_STYLES, originalFails: TYPEDOC_FAILS })
})
