/**
 * Critical CSS quality on real template sites, beside beasties and penthouse in one run.
 * Corpus: startbootstrap-creative, -sb-admin, -simple-sidebar and html5-boilerplate, all
 * their pages, fetched with `npm pack` at bench time into node_modules/.cache, and `shapes`
 * (bench/quality/shapes/: five small pages, each a way issue 34 found for a first screen to
 * need CSS of content below it); served on 127.0.0.1; every non-loopback request is refused
 * in the screenshots, as on an offline machine. For each page and viewport (1300×900, and
 * 412×915 rendered as a phone: mobile viewport, touch): two screenshots of the first
 * viewport of the page with its full CSS (their difference is the page's own noise floor),
 * then one of the page with its stylesheets removed and only a tool's critical CSS inlined,
 * and one with no CSS at all (the scale). Reported: the share of differing pixels
 * (pixelmatch, threshold 0.1, animations and transitions off), the document's width
 * (scrollWidth) where a tool's differs from the full page's, the CSS bytes, and the time per
 * page and viewport (median of 3 calls; warm browsers for both engines, after one throw-away
 * call each; ours: a job with both viewports, divided by two, beside a job for one viewport
 * alone). Per page, the page as the build writes it (the default strategy, the links of
 * sheets the render could not read kept blocking) is checked to keep every stylesheet this
 * machine cannot fetch blocking.
 *
 * Ours inlines the union CSS of one run for both viewports; beasties is viewport-less (one
 * result per page); penthouse runs once per viewport, on the system Chromium, with the
 * page's CSS rebased as `critical` hands it over, two ways: its default life cycle (its
 * `getBrowser` launches the browser for the call, penthouse closes it after) and kept warm
 * (its `unstableKeepBrowserAlive`: one page navigated from call to call, no isolation).
 * Ours runs every job as one tenant (a token), as the service does: its warm page, cleared
 * between jobs. Both penthouse columns are printed; the speed target is judged against
 * penthouse at its fastest, kept warm.
 * Targets on every page and viewport: differing pixels ≤ noise + 0.1 %; the document as wide
 * as with the full CSS; union bytes below beasties' and ≤ 1.15 × penthouse's larger
 * single-viewport result; speed ≥ 2× penthouse kept warm on the median, and never slower
 * than it on any page and viewport; on every page that links a stylesheet this machine
 * cannot fetch, that link still blocks in the output.
 *
 *   npm run bench:quality
 *   BENCH_SITES=shapes npm run bench:quality     (sites: the corpus names, shapes)
 *   BENCH_SITES=startbootstrap-creative,html5-boilerplate BENCH_PAGES=3 npm run bench:quality
 *   BENCH_ENGINE=none npm run bench:quality      (the peers only)
 *   BENCH_FIRST_SCREEN=off npm run bench:quality (ours without its first-screen check)
 *   BENCH_ROUNDS=1 npm run bench:quality         (one timed call each: faster, noisier)
 *
 * Worst cases per tool go to node_modules/.cache/critical-css-bench/shots/.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_VIEWPORTS, type Viewport } from '../src/contract/api-contract.ts'
import type { Engine } from '../src/engine/engine.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { createChromiumEngine } from '../src/engine/chromium.ts'
import { DEFAULT_PRELOAD } from '../src/html/strategies.ts'
import { CACHE_DIR, QUALITY_SITES, type Site } from './quality/corpus.ts'
import { criticalOnly, rebaseUrls, stylesheetsOf } from './quality/html.ts'
import { forEachPage } from './quality/pages.ts'
import { createPenthouse, installedVersion, type PenthouseRunner, type Timed } from './quality/peers.ts'
import { builtPage, finalPage, type Generated } from './quality/final.ts'
import { createShooter, diff, isPhone, PIXELMATCH_THRESHOLD, type Shooter, type Shot } from './quality/shots.ts'
import { createTroubles } from './troubles.ts'
import { OFFLINE } from './fcp/browser.ts'

/**
 * The tools measured (ours, penthouse) meet the machine's network as their users do: no
 * resolver rules. Only the screenshots' browser, the bench's instrument, gets OFFLINE (no host
 * but loopback resolves): the shots compare CSS, not whatever a CDN sends.
 */
const TOOL_ARGS = chromiumFlags()
const VIEWPORTS: readonly Viewport[] = DEFAULT_VIEWPORTS
const PIXEL_SLACK = 0.001
const PENTHOUSE_BYTES_FACTOR = 1.15
const SPEEDUP = 2
const SETTLE_MS = 250
/** How long the bench waits for a stylesheet before it counts it as one this machine cannot fetch. */
const SHEET_FETCH_MS = 5000
const SHOTS_DIR = join(CACHE_DIR, 'shots')

