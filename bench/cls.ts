/**
 * Layout shift while the full stylesheets arrive (issue 35), beside the page as built.
 *
 * Page: startbootstrap-sb-admin 7.0.7's tables.html (the quality corpus, `npm pack`ed at
 * bench time), with its simple-datatables 7.1.2 stylesheet and script taken from the npm
 * registry's package instead of jsDelivr, which this machine cannot reach: the table the
 * script builds and the small library sheet linked before the site's are what shift.
 * Variants: `as built`, and the copy the folder command writes with each strategy (critical
 * CSS from embedded mode, no cache). Every `.css` answer is held back BENCH_DELAY ms
 * (default 3000) plus its size at BENCH_KBPS kB/s (default 200, a slow phone network), so
 * the small library sheet lands before the site's 200 kB one, as on a real network;
 * everything else answers at once, and every non-loopback request is refused. Each load is a fresh browser context as a phone (412×915, mobile, touch, device
 * pixels 1:1); CLS is the sum of the page's `layout-shift` entries without recent input, read
 * 1 s after the load event and every stylesheet applied. Median of BENCH_ROUNDS loads (default
 * 5), the variants taking turns.
 *
 * Target (issue 35): `loader`'s median CLS ≤ the page as built + 0.005.
 *
 *   npm run bench:cls
 *   BENCH_ROUNDS=3 BENCH_DELAY=1500 BENCH_KBPS=1000 npm run bench:cls
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { processDirectory } from '../src/core/directory.ts'
import type { PreloadStrategy } from '../src/html/strategies.ts'
import { startServer, type BenchServer } from './fcp/server.ts'
import { CACHE_DIR, CORPUS, fetchSite } from './quality/corpus.ts'
import { vendorPackage } from './quality/vendor.ts'

const PAGE = 'tables.html'
const DATATABLES = { name: 'simple-datatables', version: '7.1.2' }
const CDN = `https://cdn.jsdelivr.net/npm/${DATATABLES.name}@${DATATABLES.version}/dist/`
const VIEWPORT = { width: 412, height: 915 }
const DELAY_MS = Number(process.env.BENCH_DELAY ?? 3000)
const KBPS = Number(process.env.BENCH_KBPS ?? 200)
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5))
const SETTLE_MS = 1000
const CLS_SLACK = 0.005
const STRATEGIES: readonly PreloadStrategy[] = ['loader', 'media', 'body']
const WORK = join(CACHE_DIR, 'cls')

/** The site as built, its CDN library replaced by the package's files at `vendor/`. */
function builtSite(): string {
  const entry = CORPUS.find((candidate) => candidate.name === 'startbootstrap-sb-admin')!
  const site = fetchSite(entry)
  const dir = join(WORK, 'as-built')
  rmSync(dir, { recursive: true, force: true })
  cpSync(site.dir, dir, { recursive: true })
  const vendor = join(dir, 'vendor', DATATABLES.name)
  mkdirSync(vendor, { recursive: true })
  const dist = join(vendorPackage(DATATABLES.name, DATATABLES.version), 'dist')
  cpSync(join(dist, 'style.css'), join(vendor, 'style.css'))
  cpSync(join(dist, 'umd', 'simple-datatables.js'), join(vendor, 'simple-datatables.js'))
  const html = readFileSync(join(dir, PAGE), 'utf8')
  const vendored = html.replace(`${CDN}style.min.css`, `vendor/${DATATABLES.name}/style.css`).replace(`${CDN}umd/simple-datatables.min.js`, `vendor/${DATATABLES.name}/simple-datatables.js`)
  if (vendored === html || vendored.includes(CDN)) throw new Error(`${PAGE} no longer links ${CDN} as this bench expects`)
  writeFileSync(join(dir, PAGE), vendored)
  return dir
}

