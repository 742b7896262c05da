/**
 * First paint with slow stylesheets, for each preload strategy, beside beasties.
 *
 * Sites, each built once with no plugin into node_modules/.cache/critical-css-bench/fcp/:
 * the Vite playground (3 static pages), two create-vite 9.3.0 apps, bench/apps/react-ts
 * and bench/apps/vue-ts (one page each, rendered by its module script; `npm ci` there on
 * the first run, then the app's own `vite build` without its type check), and the quality
 * corpus (bench/quality/corpus.ts: 15 static template pages, fetched with `npm pack`;
 * startbootstrap-creative with its CDN stylesheets and scripts taken from the npm packages
 * they name and its Google Fonts from @fontsource, bench/quality/vendor.ts, as issue 35's
 * target measures it).
 *
 * Variants of every page: `no plugin` (as built), `no CSS` (its stylesheets removed: the
 * baseline of the script timing), our critical CSS with each strategy (`loader`, the
 * default, with the loader file at the site root; `body`; `media`; `swap`) and `beasties`
 * (its output with its own defaults, on the same built pages). Our critical CSS is
 * computed once per page by the plugin's folder mode (processDirectory, embedded mode,
 * `preload: 'none'`, no cache) and shared by every strategy; where it is nearly all of the
 * page's sheets, the strategies' pages have them inline whole, as the plugin's run does.
 *
 * Loads: one loopback server; every `.css` response held back D ms (D = 300 and 1500),
 * everything else at once; every non-loopback request refused. A fresh browser context per
 * load, viewport 1300×900. Measured from the page's performance timeline, in ms since
 * navigation start: first contentful paint, and when the page's first script began to run
 * (the server prepends `performance.mark()` to the page's first same-origin module script,
 * else its first same-origin classic script: such rows say `classic`). A load ends once
 * both are there (at most 2D + 5 s), not at the load event, which cannot come before the
 * delayed stylesheets. Median of BENCH_ROUNDS loads (default 3) per page, variant and
 * delay, the variants taking turns. With D = 1500 the last load of each variant also waits
 * for the load event and until every same-origin stylesheet the page as built links is in
 * `document.styleSheets` (enabled, not `print`; that time is printed), then for the fonts
 * and 300 ms, turns animations and transitions off and takes a screenshot of the first
 * viewport, compared with pixelmatch (threshold 0.1) to the `no plugin` screenshot;
 * `no plugin` is shot twice, for the noise floor.
 *
 * The plugin's embedded Chromium runs as users run it, with none of the bench's flags (see
 * variants.ts): a CDN host the corpus pages name that does not answer is cut by the plugin
 * (`thirdParty: 'cut'`, the default), as it would be on a user's machine.
 *
 * Targets, for `loader` with stylesheets delayed 1.5 s, on every page: first paint
 * ≤ 300 ms; the first script runs ≤ 50 ms after it does with no CSS; the full stylesheets
 * applied in the end and the final screenshot differing from `no plugin` in ≤ 0.5 % of its
 * pixels. The other variants are checked against the same figures, for reference.
 *
 * Lighthouse, after those loads, on the same overlay folders: the first page of each site
 * in every variant but `no CSS`, through Lighthouse's Node API (the installed version,
 * 12.8.2 when written; printed with the tables) in its default mode: simulated throttling,
 * mobile form factor, the default config, only the performance category. Each run launches
 * a fresh Chromium with chrome-launcher (the same binary and flags as the loads, offline
 * but for 127.0.0.1); the server answers stylesheets at once, as the simulator does its own
 * throttling. Median of BENCH_LIGHTHOUSE_RUNS runs (default 5; 0 skips Lighthouse) per page
 * and variant, the variants taking turns: FCP, LCP, Speed Index, the performance score,
 * the same-origin stylesheets its render-blocking audit listed in any run, and the priority
 * Chrome gave each stylesheet request (its network-requests audit). Target (issue 35), for
 * `loader` on startbootstrap-creative: median FCP ≥ 25 % below `no plugin`'s and none of the
 * site's stylesheets listed as render-blocking; every other site is compared the same way,
 * for reference. See bench/fcp/lighthouse.ts.
 *
 *   npm run bench:fcp
 *   BENCH_SITES=playground,react-ts,vue-ts npm run bench:fcp      (sites: playground, react-ts, vue-ts, the corpus names)
 *   BENCH_PAGES=2 BENCH_ROUNDS=1 npm run bench:fcp                (at most 2 pages a site, one load each: faster, noisier)
 *   BENCH_DELAYS=1500 npm run bench:fcp                            (stylesheet delays in ms; the last one is screenshot)
 *   BENCH_LIGHTHOUSE_RUNS=1 npm run bench:fcp                      (Lighthouse runs per page and variant; 0: none)
 *
 * Progress goes to stderr, the tables to stdout. Requires a system Chrome/Chromium.
 */
import { readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { stylesheetsOf } from './quality/html.ts'
import { installedVersion } from './quality/peers.ts'
import { diff, PIXELMATCH_THRESHOLD } from './quality/shots.ts'
import { createLoader, OFFLINE, VIEWPORT, type Loader, type LoadResult } from './fcp/browser.ts'
import { lighthouseTables, lighthouseTarget, measureLighthouse, type LighthouseResults } from './fcp/lighthouse.ts'
import { label, median, ms, table } from './fcp/report.ts'
import { startServer, type BenchServer } from './fcp/server.ts'
import { prepareSites } from './fcp/sites.ts'
import { criticalCssOf, overlayDir, STRATEGIES, VARIANTS, writeVariants, type PreparedPage, type Variant } from './fcp/variants.ts'

const FCP_TARGET_MS = 300
const SCRIPT_SLACK_MS = 50
const PIXEL_TARGET = 0.005
const TARGET_VARIANT: Variant = 'loader'
const COMPARED: Variant[] = ['loader', 'body', 'media', 'swap', 'beasties']

const started = performance.now()
const onlySites = process.env.BENCH_SITES?.split(',').map((s) => s.trim()).filter(Boolean)
const maxPages = process.env.BENCH_PAGES ? Number(process.env.BENCH_PAGES) : Infinity
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const DELAYS = (process.env.BENCH_DELAYS ?? '300,1500').split(',').map(Number)
const LIGHTHOUSE_RUNS = Number(process.env.BENCH_LIGHTHOUSE_RUNS ?? 5)
if (!(maxPages >= 1) || !Number.isInteger(ROUNDS) || DELAYS.some((d) => !Number.isInteger(d) || d < 0) || !Number.isInteger(LIGHTHOUSE_RUNS) || LIGHTHOUSE_RUNS < 0) {
  throw new Error('BENCH_PAGES: an integer ≥ 1; BENCH_ROUNDS: an integer ≥ 1; BENCH_DELAYS: ms ≥ 0, comma-separated; BENCH_LIGHTHOUSE_RUNS: an integer ≥ 0.')
}
/** The delay the screenshots and the targets are taken at. */
const SHOT_DELAY = DELAYS.at(-1)!
const troubles: string[] = []
/** This machine may be shared: its load average, beside the figures. */
const loadAtStart = loadavg()[0]!

function note(message: string): void {
  troubles.push(message)
  console.error(`  ! ${message}`)
}

const pct = (ratio: number | null | undefined): string => (ratio === null || ratio === undefined ? '—' : (ratio * 100).toFixed(2))
// ─── prepare ──────────────────────────────────────────────────────────────────────────

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)