const TOOLS = ['ours', 'beasties', 'penthouse'] as const
type Tool = (typeof TOOLS)[number]

interface Row {
  site: string
  page: string
  viewport: Viewport
  noise: number
  /** The page with no CSS at all: the scale the tools' figures sit on. */
  bare: number
  /** Share of differing pixels against the full-CSS page; null when the tool failed. */
  pixels: Record<Tool, number | null>
  /** Ours: the union for both viewports; beasties: the page's one result; penthouse: this viewport's. */
  bytes: Record<Tool, number | null>
  /**
   * Median of BENCH_ROUNDS calls. Ours: the two-viewport job's time divided by two;
   * penthouse: one call for this viewport (its default life cycle); beasties: for the page.
   */
  ms: Record<Tool, number | null>
  /** Penthouse kept warm (unstableKeepBrowserAlive), one call for this viewport. */
  penthouseWarm: number | null
  /** Ours, a job for this viewport alone. */
  oursAlone: number | null
  /** The document's scrollWidth with the full CSS, and with each tool's critical CSS only (null when the tool failed). */
  widths: { full: number } & Record<Tool, number | null>
  /**
   * The final page (issue 49): the whole page as the build writes it (ours inlined, the rest
   * loaded as the default strategy loads it), settled, against the page as built; null when
   * ours failed. `sizes` differ when one is taller or wider.
   */
  final: { ratio: number; sizes: [string, string] } | null
}

/** Per page: what the build's output does with the stylesheets this machine cannot fetch. */
interface BlockingRow {
  site: string
  page: string
  /** Stylesheet URLs the page links that the bench could not fetch. */
  unfetchable: string[]
  /** Those of them the output loads without blocking render (should be none); null when ours failed. */
  deferred: string[] | null
}

interface WorstShot {
  over: number
  label: string
  original: Buffer
  critical: Buffer
  diff: Buffer
}

const started = performance.now()
const onlySites = process.env.BENCH_SITES?.split(',').map((s) => s.trim()).filter(Boolean)
const maxPages = process.env.BENCH_PAGES ? Number(process.env.BENCH_PAGES) : Infinity
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const { list: troubles, attempt } = createTroubles()

/** One tenant for every job of the run, as one token's jobs are in the service. */
const TENANT = 'bench'

/** Ours as users run it: no browser flags; other hosts are cut once they hold a page (the default). */
function createEngine(): Engine | null {
  if (process.env.BENCH_ENGINE === 'none') return null
  // BENCH_FIRST_SCREEN=off: the engine without its first-screen check, to price the check in the same conditions.
  return createChromiumEngine({ checkFirstScreen: process.env.BENCH_FIRST_SCREEN !== 'off' })
}

async function generate(engine: Engine, url: string, viewports: Viewport[]): Promise<Generated> {
  const began = performance.now()
  const { css, network } = await engine.generate({ url, viewports, signal: AbortSignal.timeout(60_000), tenant: TENANT })
  return { css, network: network ?? null, ms: performance.now() - began }
}

/**
 * Median time of ROUNDS calls (this machine is shared: single calls vary), with the first
 * call's CSS. A pause first, so that what a tool does in the background after its last
 * call (a browser opening spare pages) does not land in the next tool's time.
 */
async function timed<T extends Timed>(run: () => Promise<T>): Promise<T> {
  await new Promise((done) => setTimeout(done, SETTLE_MS))
  const results: T[] = []
  for (let round = 0; round < ROUNDS; round++) results.push(await run())
  return { ...results[0]!, ms: median(results.map((result) => result.ms))! }
}

async function fetchSheet(href: string): Promise<string | null> {
  try {
    const response = await fetch(href, { signal: AbortSignal.timeout(SHEET_FETCH_MS) })
    return response.ok ? await response.text() : null
  } catch {
    return null
  }
}

/**
 * The page's stylesheets as the bench needs them. `cssString`, penthouse's input: every
 * stylesheet of the page's own origin in document order, url()s rebased (as `critical` hands
 * them over; other origins are unreachable offline). `unfetchable`: the linked sheets this
 * machine gets no answer or an error for, as any renderer on it would: the ground truth of
 * which links the output must keep blocking, independent of what the engine reports.
 */
