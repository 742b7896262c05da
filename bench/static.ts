/**
 * The static engine (issue 59), beside beasties in the same run, on the two corpora the
 * Chromium engine is measured on:
 *
 * 1. bench:quality's template sites and shapes, served on 127.0.0.1: per page, the static
 *    engine's CSS (both viewports, a job as the service runs it) and beasties' (its defaults);
 *    bytes side by side; the first screen with every stylesheet held back and only the static
 *    CSS inlined against the page loaded with its full CSS (pixelmatch, the full page's own
 *    noise measured twice); the final page as the build writes it against the page as built;
 *    the same bytes from a second engine.
 * 2. bench:scale's 1,000-page MkDocs site through the folder command as users run it (the
 *    package.json bin, `--engine static`, cold): wall, peak memory of its process tree from
 *    /proc, every page inlined, the same bytes from a second cold run on a fresh copy; beasties
 *    on a sample of the pages (links made root-relative, as bench:scale does, so it finds the
 *    sheets), bytes per page beside ours; the Chromium engine on a sample through the same
 *    command, for the speed ratio; the first screen held back on a few pages.
 *
 * Targets (issue 59): every page with static HTML inlined; critical bytes median ≤ beasties',
 * no page above 1.1× beasties'; final page = plain; first screen held back = plain loaded
 * within noise + 0.1 %; same bytes run to run; 1,000 pages ≤ 20 s cold on 2 cores and ≥ 20× the
 * Chromium path; peak RSS ≤ 500 MB.
 *
 *   npm run bench:static
 *   BENCH_PARTS=quality npm run bench:static      (quality, scale)
 *   BENCH_PAGES=200 npm run bench:static          (the MkDocs site's size)
 */
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'parse5'
import { DEFAULT_VIEWPORTS, type Viewport } from '../src/contract/api-contract.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { createStaticEngine, type StaticEngine } from '../src/engine/static/static.ts'
// The screenshots' browser, the instrument, resolves no host but loopback (as bench:quality's): the shots compare CSS, not what a CDN sends. The folder command measured runs with no flags.
import { OFFLINE } from './fcp/browser.ts'
import { CACHE_DIR, QUALITY_SITES, serveStatic } from './quality/corpus.ts'
import { forEachPage } from './quality/pages.ts'
import { finalPage, type FinalDiff, type Generated } from './quality/final.ts'
import { criticalOnly } from './quality/html.ts'
import { createBeasties, installedVersion } from './quality/peers.ts'
import { createShooter, diff, type Shooter } from './quality/shots.ts'
import { resolveCli, runFolderCommand, type CommandRun } from './scale/command.ts'
import { rootRelativeLinks, sampleOf } from './scale/peers.ts'
import { buildMkdocsSite, htmlFilesOf } from './scale/site.ts'
import { createTroubles } from './troubles.ts'

const VIEWPORTS: readonly Viewport[] = DEFAULT_VIEWPORTS
const PIXEL_SLACK = 0.001
const BYTES_FACTOR = 1.1
const SCALE_WALL_MS = 20_000
const SCALE_RSS_BYTES = 500 * 1024 * 1024
const CHROMIUM_RATIO = 20
/** Pages of the MkDocs site beasties runs on (it takes about 0.7 s a page there) and the Chromium engine runs on. */
const BEASTIES_SAMPLE = 100
const CHROMIUM_SAMPLE = 40
const SCREEN_SAMPLE = 8
const TENANT = 'bench'
const REPO = fileURLToPath(new URL('../', import.meta.url))
const OUT = join(REPO, 'bench', '.out')

const parts = new Set((process.env.BENCH_PARTS ?? 'quality,scale').split(',').map((part) => part.trim()))
const sitePages = Number(process.env.BENCH_PAGES ?? 1000)
const started = performance.now()
const { list: troubles, attempt } = createTroubles()

const pct = (ratio: number | null): string => (ratio === null ? '—' : (ratio * 100).toFixed(2))
const median = (values: number[]): number | null => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : null
}
const vp = ({ width, height }: Viewport): string => `${width}×${height}`

interface Check {
  target: string
  met: boolean
  result: string
}
const checks: Check[] = []

async function generate(engine: StaticEngine, url: string): Promise<Generated> {
  const began = performance.now()
  const { css, network } = await engine.generate({ url, viewports: [...VIEWPORTS], signal: AbortSignal.timeout(60_000), tenant: TENANT })
  return { css, network: network ?? null, ms: performance.now() - began }
}

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)