console.error('Building the sites without the plugin …')
const sites = await prepareSites(onlySites, maxPages)
const pages: PreparedPage[] = []
/** Pages that link no stylesheet: the plugin leaves them as they are, so every variant is the page as built. */
const untouched: string[] = []
for (const site of sites) {
  console.error(`${site.name} (${site.about}): critical CSS for ${site.pages.length} page(s) …`)
  const critical = await criticalCssOf(site)
  for (const [page, css] of critical) {
    if (css !== null) continue
    const links = stylesheetsOf(readFileSync(join(site.dir, page), 'utf8'), 'http://127.0.0.1/').some((sheet) => sheet.kind === 'link')
    // A page with no stylesheet to defer is left alone by design; any other is a failure.
    if (links) note(`${site.name} ${page}: the plugin inlined no critical CSS, so its strategy variants are the page as built`)
    else untouched.push(`${site.name} ${page}`)
  }
  pages.push(...(await writeVariants(site, critical)))
}
const prepared = performance.now()

// ─── load ─────────────────────────────────────────────────────────────────────────────

interface Measured {
  /** `${variant} ${delay}` → every load. */
  loads: Map<string, LoadResult[]>
  shots: Map<Variant, Buffer>
  /** When the full stylesheets were applied, in the screenshot load (null: not within the wait). */
  applied: Map<Variant, number | null>
  noiseShot: Buffer | null
}

/** The stylesheets a variant's page links in the end: a strategy's page holds those the plugin inlined whole in `<style>`s instead. */
function linkedSheets(page: PreparedPage, variant: Variant): string[] {
  if (!(STRATEGIES as readonly string[]).includes(variant)) return page.sheets
  const whole = new Set(page.inlinedWhole.map((href) => new URL(href, new URL(page.page, 'http://127.0.0.1/')).pathname))
  return page.sheets.filter((path) => !whole.has(path))
}

const measured = new Map<PreparedPage, Measured>()
let lighthouseResults: LighthouseResults | null = null
let chromiumVersion = ''
let lighthouseMs = 0
let server: BenchServer | undefined
let loader: Loader | undefined
try {
  server = await startServer()
  loader = await createLoader(executablePath, [...chromiumFlags(), OFFLINE])
  chromiumVersion = loader.version
  const load = async (page: PreparedPage, variant: Variant, delayMs: number, shoot: boolean): Promise<LoadResult> => {
    server!.target = {
      overlay: overlayDir(page.site, variant),
      root: page.site.dir,
      firstScripts: new Map(page.firstScript ? [[page.page, page.firstScript.path]] : []),
      delayMs,
    }
    try {
      return await loader!.load(server!.origin + page.page, { expectScript: page.firstScript !== null, timeoutMs: 2 * delayMs + 5000, shoot, sheets: linkedSheets(page, variant) })
    } catch (error) {
      note(`${label(page)} ${variant} ${delayMs} ms: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`)
      return { fcp: null, script: null }
    }
  }
  // A throw-away load: the browser's first context is slower than the rest.
  if (pages[0]) await load(pages[0], 'no plugin', 0, false)

  for (const [index, page] of pages.entries()) {
    console.error(`[${index + 1}/${pages.length}] ${label(page)}`)
    const result: Measured = { loads: new Map(), shots: new Map(), applied: new Map(), noiseShot: null }
    measured.set(page, result)
    for (const delay of DELAYS) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const variant of VARIANTS) {
          const last = round === ROUNDS - 1
          const noiseRound = variant === 'no plugin' && round === 0 && ROUNDS > 1
          const loaded = await load(page, variant, delay, delay === SHOT_DELAY && (last || noiseRound))
          if (loaded.shot && last) {
            result.shots.set(variant, loaded.shot)
            result.applied.set(variant, loaded.applied ?? null)
          } else if (loaded.shot) {
            result.noiseShot = loaded.shot
          }
          const key = `${variant} ${delay}`
          result.loads.set(key, [...(result.loads.get(key) ?? []), loaded])
        }
      }
    }
    // One round only: the noise floor needs a second screenshot of its own.
    if (ROUNDS === 1 && DELAYS.length) result.noiseShot = (await load(page, 'no plugin', SHOT_DELAY, true)).shot ?? null
  }
  // Closed first: Lighthouse's browsers get the machine to themselves.
  await loader.close()
  loader = undefined
  const lighthouseStarted = performance.now()
  if (LIGHTHOUSE_RUNS > 0) lighthouseResults = await measureLighthouse(pages, { runs: LIGHTHOUSE_RUNS, chromePath: executablePath, server, note })
  lighthouseMs = performance.now() - lighthouseStarted
} finally {
  await loader?.close()
  await server?.close()
}