async function readSheets(html: string, pageUrl: string): Promise<{ cssString: string; unfetchable: string[] }> {
  const parts: string[] = []
  const unfetchable: string[] = []
  for (const sheet of stylesheetsOf(html, pageUrl)) {
    if (sheet.kind === 'style') {
      parts.push(rebaseUrls(sheet.css, pageUrl))
      continue
    }
    const text = await fetchSheet(sheet.href)
    if (text === null) unfetchable.push(sheet.href)
    else if (new URL(sheet.href).origin === new URL(pageUrl).origin) parts.push(rebaseUrls(text, sheet.href))
  }
  return { cssString: parts.join('\n'), unfetchable }
}

/** The `href`s (absolute) the page as the build writes it loads without blocking render. */
function deferredByBuild(html: string, pageUrl: string, ours: Generated): string[] {
  return builtPage(html, pageUrl, ours).deferred
}

const vp = ({ width, height }: Viewport): string => `${width}×${height}`
const device = (viewport: Viewport): string => `${vp(viewport)}${isPhone(viewport) ? ' (phone)' : ''}`
const pct = (ratio: number | null): string => (ratio === null ? 'error' : (ratio * 100).toFixed(2))
const num = (value: number | null, digits = 0): string => (value === null ? '—' : value.toFixed(digits))
const median = (values: number[]): number | null => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : null
}

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)

const siteNames = QUALITY_SITES.filter((name) => !onlySites || onlySites.includes(name))
if (siteNames.length === 0) throw new Error(`BENCH_SITES matches none of ${QUALITY_SITES.join(', ')}`)

let shooter: Shooter | undefined
let penthouse: PenthouseRunner | undefined
let engine: Engine | null = null
const rows: Row[] = []
const blockingRows: BlockingRow[] = []
const sites: Site[] = []
const worst = new Map<Tool, WorstShot>()

try {
  shooter = await createShooter(executablePath, [...TOOL_ARGS, OFFLINE])
  penthouse = await createPenthouse(executablePath, TOOL_ARGS)
  engine = createEngine()
  let warm = false

  sites.push(
    ...(await forEachPage(siteNames, maxPages, async ({ site, page, url, html, label, beasties }) => {
      console.error(`  ${page}`)
      const { cssString, unfetchable } = await readSheets(html, url)

      if (!warm) {
        // Throw-away runs: both engines are measured on a warm browser.
        if (engine) await attempt(`${label}: ours (warm-up)`, () => generate(engine!, url, [VIEWPORTS[0]!]))
        await attempt(`${label}: penthouse (warm-up)`, () => penthouse!.runWarm(url, cssString, VIEWPORTS[0]!))
        await beasties.run(html)
        warm = true
      }

      const beastiesResult = await attempt(`${label}: beasties`, () => timed(() => beasties.run(html)))
      // One job renders both viewports side by side, as the service runs it: its time per viewport is the engine's cost per page and viewport.
      const union = engine ? await attempt(`${label}: ours`, () => timed(() => generate(engine!, url, [...VIEWPORTS]))) : null
      if (engine && unfetchable.length) {
        const deferred = union ? new Set(deferredByBuild(html, url, union)) : null
        blockingRows.push({ site: site.name, page, unfetchable, deferred: deferred && unfetchable.filter((href) => deferred.has(href)) })
      }
      const perViewport = []
      for (const viewport of VIEWPORTS) {
        const ours = engine ? await attempt(`${label} ${vp(viewport)}: ours`, () => timed(() => generate(engine!, url, [viewport]))) : null
        const penthouseResult = await attempt(`${label} ${vp(viewport)}: penthouse`, () => timed(() => penthouse!.run(url, cssString, viewport)))
        const penthouseWarm = await attempt(`${label} ${vp(viewport)}: penthouse kept warm`, () => timed(() => penthouse!.runWarm(url, cssString, viewport)))
        perViewport.push({ viewport, ours, penthouseResult, penthouseWarm })
      }

      for (const { viewport, ours, penthouseResult, penthouseWarm } of perViewport) {
        const where = `${label} ${vp(viewport)}`
        const shoot = (what: string, variant: string): Promise<Shot | null> => attempt(`${where}: screenshot ${what}`, () => shooter!.shoot(url, variant, viewport))
        const original = await shoot('with full CSS', html)
        const again = original && (await shoot('with full CSS, again', html))
        const bare = original && (await shoot('with no CSS', criticalOnly(html, '')))
        if (!original || !again || !bare) continue
        const noise = diff(original.png, again.png).ratio
        const css: Record<Tool, string | null> = { ours: union?.css ?? null, beasties: beastiesResult?.css ?? null, penthouse: penthouseResult?.css ?? null }
        const pixels: Record<Tool, number | null> = { ours: null, beasties: null, penthouse: null }
        const widths: Row['widths'] = { full: original.scrollWidth, ours: null, beasties: null, penthouse: null }
        for (const tool of TOOLS) {
          const toolCss = css[tool]
          if (toolCss === null) continue
          const critical = await shoot(`with ${tool}'s CSS`, criticalOnly(html, toolCss))
          if (!critical) continue
          widths[tool] = critical.scrollWidth
          const result = diff(original.png, critical.png)
          pixels[tool] = result.ratio
          const over = result.ratio - noise
          if (!worst.has(tool) || over > worst.get(tool)!.over) {
            worst.set(tool, { over, label: `${site.name}${page.replace(/\//g, '_')}-${viewport.width}x${viewport.height}`, original: original.png, critical: critical.png, diff: result.png })
          }
        }
        const final = union ? await attempt(`${where}: final page`, () => finalPage(shooter!, url, html, union, viewport)) : null
        rows.push({
          final,
          site: site.name,
          page,
          viewport,
          noise,
          bare: diff(original.png, bare.png).ratio,
          pixels,
          widths,
          bytes: {
            ours: union ? Buffer.byteLength(union.css) : null,
            beasties: beastiesResult ? Buffer.byteLength(beastiesResult.css) : null,
            penthouse: penthouseResult ? Buffer.byteLength(penthouseResult.css) : null,
          },
          ms: { ours: union ? union.ms / VIEWPORTS.length : null, beasties: beastiesResult?.ms ?? null, penthouse: penthouseResult?.ms ?? null },
          oursAlone: ours?.ms ?? null,
          penthouseWarm: penthouseWarm?.ms ?? null,
        })
      }
    })),
  )
} finally {
  await engine?.close?.()
  await penthouse?.close()
  await shooter?.close()
}