// ─── 1. the quality corpus ───────────────────────────────────────────────────────────

interface QualityRow {
  site: string
  page: string
  ours: number | null
  beasties: number | null
  same: boolean | null
  /** Per viewport: noise, held back with ours (null: failed), final page. */
  screens: { viewport: Viewport; noise: number; held: number | null; final: FinalDiff | null }[]
  ms: number | null
  refused: string | null
}

async function qualityPart(shooter: Shooter): Promise<void> {
  const rows: QualityRow[] = []
  const engine = createStaticEngine()
  const second = createStaticEngine()
  try {
    await forEachPage(QUALITY_SITES, Infinity, async ({ site, page, url, html, label, beasties }) => {
      let refused: string | null = null
      const ours = await generate(engine, url).catch((error: unknown) => {
        refused = error instanceof Error ? error.message : String(error)
        return null
      })
      const again = ours ? await attempt(`${label}: ours again`, () => generate(second, url)) : null
      const theirs = await attempt(`${label}: beasties`, () => beasties.run(html))
      const screens: QualityRow['screens'] = []
      for (const viewport of VIEWPORTS) {
        const where = `${label} ${vp(viewport)}`
        const full = await attempt(`${where}: full CSS`, () => shooter.shoot(url, html, viewport))
        const full2 = full && (await attempt(`${where}: full CSS again`, () => shooter.shoot(url, html, viewport)))
        if (!full || !full2) continue
        const held = ours ? await attempt(`${where}: held back`, () => shooter.shoot(url, criticalOnly(html, ours.css), viewport)) : null
        const final = ours ? await attempt(`${where}: final page`, () => finalPage(shooter, url, html, ours, viewport)) : null
        screens.push({ viewport, noise: diff(full.png, full2.png).ratio, held: held ? diff(full.png, held.png).ratio : null, final })
      }
      rows.push({
        site: site.name,
        page,
        ours: ours ? Buffer.byteLength(ours.css) : null,
        beasties: theirs ? Buffer.byteLength(theirs.css) : null,
        same: ours && again ? ours.css === again.css : null,
        screens,
        ms: ours?.ms ?? null,
        refused,
      })
    })
  } finally {
    await engine.close()
    await second.close()
  }

  console.log(`\nThe static engine on the quality corpus: bytes, first screen held back and final page against the full page (% of pixels), beside beasties ${installedVersion('beasties')}`)
  console.table(
    rows.map((row) => ({
      site: row.site,
      page: row.page,
      'static B': row.ours ?? (row.refused ? 'refused' : 'failed'),
      'beasties B': row.beasties ?? '—',
      '× beasties': row.ours !== null && row.beasties ? (row.ours / row.beasties).toFixed(2) : '—',
      ...Object.fromEntries(row.screens.flatMap((screen) => [[`held ${vp(screen.viewport)} %`, `${pct(screen.held)} (noise ${pct(screen.noise)})`], [`final ${vp(screen.viewport)} %`, screen.final ? `${pct(screen.final.ratio)}${screen.final.sizes[0] === screen.final.sizes[1] ? '' : ` (${screen.final.sizes.join(' vs ')})`}` : '—']])),
      'same bytes': row.same === null ? '—' : row.same ? 'yes' : 'NO',
      ms: row.ms?.toFixed(0) ?? '—',
    })),
  )
  const compared = rows.filter((row) => row.ours !== null && row.beasties !== null && row.beasties > 0)
  const ratios = compared.map((row) => row.ours! / row.beasties!)
  const worst = compared.reduce<QualityRow | null>((top, row) => (top === null || row.ours! / row.beasties! > top.ours! / top.beasties! ? row : top), null)
  checks.push(
    { target: 'quality: every page inlined (none a script builds in this corpus)', met: rows.every((row) => row.ours !== null), result: `${rows.filter((row) => row.ours !== null).length}/${rows.length}${rows.some((row) => row.refused) ? `; refused: ${rows.filter((row) => row.refused).map((row) => `${row.site} ${row.page}`).join(', ')}` : ''}` },
    { target: 'quality: static bytes median ≤ beasties', met: (median(compared.map((row) => row.ours!)) ?? Infinity) <= (median(compared.map((row) => row.beasties!)) ?? 0), result: `median ${median(compared.map((row) => row.ours!))} B vs ${median(compared.map((row) => row.beasties!))} B (ratio median ${median(ratios)?.toFixed(2)}×)` },
    { target: `quality: no page above ${BYTES_FACTOR}× beasties`, met: ratios.every((ratio) => ratio <= BYTES_FACTOR), result: worst ? `worst ${worst.site} ${worst.page}: ${worst.ours} vs ${worst.beasties} B (${(worst.ours! / worst.beasties!).toFixed(2)}×)` : '—' },
    { target: 'quality: first screen held back = full page within noise + 0.1 %', ...countScreens(rows, (screen) => screen.held !== null && screen.held - screen.noise <= PIXEL_SLACK, (screen) => pct(screen.held)) },
    { target: 'quality: final page = page as built (0 px)', ...countScreens(rows, (screen) => screen.final !== null && screen.final.ratio === 0, (screen) => (screen.final ? pct(screen.final.ratio) : 'failed')) },
    { target: 'quality: same bytes from a second engine', met: rows.every((row) => row.same !== false), result: `${rows.filter((row) => row.same).length}/${rows.filter((row) => row.same !== null).length}` },
  )
}

