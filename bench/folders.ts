/**
 * Folders that work wherever they worked before (issue 32), in figures: first paint and the
 * full stylesheets of real generator sites, original beside processed, wherever they are opened.
 *
 * Sites, built once each by the real generators (test/fixtures/real-sites.ts, two pages each):
 * MkDocs (default theme, relative links), TypeDoc (relative links), Hugo with `relativeURLs`,
 * and Hugo built for `https://example.org/project/` (root links `/project/css/main.css`),
 * processed with its base inferred from those links. Variants: `original` (as built, the
 * peer), `processed` (a copy through processDirectory, embedded mode, no cache, defaults: as
 * users run the folder command, no extra Chromium flags) and `beasties` (its defaults on the
 * same pages, one instance per site, `publicPath` the site's base, as in bench:fcp).
 *
 * Places: served at `/` and below `/project/` by bench:fcp's loopback server (every `.css`
 * response held back D ms, everything else at once; a site below `/project/` is a symlink in
 * an otherwise empty root, so `/css/…` there is a 404 as on a project page), and opened from
 * disk (`file://`: nothing can hold a stylesheet back there, so no delay). Before issue 32 the
 * processed pages loaded their loader from `/critical-css-loader.X.js` and their inlined
 * url()s from the root, so below `/project/` and from `file://` the full stylesheets never
 * applied; the `applied` columns are what shows that.
 *
 * Per load (a fresh browser context, 1300×900, every host but 127.0.0.1 unresolvable):
 * first contentful paint, and how many of the stylesheets the original page links (same
 * URLs, resolved where the page is opened) are applied once the load event has come (or up
 * to 1 s later): their link's load event came (Chromium keeps an empty sheet for a link that
 * failed) and they are in `document.styleSheets`, enabled, not `print`; `n/n, t ms` says
 * when the last of them was: its load event, or a later change of its link's media or rel. FCP is the median of BENCH_ROUNDS loads (default 3),
 * variants taking turns; `applied` gives the fewest sheets of those loads and, when every
 * load got all, the median time. bench:fcp's loader only says whether every sheet is in
 * `document.styleSheets` (a failed one too) and takes a screenshot; this bench needs how many
 * really applied, so it loads the pages itself, with bench:fcp's server, viewport and resolver rule.
 *
 *   npm run bench:folders
 *   BENCH_ROUNDS=1 BENCH_DELAY=300 npm run bench:folders
 *   BENCH_SITES=mkdocs,typedoc npm run bench:folders      (sites: mkdocs, typedoc, hugo-relative, hugo-project)
 *
 * Progress goes to stderr, the tables to stdout. Requires hugo, mkdocs (scripts/site-generators.ts)
 * and a system Chrome/Chromium; a site whose generator is missing is left out, with a note.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import BeastiesExport from 'beasties'
import { chromium, type Browser } from 'playwright-core'
import { generatorVersion, type Generator } from '../scripts/site-generators.ts'
import { processDirectory } from '../src/core/directory.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { HUGO_PAGES, MKDOCS_PAGES, TYPEDOC_PAGES, buildHugoSite, buildMkDocsSite, buildTypeDocSite } from '../test/fixtures/real-sites.ts'
import { OFFLINE, VIEWPORT } from './fcp/browser.ts'
import { startServer, type BenchServer } from './fcp/server.ts'
import { stylesheetsOf } from './quality/html.ts'
import { installedVersion } from './quality/peers.ts'

const started = performance.now()
/** This machine may be shared: its load average, beside the figures. */
const loadAtStart = loadavg()[0]!
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DELAY = Number(process.env.BENCH_DELAY ?? 1500)
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(DELAY) || DELAY < 0) throw new Error('BENCH_ROUNDS: an integer ≥ 1; BENCH_DELAY: ms ≥ 0.')
const TIMEOUT_MS = 2 * DELAY + 5000
/** After the load event, how long a missing stylesheet is still waited for. */
const GRACE_MS = 1000

interface Site {
  /** For BENCH_SITES. */
  id: string
  name: string
  generator: Generator
  build(work: string): Promise<string>
  pages: readonly string[]
  /** The path the site is built for: beasties' `publicPath`. */
  base: string
}