// ─── figures ──────────────────────────────────────────────────────────────────────────

interface Figures {
  fcp: number | null
  script: number | null
}

function figures(page: PreparedPage, variant: Variant, delay: number): Figures {
  const loads = measured.get(page)?.loads.get(`${variant} ${delay}`) ?? []
  const of = (pick: (load: LoadResult) => number | null): number | null => {
    const values = loads.map(pick).filter((value): value is number => value !== null)
    // A figure missing from some loads is not a median of the others.
    return values.length === loads.length ? median(values) : null
  }
  return { fcp: of((load) => load.fcp), script: page.firstScript ? of((load) => load.script) : null }
}

/** Share of differing pixels against `no plugin`; null when a screenshot is missing. */
function pixels(page: PreparedPage, variant: Variant): number | null {
  const shots = measured.get(page)?.shots
  const reference = shots?.get('no plugin')
  const other = variant === 'no plugin' ? measured.get(page)?.noiseShot : shots?.get(variant)
  if (!reference || !other) return null
  try {
    return diff(reference, other).ratio
  } catch (error) {
    note(`${label(page)} ${variant}: ${error instanceof Error ? error.message : String(error)}`)
    return null
  }
}

const pixelTable = new Map(pages.map((page) => [page, new Map(VARIANTS.map((variant) => [variant, pixels(page, variant)]))]))

// ─── report ───────────────────────────────────────────────────────────────────────────

console.log(
  `\nFirst paint with slow stylesheets: viewport ${VIEWPORT.width}×${VIEWPORT.height}, a fresh browser context per load, median of ${ROUNDS} load(s); ` +
    `Chromium ${chromiumVersion} (${executablePath}), playwright-core ${installedVersion('playwright-core')}, beasties ${installedVersion('beasties')}, node ${process.version}`,
)
console.log(`Load average (1 min) of this ${cpus().length}-core machine: ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`)
console.log(`Sites: ${sites.map((site) => `${site.name} (${site.about}, ${site.kind === 'script' ? 'rendered by script' : 'static'})`).join('; ')}`)

const scriptKind = (page: PreparedPage): string => page.firstScript?.kind ?? 'none'
for (const delay of DELAYS) {
  console.log(`\nStylesheets delayed ${delay} ms: first contentful paint / first script runs (ms since navigation start)\n`)
  console.log(
    table(
      ['page', 'script', ...VARIANTS],
      pages.map((page) => [
        label(page),
        scriptKind(page),
        ...VARIANTS.map((variant) => {
          const { fcp, script } = figures(page, variant, delay)
          return page.firstScript ? `${ms(fcp)} / ${ms(script)}` : ms(fcp)
        }),
      ]),
    ),
  )
}

const applied = (page: PreparedPage, variant: Variant): number | null | undefined => measured.get(page)?.applied.get(variant)
const notApplied = (page: PreparedPage, variant: Variant): boolean => variant !== 'no CSS' && linkedSheets(page, variant).length > 0 && applied(page, variant) === null

console.log(
  `\nFinal screenshot (stylesheets delayed ${SHOT_DELAY} ms; after the load event and the page's stylesheets applied): % of pixels differing from \`no plugin\` ` +
    `(pixelmatch ${PIXELMATCH_THRESHOLD}; "not applied": a stylesheet of the page was still missing after the wait); critical CSS bytes\n`,
)
console.log(
  table(
    ['page', 'noise (no plugin again)', ...VARIANTS.slice(1), 'ours B', 'beasties B'],
    pages.map((page) => [
      label(page),
      ...VARIANTS.map((variant) => `${pct(pixelTable.get(page)!.get(variant))}${notApplied(page, variant) ? ' not applied' : ''}`),
      ms(page.criticalBytes),
      ms(page.beastiesBytes),
    ]),
  ),
)