function countScreens(rows: QualityRow[], ok: (screen: QualityRow['screens'][number]) => boolean, shown: (screen: QualityRow['screens'][number]) => string): { met: boolean; result: string } {
  const all = rows.flatMap((row) => row.screens.map((screen) => ({ row, screen })))
  const bad = all.filter(({ screen }) => !ok(screen))
  return { met: bad.length === 0, result: `${all.length - bad.length}/${all.length}${bad.length ? `; ${bad.slice(0, 4).map(({ row, screen }) => `${row.site} ${row.page} ${vp(screen.viewport)}: ${shown(screen)} %`).join(', ')}` : ''}` }
}

// ─── 2. the 1,000-page MkDocs site ───────────────────────────────────────────────────

/** What the folder command inlined into each page: the critical style's text, by file. */
function criticalOf(siteDir: string, files: readonly string[]): Map<string, string | null> {
  const critical = /<style data-critical-css[^>]*>([\s\S]*?)<\/style>/
  return new Map(files.map((file) => [file, critical.exec(readFileSync(join(siteDir, file), 'utf8'))?.[1] ?? null]))
}

function freshCopy(from: string, to: string): string {
  rmSync(to, { recursive: true, force: true })
  cpSync(from, to, { recursive: true })
  return to
}

/** What one engine thread cannot go below: parse5 building each page's tree, in this process, one page after another. */
function parseFloor(siteDir: string, files: readonly string[]): { wallMs: number; cpuMs: number } {
  const started = performance.now()
  const cpu = process.cpuUsage()
  for (const file of files) parse(readFileSync(join(siteDir, file), 'utf8'))
  const used = process.cpuUsage(cpu)
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 }
}

