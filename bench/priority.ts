/**
 * When the full stylesheets are applied, with and without the fetch priority each strategy
 * gives its deferred links (issue 35: `fetchpriority="high"` on `loader` and `media`, `low`
 * on the preloads of `body` and `swap`, so that every deferred sheet is fetched at Chromium's
 * High and Lighthouse's simulator does not count it as render-blocking). The peer is the same
 * page without those attributes: the change must not make the full CSS arrive later.
 *
 * Page: startbootstrap-creative's index.html as bench:fcp prepares it (its CDN files from the
 * npm packages they name, five stylesheets), each strategy's variant from bench:fcp's overlay
 * folders; run `npm run bench:fcp` once first (`BENCH_SITES=startbootstrap-creative
 * BENCH_LIGHTHOUSE_RUNS=0` is enough). Every `.css` answer is held back BENCH_DELAY ms
 * (default 300) plus its size at BENCH_KBPS kB/s (default 200), so the sheets compete for the
 * line as on a slow network; a fresh browser context per load, 1300×900, offline but for
 * 127.0.0.1. Median of BENCH_ROUNDS loads (default 5) of the time at which every stylesheet
 * was applied, the variants taking turns.
 *
 *   npm run bench:priority
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { createLoader, OFFLINE } from './fcp/browser.ts'
import { median, ms, table } from './fcp/report.ts'
import { startServer } from './fcp/server.ts'
import { FCP_DIR, prepareSites } from './fcp/sites.ts'
import { STRATEGIES, overlayDir } from './fcp/variants.ts'
import { stylesheetsOf } from './quality/html.ts'

const DELAY_MS = Number(process.env.BENCH_DELAY ?? 300)
const KBPS = Number(process.env.BENCH_KBPS ?? 200)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5))
const PRIORITY = / fetchpriority="(?:high|low)"/g

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
const [site] = await prepareSites(['startbootstrap-creative'], 1)
const page = site!.pages[0]!
const built = readFileSync(join(site!.dir, page), 'utf8')
const sheets = stylesheetsOf(built, `http://127.0.0.1${page}`).flatMap((sheet) => (sheet.kind === 'link' ? [new URL(sheet.href).pathname] : []))

/** Each strategy's page as bench:fcp wrote it, and the same without the priorities it adds. */
const variants: { name: string; dir: string }[] = []
for (const strategy of STRATEGIES) {
  const source = overlayDir(site!, strategy)
  if (!existsSync(join(source, page))) throw new Error(`${join(source, page)} is missing: run \`BENCH_SITES=startbootstrap-creative BENCH_LIGHTHOUSE_RUNS=0 npm run bench:fcp\` first.`)
  const html = readFileSync(join(source, page), 'utf8')
  if (!html.includes(' fetchpriority="')) throw new Error(`${strategy}: the page has no fetchpriority to compare without`)
  for (const [name, text] of [[strategy, html], [`${strategy} without fetchpriority`, html.replace(PRIORITY, '')]] as const) {
    const dir = join(FCP_DIR, 'priority', name.replace(/\W+/g, '-'))
    rmSync(dir, { recursive: true, force: true })
    cpSync(source, dir, { recursive: true })
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, page), text)
    variants.push({ name, dir })
  }
}

const server = await startServer()
const loader = await createLoader(executablePath, [...chromiumFlags(), OFFLINE])
const applied = new Map<string, number[]>(variants.map((variant) => [variant.name, []]))
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of variants) {
      server.target = { overlay: variant.dir, root: site!.dir, firstScripts: new Map(), delayMs: DELAY_MS, kbps: KBPS }
      const result = await loader.load(server.origin + page, { expectScript: false, timeoutMs: 30_000, shoot: true, sheets })
      if (result.applied === null || result.applied === undefined) throw new Error(`${variant.name}: a stylesheet was not applied`)
      applied.get(variant.name)!.push(result.applied)
      console.error(`  round ${round + 1}: ${variant.name} ${ms(result.applied)} ms`)
    }
  }
} finally {
  await loader.close()
  await server.close()
}

console.log(`\n${site!.name} ${page} (${sheets.length} stylesheets), each ${DELAY_MS} ms late plus its size at ${KBPS} kB/s; Chromium ${loader.version}; ${ROUNDS} loads each`)
console.log(`When every stylesheet was applied, ms since navigation start (median, min–max)\n`)
console.log(
  table(
    ['strategy', 'with its fetchpriority', 'without', 'difference'],
    STRATEGIES.map((strategy) => {
      const own = applied.get(strategy)!
      const peer = applied.get(`${strategy} without fetchpriority`)!
      const range = (values: number[]): string => `${ms(median(values))} (${ms(Math.min(...values))}–${ms(Math.max(...values))})`
      return [strategy, range(own), range(peer), `${ms(median(own)! - median(peer)!)}`]
    }),
  ),
)