const withSheets = pages.filter((page) => page.sheets.length > 0)
console.log(`\nFull stylesheets applied (ms since navigation start, stylesheets delayed ${SHOT_DELAY} ms, the screenshot load; polled every 20 ms)\n`)
console.log(
  table(
    ['page', ...VARIANTS.filter((variant) => variant !== 'no CSS')],
    withSheets.map((page) => [label(page), ...VARIANTS.filter((variant) => variant !== 'no CSS').map((variant) => (notApplied(page, variant) ? 'not applied' : ms(applied(page, variant))))]),
  ),
)

/** How much later the first script runs than with no CSS, same page and delay. */
function scriptLate(page: PreparedPage, variant: Variant, delay: number): number | null {
  const own = figures(page, variant, delay).script
  const bare = figures(page, 'no CSS', delay).script
  return own === null || bare === null ? null : own - bare
}

const summary = (values: (number | null)[], format: (value: number | null) => string): string => {
  const known = values.filter((value): value is number => value !== null)
  const missing = values.length - known.length
  return known.length ? `${format(median(known))} / ${format(Math.max(...known))}${missing ? ` (${missing} missing)` : ''}` : '—'
}
const scripted = pages.filter((page) => page.firstScript)

console.log(`\nOver all ${pages.length} pages: median / worst\n`)
console.log(
  table(
    ['variant', ...DELAYS.flatMap((delay) => [`FCP ms, ${delay} ms`, `script − no CSS ms, ${delay} ms`]), 'screenshot % differing'],
    VARIANTS.map((variant) => [
      variant,
      ...DELAYS.flatMap((delay) => [
        summary(pages.map((page) => figures(page, variant, delay).fcp), ms),
        summary(scripted.map((page) => scriptLate(page, variant, delay)), ms),
      ]),
      summary(pages.map((page) => pixelTable.get(page)!.get(variant) ?? null), pct),
    ]),
  ),
)

if (lighthouseResults) {
  console.log(
    `\nLighthouse ${installedVersion('lighthouse')}, its default mode (simulated throttling, mobile, default config; performance only): first page of each site, ` +
      `median of ${LIGHTHOUSE_RUNS} run(s) per variant, a fresh Chromium per run, stylesheets not delayed (simulated ms)\n`,
  )
  console.log(lighthouseTables(lighthouseResults))
}

interface Case {
  ok: boolean
  score: number
  text: string
}

function check(target: string, cases: Case[]): { line: string; pass: boolean } {
  const passed = cases.filter((c) => c.ok).length
  const worst = [...cases].sort((a, b) => b.score - a.score)[0]
  const pass = passed === cases.length && cases.length > 0
  return { pass, line: `${pass ? 'PASS' : 'FAIL'} ${target}: ${passed}/${cases.length} pages; worst ${worst?.text ?? '—'}` }
}