// ─── report ───────────────────────────────────────────────────────────────────────────

console.log(
  `\nCritical CSS quality: first viewport, pixelmatch threshold ${PIXELMATCH_THRESHOLD}, animations and transitions off; ` +
    `Chromium ${shooter!.version} (${executablePath}), beasties ${installedVersion('beasties')}, penthouse ${penthouse!.version} (puppeteer ${penthouse!.puppeteerVersion}), ` +
    `playwright-core ${installedVersion('playwright-core')}, node ${process.version}${engine ? '' : '; ours not run (BENCH_ENGINE=none)'}`,
)

for (const site of sites) {
  const siteRows = rows.filter((row) => row.site === site.name)
  if (siteRows.length === 0) continue
  console.log(`\n${site.name}@${site.version}: differing pixels %, CSS bytes, ms per page and viewport`)
  console.table(
    siteRows.map((row) => ({
      page: row.page,
      viewport: device(row.viewport),
      'noise %': pct(row.noise),
      'no CSS %': pct(row.bare),
      'ours %': engine ? pct(row.pixels.ours) : '—',
      'beasties %': pct(row.pixels.beasties),
      'penthouse %': pct(row.pixels.penthouse),
      'ours B (union)': num(row.bytes.ours),
      'beasties B': num(row.bytes.beasties),
      'penthouse B': num(row.bytes.penthouse),
      'final page ours %': engine ? (row.final ? `${pct(row.final.ratio)}${row.final.sizes[0] === row.final.sizes[1] ? '' : ` (${row.final.sizes.join(' vs ')})`}` : 'error') : '—',
      'ours ms': num(row.ms.ours),
      'ours ms (alone)': num(row.oursAlone),
      'penthouse ms': num(row.ms.penthouse),
      'penthouse warm ms': num(row.penthouseWarm),
      'beasties ms/page': num(row.ms.beasties),
    })),
  )
}

const px = (width: number | null): string => (width === null ? '—' : `${width}`)
const widened = rows.filter((row) => row.widths.ours !== null && row.widths.ours !== row.widths.full)
if (engine && widened.length) {
  console.log('\nDocument width (scrollWidth, CSS px) where ours differs from the full page; the peers for reference')
  console.table(
    widened.map((row) => ({
      site: row.site,
      page: row.page,
      viewport: device(row.viewport),
      full: px(row.widths.full),
      ours: px(row.widths.ours),
      beasties: px(row.widths.beasties),
      penthouse: px(row.widths.penthouse),
    })),
  )
} else if (engine) {
  console.log(`\nDocument width (scrollWidth): ours as the full page's on every page and viewport (${rows.filter((row) => row.widths.ours !== null).length}/${rows.length} measured)`)
}