const SITES: Site[] = [
  { id: 'mkdocs', name: 'MkDocs', generator: 'mkdocs', build: (work) => buildMkDocsSite(work), pages: MKDOCS_PAGES, base: '/' },
  { id: 'typedoc', name: 'TypeDoc', generator: 'typedoc', build: buildTypeDocSite, pages: TYPEDOC_PAGES, base: '/' },
  { id: 'hugo-relative', name: 'Hugo relativeURLs', generator: 'hugo', build: (work) => buildHugoSite(work, { baseURL: 'https://example.org/', relativeURLs: true }), pages: HUGO_PAGES, base: '/' },
  { id: 'hugo-project', name: 'Hugo /project/', generator: 'hugo', build: (work) => buildHugoSite(work, { baseURL: 'https://example.org/project/' }), pages: HUGO_PAGES, base: '/project/' },
]
const VARIANTS = ['original', 'processed', 'beasties'] as const
type Variant = (typeof VARIANTS)[number]
const PLACES = ['/', '/project/', 'file://'] as const
type Place = (typeof PLACES)[number]

const notes: string[] = []
const note = (message: string): void => {
  notes.push(message)
  console.error(`  ! ${message}`)
}
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
/** A markdown table, columns padded (as bench:fcp prints them). */
function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: string[]): string => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}

// beasties' types describe a CommonJS default export; under ESM the import is the class itself.
const Beasties = ((BeastiesExport as unknown as { default?: unknown }).default ?? BeastiesExport) as unknown as typeof import('beasties').default

// ─── prepare ──────────────────────────────────────────────────────────────────────────

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
const work = mkdtempSync(join(tmpdir(), 'bench-folders-'))
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

interface Prepared {
  site: Site
  dirs: Record<Variant, string>
  /** Pages to which beasties added no `<style>`. */
  beastiesEmpty: string[]
  inlined: string
  version: string
}

/** Builds the site, processes a copy, runs beasties over another. */
async function prepare(site: Site): Promise<Prepared> {
  const original = await site.build(work)
  const processed = join(work, `${site.name.replace(/\W+/g, '-')}-processed`)
  const beasties = join(work, `${site.name.replace(/\W+/g, '-')}-beasties`)
  cpSync(original, processed, { recursive: true })
  cpSync(original, beasties, { recursive: true })
  // env {}: a service configured in this shell would turn the run into remote mode.
  const logger = { info: () => {}, warn: (message: string) => note(`${site.name}, plugin: ${message}`) }
  const { report } = await processDirectory(processed, { cache: false }, { logger, env: {} })
  const done = report.pages.filter((page) => page.outcome === 'inlined').length
  const runner = new Beasties({ path: beasties, publicPath: site.base, logLevel: 'silent' })
  const beastiesEmpty: string[] = []
  for (const page of site.pages) {
    const html = await runner.process(readFileSync(join(original, page), 'utf8'))
    if (!/<style[\s>]/i.test(html)) beastiesEmpty.push(page)
    writeFileSync(join(beasties, page), html)
  }
  const inlined = `${done}/${report.pages.length} pages inlined in ${(report.ms / 1000).toFixed(1)} s`
  return { site, dirs: { original, processed, beasties }, beastiesEmpty, inlined, version: generatorVersion(site.generator) ?? '?' }
}

console.error('Building the sites and processing copies …')
const prepared: Prepared[] = []
const only = process.env.BENCH_SITES?.split(',').map((id) => id.trim())
const unknown = only?.filter((id) => !SITES.some((site) => site.id === id)) ?? []
if (unknown.length) throw new Error(`BENCH_SITES: unknown ${unknown.join(', ')}; the sites are ${SITES.map((site) => site.id).join(', ')}`)
for (const site of SITES.filter((entry) => !only || only.includes(entry.id))) {
  if (generatorVersion(site.generator) === null) {
    note(`${site.name}: ${site.generator} is not installed (tsx scripts/site-generators.ts), left out`)
    continue
  }
  prepared.push(await prepare(site))
  console.error(`  ${site.name}: ${prepared.at(-1)!.inlined}`)
}
const preparedAt = performance.now()

// ─── load ─────────────────────────────────────────────────────────────────────────────

/** `dir/` for `dir/index.html`, as a static host serves it (bench:fcp's server maps a folder to its index.html). */
const pagePath = (page: string): string => (page === 'index.html' ? '' : page.replace(/(^|\/)index\.html$/, '$1'))

/** Where the folder is served for `place`: itself at `/`; below `/project/`, a root holding only a link to it. */
function servedRoot(dir: string, place: Place): string {
  if (place !== '/project/') return dir
  const root = `${dir}-root`
  mkdirSync(root, { recursive: true })
  rmSync(join(root, 'project'), { force: true })
  symlinkSync(dir, join(root, 'project'), 'dir')
  return root
}