const missing = (page: PreparedPage): Case => ({ ok: false, score: Infinity, text: `${label(page)}: no figure` })
console.log(`\nTargets (stylesheets delayed ${SHOT_DELAY} ms); ${TARGET_VARIANT} is the one they are for, the others for reference\n`)
const verdicts: boolean[] = []
for (const variant of COMPARED) {
  const lines = [
    check(
      `${variant}: first paint ≤ ${FCP_TARGET_MS} ms`,
      pages.map((page) => {
        const { fcp } = figures(page, variant, SHOT_DELAY)
        return fcp === null ? missing(page) : { ok: fcp <= FCP_TARGET_MS, score: fcp, text: `${label(page)}: ${ms(fcp)} ms` }
      }),
    ),
    check(
      `${variant}: first script ≤ no CSS + ${SCRIPT_SLACK_MS} ms`,
      scripted.map((page) => {
        const late = scriptLate(page, variant, SHOT_DELAY)
        const text = `${label(page)} (${scriptKind(page)}): ${ms(figures(page, variant, SHOT_DELAY).script)} ms vs ${ms(figures(page, 'no CSS', SHOT_DELAY).script)} ms`
        return late === null ? missing(page) : { ok: late <= SCRIPT_SLACK_MS, score: late, text }
      }),
    ),
    check(
      `${variant}: full CSS applied, final screenshot ≤ ${PIXEL_TARGET * 100} % pixels differ from no plugin`,
      pages.map((page) => {
        const ratio = pixelTable.get(page)!.get(variant) ?? null
        const noise = pixelTable.get(page)!.get('no plugin') ?? null
        if (ratio === null) return missing(page)
        if (notApplied(page, variant)) return { ok: false, score: Infinity, text: `${label(page)}: a stylesheet was not applied (${pct(ratio)} %)` }
        return { ok: ratio <= PIXEL_TARGET, score: ratio, text: `${label(page)}: ${pct(ratio)} % (noise ${pct(noise)} %)` }
      }),
    ),
  ]
  for (const { line, pass } of lines) {
    console.log(line)
    if (variant === TARGET_VARIANT) verdicts.push(pass)
  }
}
// Issue 35: nothing sent twice when it buys nothing. A page whose sheets the plugin inlines whole
// asks for none of them; any other sends its critical CSS inline and again in the sheets it defers.
const cssRequests = (page: PreparedPage): number => page.sheets.length - page.inlinedWhole.length
const sentTwice = (page: PreparedPage): number => (page.criticalBytes !== null && cssRequests(page) > 0 ? page.criticalBytes : 0)
console.log(`\nWhat the page sends with our CSS (every strategy but none): same-origin stylesheet requests, and critical CSS bytes also sent in a deferred sheet\n`)
console.log(
  table(
    ['page', 'sheets as built', 'sheet bytes', 'critical bytes', 'inlined whole', 'CSS requests', 'bytes sent twice'],
    pages.map((page) => [label(page), String(page.sheets.length), String(page.sheetBytes), ms(page.criticalBytes), page.inlinedWhole.join(', ') || '—', String(cssRequests(page)), String(sentTwice(page))]),
  ),
)
const apps = pages.filter((page) => page.site.name === 'react-ts')
if (apps.length) {
  const pass = apps.every((page) => cssRequests(page) <= 1 && sentTwice(page) === 0)
  console.log(`${pass ? 'PASS' : 'FAIL'} create-vite react-ts: at most one CSS request and no CSS byte sent twice: ${apps.map((page) => `${cssRequests(page)} request(s), ${sentTwice(page)} B twice`).join('; ')}`)
  verdicts.push(pass)
}
if (lighthouseResults) {
  const { pass, lines } = lighthouseTarget(lighthouseResults)
  console.log(lines.join('\n'))
  if (pass !== null) verdicts.push(pass)
}

const blocking = pages.flatMap((page) => Object.entries(page.stillBlocking).map(([variant, hrefs]) => `${label(page)} ${variant}: ${hrefs.join(', ')}`))
if (blocking.length) console.log(`\nHead stylesheets a strategy left blocking render:\n${blocking.map((line) => `  ${line}`).join('\n')}`)
if (untouched.length) console.log(`\nLinking no stylesheet, left as built by the plugin (every strategy's variant is the page itself): ${untouched.join(', ')}`)
if (server!.misses.size) console.log(`\nNot found on the server (${server!.misses.size}): ${[...server!.misses].slice(0, 10).join('; ')}${server!.misses.size > 10 ? ' …' : ''}`)
if (troubles.length) console.log(`\n${troubles.length} problem(s):\n${troubles.map((t) => `  ${t}`).join('\n')}`)
console.log(
  `\n${TARGET_VARIANT}: ${verdicts.every(Boolean) ? 'every target met' : 'a target missed'}. ` +
    `Run took ${((performance.now() - started) / 1000).toFixed(0)} s (${((prepared - started) / 1000).toFixed(0)} s building the sites and their critical CSS${lighthouseResults ? `, ${(lighthouseMs / 1000).toFixed(0)} s in Lighthouse` : ''}; ${server!.cssRequests} stylesheet requests).`,
)