if (blockingRows.length) {
  console.log(`\nStylesheets this machine cannot fetch, in the page as the build writes it (preload: '${DEFAULT_PRELOAD}')`)
  console.table(
    blockingRows.map((row) => ({
      site: row.site,
      page: row.page,
      'cannot be fetched': row.unfetchable.join(' '),
      'loaded without blocking': row.deferred === null ? 'ours failed' : row.deferred.join(' ') || 'none',
    })),
  )
}

console.log('\nAll pages and viewports: medians')
console.table(
  TOOLS.filter((tool) => engine || tool !== 'ours').map((tool) => {
    const over = rows.flatMap((row) => (row.pixels[tool] === null ? [] : [row.pixels[tool]! - row.noise]))
    return {
      tool,
      'pixels over noise %': over.length ? pct(median(over)) : '—',
      'pages ≤ noise + 0.1 %': `${over.filter((value) => value <= PIXEL_SLACK).length}/${rows.length}`,
      'CSS bytes': num(median(rows.flatMap((row) => (row.bytes[tool] === null ? [] : [row.bytes[tool]!])))),
      ms: num(median(rows.flatMap((row) => (row.ms[tool] === null ? [] : [row.ms[tool]!])))),
    }
  }),
)

interface Check {
  target: string
  passed: number
  total: number
  worst: string
}

function check(target: string, cases: { ok: boolean; score: number; text: string }[], higherIsWorse = true): Check {
  const sorted = [...cases].sort((a, b) => (higherIsWorse ? b.score - a.score : a.score - b.score))
  return { target, passed: cases.filter((c) => c.ok).length, total: cases.length, worst: sorted[0]?.text ?? '—' }
}

const where = (row: Row): string => `${row.site} ${row.page} ${device(row.viewport)}`
const pixelCheck = (tool: Tool): Check =>
  check(
    `${tool}: differing pixels ≤ noise + 0.1 %`,
    rows.map((row) => {
      const value = row.pixels[tool]
      if (value === null) return { ok: false, score: Infinity, text: `${where(row)}: failed` }
      return { ok: value - row.noise <= PIXEL_SLACK, score: value - row.noise, text: `${where(row)}: ${pct(value)} % (noise ${pct(row.noise)} %)` }
    }),
  )