interface Load {
  fcp: number | null
  /** Sheets applied at the end. */
  applied: number
  /** When all were (ms since navigation start), null when not all. */
  at: number | null
}

/** In the page: for the sheets asked for, how many are applied, and when the last of them loaded. */
interface SheetState {
  count: number
  last: number
}
type BenchWindow = { benchSheets(paths: string[]): SheetState }

async function load(browser: Browser, url: string, sheets: string[]): Promise<Load> {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 })
  try {
    // Chromium keeps an empty sheet in document.styleSheets for a link whose load failed (a 404,
    // a missing file): a sheet counts once its link's load event came. Its time is that event's,
    // or the last change of its link's media or rel after it (a script applying a loaded sheet).
    await context.addInitScript(() => {
      const loaded = new Map<string, number>()
      const changed = new Map<string, number>()
      // On the document: a load event's path stops there, short of the window.
      document.addEventListener('load', (event) => event.target instanceof HTMLLinkElement && loaded.set(event.target.href, performance.now()), true)
      new MutationObserver((records) => {
        for (const { target } of records) if (target instanceof HTMLLinkElement) changed.set(target.href, performance.now())
      }).observe(document, { subtree: true, attributeFilter: ['media', 'rel', 'disabled'] })
      ;(window as unknown as BenchWindow).benchSheets = (paths) => {
        const applied = paths.filter((path) => loaded.has(path) && Array.from(document.styleSheets).some((sheet) => sheet.href === path && !sheet.disabled && sheet.media.mediaText !== 'print'))
        return { count: applied.length, last: Math.max(0, ...applied.map((path) => Math.max(loaded.get(path)!, changed.get(path) ?? 0))) }
      }
    })
    const page = await context.newPage()
    await page.goto(url, { waitUntil: 'commit', timeout: TIMEOUT_MS })
    // Polled on animation frames, as bench:fcp does: none run while render is blocked, so the polling costs the page nothing then.
    const fcp = await page
      .waitForFunction(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0, undefined, { polling: 'raf', timeout: TIMEOUT_MS })
      .then((handle) => handle.jsonValue() as Promise<number>)
      .catch(() => null)
    await page.waitForLoadState('load', { timeout: TIMEOUT_MS }).catch(() => {})
    await page
      .waitForFunction((paths) => (window as unknown as BenchWindow).benchSheets(paths).count === paths.length, sheets, { polling: 'raf', timeout: GRACE_MS })
      .catch(() => {})
    const state = await page.evaluate((paths) => (window as unknown as BenchWindow).benchSheets(paths), sheets)
    return { fcp, applied: state.count, at: state.count === sheets.length ? state.last : null }
  } finally {
    await context.close()
  }
}

/** `${site} ${page} ${place} ${variant}` → its loads. */
const results = new Map<string, Load[]>()
/** `${site} ${page}` → the stylesheets the original links. */
const linked = new Map<string, number>()
let server: BenchServer | undefined
let browser: Browser | undefined
try {
  server = await startServer()
  browser = await chromium.launch({ executablePath, headless: true, args: [...chromiumFlags(), OFFLINE] })
  let first = true
  for (const { site, dirs } of prepared) {
    for (const place of PLACES) {
      const roots = Object.fromEntries(VARIANTS.map((variant) => [variant, servedRoot(dirs[variant], place)])) as Record<Variant, string>
      for (const page of site.pages) {
        console.error(`${site.name} ${page} at ${place}`)
        const url = (variant: Variant): string => (place === 'file://' ? pathToFileURL(join(dirs[variant], page)).href : `${server!.origin}${place}${pagePath(page)}`)
        // What the original links, resolved where it is opened; the other variants are held to the same URLs.
        const sheets = stylesheetsOf(readFileSync(join(dirs.original, page), 'utf8'), url('original')).flatMap((sheet) => (sheet.kind === 'link' ? [sheet.href] : []))
        linked.set(`${site.name} ${page}`, sheets.length)
        for (let round = first ? -1 : 0; round < ROUNDS; round++) {
          for (const variant of VARIANTS) {
            server.target = { overlay: roots[variant], root: roots[variant], firstScripts: new Map(), delayMs: place === 'file://' ? 0 : DELAY }
            // The same sheets for every variant: from disk, in the variant's own folder.
            const own = place === 'file://' ? sheets.map((sheet) => sheet.replace(pathToFileURL(dirs.original).href, pathToFileURL(dirs[variant]).href)) : sheets
            const loaded = await load(browser, url(variant), own).catch((error: unknown) => {
              note(`${site.name} ${page} ${place} ${variant}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`)
              return { fcp: null, applied: 0, at: null }
            })
            // Round -1: a throw-away load, the browser's first context being slower than the rest.
            if (round >= 0) results.set(`${site.name} ${page} ${place} ${variant}`, [...(results.get(`${site.name} ${page} ${place} ${variant}`) ?? []), loaded])
          }
        }
        first = false
      }
    }
  }
} finally {
  await browser?.close()
  await server?.close()
}