async function scalePart(shooter: Shooter): Promise<void> {
  const built = await buildMkdocsSite(join(OUT, `scale-${sitePages}`), sitePages)
  const files = htmlFilesOf(built.siteDir)
  const cli = resolveCli()
  const work = join(OUT, 'static')
  mkdirSync(work, { recursive: true })
  const run = async (name: string, args: string[]): Promise<{ run: CommandRun; dir: string }> => {
    const dir = freshCopy(built.siteDir, join(work, name))
    console.error(`folder command ${args.join(' ')} on ${files.length} pages (${name}) …`)
    const result = await runFolderCommand(cli, dir, args, { cwd: work, reportFile: join(work, `${name}.json`), timeoutMs: 600_000 })
    return { run: result, dir }
  }
  const first = await run('cold-1', ['--engine', 'static', '--no-cache'])
  const second = await run('cold-2', ['--engine', 'static', '--no-cache'])
  const ours = criticalOf(first.dir, files)
  const oursAgain = criticalOf(second.dir, files)
  const inlined = first.run.report?.pages.filter((page) => page.outcome === 'inlined').length ?? 0
  const differing = files.filter((file) => ours.get(file) !== oursAgain.get(file))

  // The Chromium engine on a sample, through the same command: its time per page, for the ratio.
  const chromiumPages = sampleOf(files, CHROMIUM_SAMPLE)
  const chromium = await run('chromium', ['--engine', 'chromium', '--no-cache', '--pages', chromiumPages.map((file) => `/${file.replace(/index\.html$/, '')}`).join(',')])
  const chromiumPerPage = chromium.run.wallMs / chromiumPages.length

  // beasties on a sample, links root-relative so it finds the sheets; its bytes beside ours on those pages.
  const sample = sampleOf(files, BEASTIES_SAMPLE)
  const beasties = createBeasties(built.siteDir)
  const theirs = new Map<string, string | null>()
  let beastiesMs = 0
  for (const file of sample) {
    const result = await attempt(`${file}: beasties`, () => beasties.run(rootRelativeLinks(readFileSync(join(built.siteDir, file), 'utf8'), file)))
    theirs.set(file, result?.css || null)
    beastiesMs += result?.ms ?? 0
  }
  const beastiesPass = { version: installedVersion('beasties'), wallMs: beastiesMs, inlined: [...theirs.values()].filter(Boolean).length }
  const floor = parseFloor(built.siteDir, files)
  const ratios = sample.flatMap((file) => {
    const mine = ours.get(file)
    const other = theirs.get(file)
    return mine && other ? [{ file, ours: Buffer.byteLength(mine), beasties: Buffer.byteLength(other) }] : []
  })

  // The first screen held back on a few pages: served from the processed copy, against the site as built.
  const screens: { file: string; viewport: Viewport; noise: number; held: number }[] = []
  const server = await serveStatic(built.siteDir)
  try {
    for (const file of sampleOf(files, SCREEN_SAMPLE)) {
      const url = `${server.origin}/${file}`
      const html = readFileSync(join(built.siteDir, file), 'utf8')
      const css = ours.get(file)
      if (!css) continue
      for (const viewport of VIEWPORTS) {
        const full = await attempt(`${file}: full`, () => shooter.shoot(url, html, viewport))
        const again = full && (await attempt(`${file}: full again`, () => shooter.shoot(url, html, viewport)))
        const held = full && (await attempt(`${file}: held back`, () => shooter.shoot(url, criticalOnly(html, css), viewport)))
        if (full && again && held) screens.push({ file, viewport, noise: diff(full.png, again.png).ratio, held: diff(full.png, held.png).ratio })
      }
    }
  } finally {
    await server.close()
  }

  const wall = first.run.wallMs
  console.log(`\nThe static engine on ${files.length} MkDocs pages (mkdocs ${built.mkdocsVersion}), ${availableParallelism()} cores, ${cli.label}`)
  console.table([
    { run: 'static, cold', wall: `${(wall / 1000).toFixed(1)} s`, 'per page': `${(wall / files.length).toFixed(1)} ms`, 'peak RSS (tree)': `${(first.run.peak.rssBytes / 1048576).toFixed(0)} MiB`, 'peak PSS': `${(first.run.peak.pssBytes / 1048576).toFixed(0)} MiB`, CPU: `${(first.run.peak.cpuMs / 1000).toFixed(1)} s`, inlined: `${inlined}/${files.length}`, exit: first.run.exit },
    { run: 'static, cold again', wall: `${(second.run.wallMs / 1000).toFixed(1)} s`, 'per page': `${(second.run.wallMs / files.length).toFixed(1)} ms`, 'peak RSS (tree)': `${(second.run.peak.rssBytes / 1048576).toFixed(0)} MiB`, 'peak PSS': `${(second.run.peak.pssBytes / 1048576).toFixed(0)} MiB`, CPU: `${(second.run.peak.cpuMs / 1000).toFixed(1)} s`, inlined: `${second.run.report?.pages.filter((page) => page.outcome === 'inlined').length ?? 0}/${files.length}`, exit: second.run.exit },
    { run: `chromium, ${chromiumPages.length} pages`, wall: `${(chromium.run.wallMs / 1000).toFixed(1)} s`, 'per page': `${chromiumPerPage.toFixed(1)} ms`, 'peak RSS (tree)': `${(chromium.run.peak.rssBytes / 1048576).toFixed(0)} MiB`, 'peak PSS': `${(chromium.run.peak.pssBytes / 1048576).toFixed(0)} MiB`, CPU: `${(chromium.run.peak.cpuMs / 1000).toFixed(1)} s`, inlined: `${chromium.run.report?.pages.filter((page) => page.outcome === 'inlined').length ?? 0}/${chromiumPages.length}`, exit: chromium.run.exit },
    { run: `beasties ${beastiesPass.version}, ${sample.length} pages`, wall: `${(beastiesPass.wallMs / 1000).toFixed(1)} s`, 'per page': `${(beastiesPass.wallMs / sample.length).toFixed(1)} ms`, 'peak RSS (tree)': '—', 'peak PSS': '—', CPU: '—', inlined: `${beastiesPass.inlined}/${sample.length}`, exit: '' },
    { run: `parse5 alone, ${files.length} pages, one thread`, wall: `${(floor.wallMs / 1000).toFixed(1)} s`, 'per page': `${(floor.wallMs / files.length).toFixed(1)} ms`, 'peak RSS (tree)': '—', 'peak PSS': '—', CPU: `${(floor.cpuMs / 1000).toFixed(1)} s`, inlined: '—', exit: '' },
  ])
  console.log(`parse5 alone is the floor of one engine thread: every page's tree, nothing matched or written (its CPU counts V8's GC threads too).`)
  console.log(`Bytes on the ${ratios.length} pages both inlined: static median ${median(ratios.map((r) => r.ours))} B, beasties median ${median(ratios.map((r) => r.beasties))} B; static ÷ beasties ${Math.min(...ratios.map((r) => r.ours / r.beasties)).toFixed(2)}–${Math.max(...ratios.map((r) => r.ours / r.beasties)).toFixed(2)}×`)
  const worstBytes = ratios.reduce<(typeof ratios)[number] | null>((top, row) => (top === null || row.ours / row.beasties > top.ours / top.beasties ? row : top), null)
  checks.push(
    { target: `scale: every page inlined`, met: inlined === files.length, result: `${inlined}/${files.length}` },
    { target: `scale: ${files.length} pages ≤ ${SCALE_WALL_MS / 1000} s cold`, met: wall <= SCALE_WALL_MS, result: `${(wall / 1000).toFixed(1)} s (again: ${(second.run.wallMs / 1000).toFixed(1)} s)` },
    { target: `scale: ≥ ${CHROMIUM_RATIO}× the Chromium path per page`, met: chromiumPerPage / (wall / files.length) >= CHROMIUM_RATIO, result: `${(chromiumPerPage / (wall / files.length)).toFixed(1)}× (${chromiumPerPage.toFixed(0)} vs ${(wall / files.length).toFixed(1)} ms a page)` },
    { target: `scale: peak RSS ≤ ${SCALE_RSS_BYTES / 1048576} MiB`, met: first.run.peak.rssBytes <= SCALE_RSS_BYTES, result: `${(first.run.peak.rssBytes / 1048576).toFixed(0)} MiB (PSS ${(first.run.peak.pssBytes / 1048576).toFixed(0)} MiB)` },
    { target: 'scale: same bytes on every page, two cold runs', met: differing.length === 0, result: `${files.length - differing.length}/${files.length}${differing.length ? `; differ: ${differing.slice(0, 3).join(', ')}` : ''}` },
    { target: 'scale: static bytes median ≤ beasties', met: (median(ratios.map((r) => r.ours)) ?? Infinity) <= (median(ratios.map((r) => r.beasties)) ?? 0), result: `${median(ratios.map((r) => r.ours))} vs ${median(ratios.map((r) => r.beasties))} B` },
    { target: `scale: no page above ${BYTES_FACTOR}× beasties`, met: ratios.every((r) => r.ours / r.beasties <= BYTES_FACTOR), result: worstBytes ? `worst ${worstBytes.file}: ${(worstBytes.ours / worstBytes.beasties).toFixed(2)}×` : '—' },
    { target: 'scale: first screen held back = full page within noise + 0.1 %', met: screens.every((s) => s.held - s.noise <= PIXEL_SLACK), result: `${screens.filter((s) => s.held - s.noise <= PIXEL_SLACK).length}/${screens.length}; worst ${pct(Math.max(0, ...screens.map((s) => s.held)))} %` },
  )
}

const shooter = await createShooter(executablePath, [...chromiumFlags(), OFFLINE])
try {
  if (parts.has('quality')) await qualityPart(shooter)
  if (parts.has('scale')) await scalePart(shooter)
} finally {
  await shooter.close()
}

console.log(`\nTargets (Chromium ${shooter.version}, node ${process.version})`)
console.table(checks.map((check) => ({ target: check.target, met: check.met ? '✓' : '✗', result: check.result })))
if (troubles.length) console.log(`\n${troubles.length} problem(s):\n${troubles.map((t) => `  ${t}`).join('\n')}`)
console.log(`\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s. Shots of the quality bench: ${join(CACHE_DIR, 'shots')}`)