/** Rows of one page: the union bytes are per page, the penthouse bound uses both viewports. */
const pages = [...new Set(rows.map((row) => `${row.site} ${row.page}`))].map((key) => rows.filter((row) => `${row.site} ${row.page}` === key))
const checks: Check[] = []
if (engine) {
  checks.push(
    pixelCheck('ours'),
    check(
      'ours: the final page (as the build writes it, settled) is the page as built, pixel for pixel',
      rows.map((row) => {
        if (row.final === null) return { ok: false, score: Infinity, text: `${where(row)}: failed` }
        return { ok: row.final.ratio === 0, score: row.final.ratio, text: `${where(row)}: ${pct(row.final.ratio)} %${row.final.sizes[0] === row.final.sizes[1] ? '' : ` (${row.final.sizes.join(' vs ')})`}` }
      }),
    ),
    // The pixel slack does not see a document that grew sideways: on a phone it moves what spans the layout viewport (a fixed navbar's toggler) off the first screen.
    check(
      'ours: document width (scrollWidth) as with the full CSS',
      rows.map((row) => {
        const { full, ours } = row.widths
        if (ours === null) return { ok: false, score: Infinity, text: `${where(row)}: failed` }
        return { ok: ours === full, score: Math.abs(ours - full), text: `${where(row)}: ${ours} px vs ${full} px` }
      }),
    ),
    check(
      'ours: union bytes < beasties',
      pages.map((pageRows) => {
        const [first] = pageRows
        const ours = first!.bytes.ours
        const theirs = first!.bytes.beasties
        if (ours === null || theirs === null) return { ok: false, score: Infinity, text: `${first!.site} ${first!.page}: failed` }
        return { ok: ours < theirs, score: ours / theirs, text: `${first!.site} ${first!.page}: ${ours} B vs ${theirs} B (${(ours / theirs).toFixed(2)}×)` }
      }),
    ),
    check(
      `ours: union bytes ≤ ${PENTHOUSE_BYTES_FACTOR} × penthouse's larger viewport`,
      pages.map((pageRows) => {
        const [first] = pageRows
        const ours = first!.bytes.ours
        const theirs = pageRows.map((row) => row.bytes.penthouse)
        if (ours === null || theirs.some((b) => b === null)) return { ok: false, score: Infinity, text: `${first!.site} ${first!.page}: failed` }
        const bound = Math.max(...(theirs as number[]))
        return { ok: ours <= PENTHOUSE_BYTES_FACTOR * bound, score: ours / bound, text: `${first!.site} ${first!.page}: ${ours} B vs ${bound} B (${(ours / bound).toFixed(2)}×)` }
      }),
    ),
    ...(blockingRows.length
      ? [
          check(
            'ours: a stylesheet that cannot be fetched still blocks render in the output',
            blockingRows.map((row) => {
              const text = `${row.site} ${row.page}: ${row.deferred === null ? 'ours failed' : row.deferred.length ? `${row.deferred.join(', ')} loads without blocking` : `${row.unfetchable.length} kept blocking`}`
              return { ok: row.deferred?.length === 0, score: row.deferred === null ? Infinity : row.deferred.length, text }
            }),
          ),
        ]
      : []),
    check(
      `ours: never slower than penthouse kept warm, per page and viewport`,
      rows.map((row) => {
        const { ours } = row.ms
        const theirs = row.penthouseWarm
        if (ours === null || theirs === null) return { ok: false, score: 0, text: `${where(row)}: failed` }
        return { ok: theirs / ours >= 1, score: theirs / ours, text: `${where(row)}: ${ours.toFixed(0)} ms vs ${theirs.toFixed(0)} ms (${(theirs / ours).toFixed(1)}×)` }
      }),
      false,
    ),
  )
}
/** Ours against penthouse at its fastest, and against its default life cycle. */
const warmRatios = rows.flatMap((row) => (row.ms.ours === null || row.penthouseWarm === null ? [] : [row.penthouseWarm / row.ms.ours]))
const defaultRatios = rows.flatMap((row) => (row.ms.ours === null || row.ms.penthouse === null ? [] : [row.ms.penthouse / row.ms.ours]))
if (engine) {
  const middle = median(warmRatios)
  checks.push({
    target: `ours: ≥ ${SPEEDUP}× penthouse kept warm, median over pages and viewports`,
    passed: middle !== null && middle >= SPEEDUP ? 1 : 0,
    total: 1,
    worst: middle === null ? 'failed' : `median ${middle.toFixed(2)}× (default life cycle: median ${median(defaultRatios)?.toFixed(2) ?? '—'}×)`,
  })
}
checks.push(pixelCheck('beasties'), pixelCheck('penthouse'))

console.log(`\nTargets${engine ? '' : ' (ours not run)'}; the peers’ pixel figures for reference`)
console.table(
  checks.map((c) => ({
    target: c.target,
    result: `${c.passed === c.total && c.total > 0 ? '✓' : '✗'} ${c.passed}/${c.total}`,
    'worst case': c.worst,
  })),
)

rmSync(SHOTS_DIR, { recursive: true, force: true })
mkdirSync(SHOTS_DIR, { recursive: true })
for (const [tool, shot] of worst) {
  writeFileSync(join(SHOTS_DIR, `${tool}--${shot.label}--original.png`), shot.original)
  writeFileSync(join(SHOTS_DIR, `${tool}--${shot.label}--critical.png`), shot.critical)
  writeFileSync(join(SHOTS_DIR, `${tool}--${shot.label}--diff.png`), shot.diff)
}
if (warmRatios.length) {
  console.log(
    `\nBeside penthouse kept warm (unstableKeepBrowserAlive: one page reused from call to call, page JS off), ours runs at ` +
      `${Math.min(...warmRatios).toFixed(1)}–${Math.max(...warmRatios).toFixed(1)}× its speed (median ${median(warmRatios)!.toFixed(1)}×); ` +
      `beside its default life cycle, ${Math.min(...defaultRatios).toFixed(1)}–${Math.max(...defaultRatios).toFixed(1)}× (median ${median(defaultRatios)!.toFixed(1)}×).`,
  )
}
console.log(`Worst case per tool (full CSS, critical only, diff): ${SHOTS_DIR}`)
if (troubles.length) console.log(`\n${troubles.length} problem(s):\n${troubles.map((t) => `  ${t}`).join('\n')}`)
console.log(`\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s.`)