// ─── report ───────────────────────────────────────────────────────────────────────────

const loadsOf = (key: string): Load[] => results.get(key) ?? []
function fcpCell(key: string): string {
  const loads = loadsOf(key)
  const values = loads.flatMap((loaded) => (loaded.fcp === null ? [] : [loaded.fcp]))
  if (values.length === 0) return '—'
  return `${median(values).toFixed(0)}${values.length < loads.length ? ` (${loads.length - values.length} none)` : ''}`
}
function appliedCell(key: string, of: number): string {
  const loads = loadsOf(key)
  if (loads.length === 0) return '—'
  const fewest = Math.min(...loads.map((loaded) => loaded.applied))
  const times = loads.flatMap((loaded) => (loaded.at === null ? [] : [loaded.at]))
  return times.length === loads.length ? `${of}/${of}, ${median(times).toFixed(0)} ms` : `${fewest}/${of}`
}

console.log(
  `\nFolders wherever they worked before: Chromium ${browser!.version()} (${executablePath}), viewport ${VIEWPORT.width}×${VIEWPORT.height}, a fresh context per load, ` +
    `median of ${ROUNDS} load(s); stylesheets held back ${DELAY} ms at / and /project/, none from file:// (no server there to delay them); ` +
    `playwright-core ${installedVersion('playwright-core')}, beasties ${installedVersion('beasties')}, node ${process.version}; ` +
    `load average (1 min) of this ${cpus().length}-core machine ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`,
)
console.log(`Sites: ${prepared.map(({ site, version, inlined }) => `${site.name} (${version}; ${inlined})`).join('; ')}`)

for (const place of PLACES) {
  const delay = place === 'file://' ? 'no delay possible' : `stylesheets held back ${DELAY} ms`
  console.log(`\nOpened at ${place} (${delay}): FCP ms since navigation start; applied = the original's linked stylesheets applied in the end, and when the last was\n`)
  const rows = prepared.flatMap(({ site }) =>
    site.pages.map((page) => {
      const key = (variant: Variant): string => `${site.name} ${page} ${place} ${variant}`
      const of = linked.get(`${site.name} ${page}`) ?? 0
      return [`${site.name} ${page}`, ...VARIANTS.map((variant) => fcpCell(key(variant))), ...VARIANTS.map((variant) => appliedCell(key(variant), of))]
    }),
  )
  console.log(table(['site / page', ...VARIANTS.map((variant) => `${variant} FCP`), ...VARIANTS.map((variant) => `applied (${variant})`)], rows))
}

/** Wherever the original got all its stylesheets in every load, did the variant too? */
const cases = prepared.flatMap(({ site }) => PLACES.flatMap((place) => site.pages.map((page) => ({ label: `${site.name} ${page} at ${place}`, key: `${site.name} ${page} ${place}` }))))
const full = (key: string): boolean => loadsOf(key).length > 0 && loadsOf(key).every((loaded) => loaded.at !== null)
const works = cases.filter(({ key }) => full(`${key} original`))
console.log('')
for (const variant of VARIANTS.slice(1)) {
  const lost = works.filter(({ key }) => !full(`${key} ${variant}`)).map(({ label }) => label)
  console.log(`${variant}: all stylesheets applied wherever the original got them: ${works.length - lost.length}/${works.length} page × place${lost.length ? `; not on ${lost.join(', ')}` : ''}`)
}

const empty = prepared.flatMap(({ site, beastiesEmpty }) => beastiesEmpty.map((page) => `${site.name} ${page}`))
if (empty.length) console.log(`\nbeasties inlined nothing (its stylesheet not found from the link) on: ${empty.join(', ')}`)
if (server!.misses.size) console.log(`\nNot found on the server (${server!.misses.size}): ${[...server!.misses].slice(0, 12).join('; ')}${server!.misses.size > 12 ? ' …' : ''}`)
if (notes.length) console.log(`\n${notes.length} note(s):\n${notes.map((line) => `  ${line}`).join('\n')}`)
console.log(
  `\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s (${((preparedAt - started) / 1000).toFixed(0)} s building the sites and processing them; ${server!.cssRequests} stylesheet requests served).`,
)