/** A copy of the built site, processed by the folder command with `strategy`. */
async function processed(built: string, strategy: PreloadStrategy): Promise<string> {
  const dir = join(WORK, strategy)
  rmSync(dir, { recursive: true, force: true })
  cpSync(built, dir, { recursive: true })
  const quiet = { info: () => {}, warn: (message: string) => console.error(`  ${strategy}: ${message}`) }
  const { report } = await processDirectory(dir, { pages: [`/${PAGE}`], preload: strategy, cache: false }, { root: WORK, logger: quiet, env: {} })
  const page = report.pages.find((entry) => entry.file === PAGE)
  if (page?.outcome !== 'inlined') throw new Error(`${strategy}: ${PAGE} was not inlined (${page?.outcome}: ${page?.message})`)
  return dir
}

const OBSERVE_SHIFTS = `window.__cls = 0; new PerformanceObserver((list) => { for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__cls += entry.value }).observe({ type: 'layout-shift', buffered: true })`
const ALL_APPLIED = `Array.from(document.querySelectorAll('link[rel~=stylesheet]')).every((link) => link.sheet && !link.hasAttribute('data-critical-css-media') && link.media !== 'print')`

/** One load of `dir`'s page: its CLS, once the page has loaded and every stylesheet applies. */
async function load(browser: Browser, server: BenchServer, dir: string): Promise<number> {
  server.target = { overlay: dir, root: dir, firstScripts: new Map(), delayMs: DELAY_MS, kbps: KBPS }
  const context = await browser.newContext({ viewport: VIEWPORT, isMobile: true, hasTouch: true, deviceScaleFactor: 1 })
  try {
    await context.route((url) => url.hostname !== '127.0.0.1', (route) => route.abort('addressunreachable'))
    await context.addInitScript({ content: OBSERVE_SHIFTS })
    const page = await context.newPage()
    await page.goto(`${server.origin}/${PAGE}`, { waitUntil: 'load', timeout: DELAY_MS + 30_000 })
    await page.waitForFunction(ALL_APPLIED, undefined, { timeout: 30_000, polling: 50 })
    await page.waitForTimeout(SETTLE_MS)
    return (await page.evaluate('window.__cls')) as number
  } finally {
    await context.close()
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
const started = performance.now()
const built = builtSite()
const variants: { name: string; dir: string }[] = [{ name: 'as built', dir: built }]
for (const strategy of STRATEGIES) variants.push({ name: strategy, dir: await processed(built, strategy) })
const browser = await chromium.launch({ executablePath, headless: true, args: chromiumFlags() })
const version = browser.version()
const server = await startServer()
const shifts = variants.map(() => [] as number[])
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, variant] of variants.entries()) {
      shifts[index]!.push(await load(browser, server, variant.dir))
      console.error(`  round ${round + 1}: ${variant.name} ${shifts[index]!.at(-1)!.toFixed(4)}`)
    }
  }
} finally {
  await server.close()
  await browser.close()
}

console.log(`\nsb-admin ${PAGE} at ${VIEWPORT.width}×${VIEWPORT.height} (phone), every stylesheet ${DELAY_MS} ms late plus its size at ${KBPS} kB/s, ${ROUNDS} loads each, Chromium ${version}`)
console.table(variants.map((variant, index) => ({ variant: variant.name, 'CLS median': median(shifts[index]!).toFixed(4), 'CLS min–max': `${Math.min(...shifts[index]!).toFixed(4)}–${Math.max(...shifts[index]!).toFixed(4)}` })))
if (server.misses.size > 0) console.log(`answered 404: ${[...server.misses].join(', ')}`)
const plain = median(shifts[0]!)
const ours = median(shifts[1]!)
console.log(`target: loader's median CLS ≤ as built + ${CLS_SLACK}: ${ours <= plain + CLS_SLACK ? '✓' : '✗'} (${ours.toFixed(4)} vs ${plain.toFixed(4)})`)
console.log(`Run took ${((performance.now() - started) / 1000).toFixed(0)} s.`)
