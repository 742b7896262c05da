/**
 * The request-time runtime (`unplugin-critical-css/runtime`, issue 50) beside beasties'
 * runtime (`beasties/runtime`, 0.5), on the same server-rendered pages (5, 50 and 500 KB):
 * time per response (median of three rounds), bytes the heap grows by per response (beside
 * the size of the page it returns), and each runtime's size as a server bundle carries it (esbuild, minified, and
 * gzipped). Ours inserts CSS the build measured in a browser; beasties' matches its compiled
 * selectors against each response's HTML, so it does more per request by design.
 *
 *   npm run bench:runtime
 *
 * Each call gets its own copy of the page (64 of them, in turn), as each response is a new
 * string: neither runtime may answer from what it read of the same string before. The
 * allocation column is read in a child process with `--expose-gc --max-semi-space-size`: no
 * scavenge runs during its rounds, so the heap's growth is what the calls allocated.
 */
import { spawnSync } from 'node:child_process'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { compileSheet } from 'beasties/compiler'
import { createProcessor } from 'beasties/runtime'
import { applyCriticalCss, loadManifest, type CriticalCssManifest } from '../src/runtime.ts'
import { LOADER_FILE } from '../src/html/loader.ts'
import { headPlanOf } from '../src/html/head-plan.ts'
import { stylesheetHrefs } from '../src/html/scan.ts'
import { CSS, STYLESHEET, page } from './pages.ts'

const SIZES = [5_000, 50_000, 500_000]
const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 3000)
const ALLOCATION_CALLS = 40
/** Calls before any is measured: the code is optimised by then, so its compiling is not counted as either runtime's allocation. */
const WARM_UP_CALLS = 2000
const SELF = fileURLToPath(import.meta.url)
const URL_PATH = '/blog/first-post'

const HOW = { preload: 'loader', loaderSrc: `/${LOADER_FILE}` } as const
const NO_INPUTS = { keepBlocking: [], wholeSheets: null, lookedUp: [], fontPreloads: [] }
/** The route's edits, made as a build makes them on its sample (the smallest page). */
const SAMPLE = page(SIZES[0]!)
const MANIFEST: CriticalCssManifest = {
  version: 2,
  ...HOW,
  base: '/',
  routes: [{ route: '/blog/[slug]', sheets: stylesheetHrefs(SAMPLE), css: CSS, ...NO_INPUTS, head: headPlanOf(SAMPLE, CSS, { ...HOW, onlyWithStylesheets: stylesheetHrefs(SAMPLE) })! }],
}

type Runtime = (html: string) => string

/** Copies of `html`, each its own flat string, for one call each in turn. */
function copies(html: string): string[] {
  return Array.from({ length: 64 }, (_, i) => Buffer.from(html.replace('</body>', `<!-- response ${i} --></body>`)).toString('utf8'))
}

function runtimes(): Record<'ours' | 'beasties', Runtime> {
  const manifest = loadManifest(MANIFEST)
  const beasties = createProcessor([compileSheet(STYLESHEET, { href: '/assets/site.css' })])
  return {
    ours: (html) => applyCriticalCss(html, URL_PATH, manifest),
    beasties: (html) => beasties.process(html),
  }
}

/** Median ms per call of three rounds of `BUDGET_MS / 3` each. */
function msPerCall(run: Runtime, html: string): number {
  const pages = copies(html)
  for (let i = 0; i < WARM_UP_CALLS; i++) run(pages[i % pages.length]!)
  const rounds: number[] = []
  for (let round = 0; round < 3; round++) {
    let calls = 0
    const started = performance.now()
    while (performance.now() - started < BUDGET_MS / 3 || calls < 5) {
      run(pages[calls % pages.length]!)
      calls++
    }
    rounds.push((performance.now() - started) / calls)
  }
  return rounds.sort((a, b) => a - b)[1]!
}

/** In the child: bytes the heap grew by per call (what it returns included, kept so that nothing is freed meanwhile), the median of three rounds. */
function allocatedPerCall(run: Runtime, html: string): number {
  const gc = (globalThis as { gc?: () => void }).gc!
  const pages = copies(html)
  for (let i = 0; i < WARM_UP_CALLS; i++) run(pages[i % pages.length]!)
  // Median of three counts: code the optimiser finishes meanwhile is installed on the heap too.
  const counts: number[] = []
  for (let round = 0; round < 3; round++) {
    const kept: string[] = []
    gc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < ALLOCATION_CALLS; i++) kept.push(run(pages[i % pages.length]!))
    counts.push((process.memoryUsage().heapUsed - before) / ALLOCATION_CALLS)
  }
  return counts.sort((a, b) => a - b)[1]!
}

/** A runtime's size in a server bundle: its entry bundled with what it imports. */
async function bundledBytes(entry: string): Promise<{ min: number; gzip: number }> {
  const result = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'node', write: false, logLevel: 'silent' })
  const text = result.outputFiles[0]!.contents
  return { min: text.byteLength, gzip: gzipSync(text).byteLength }
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`

if (process.argv[2] === '--allocation') {
  const all = runtimes()
  const sizes: Record<string, Record<string, number>> = {}
  for (const size of SIZES) sizes[size] = { ours: allocatedPerCall(all.ours, page(size)), beasties: allocatedPerCall(all.beasties, page(size)) }
  process.stdout.write(JSON.stringify(sizes))
} else {
  const child = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=1024', ...process.execArgv, SELF, '--allocation'], { encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`the allocation run failed:\n${child.stderr}`)
  const allocation = JSON.parse(child.stdout) as Record<string, Record<'ours' | 'beasties', number>>
  const all = runtimes()
  console.log(`runtime per response, node ${process.version} (${BUDGET_MS} ms a row and runtime)\n`)
  console.log('| page | ours ms | beasties ms | ours: heap grown per response | beasties: heap grown per response | output changed (ours / beasties) |')
  console.log('|---|---|---|---|---|---|')
  for (const size of SIZES) {
    const html = page(size)
    const [ours, beasties] = [msPerCall(all.ours, html), msPerCall(all.beasties, html)]
    const changed = `${all.ours(html) !== html} / ${all.beasties(html) !== html}`
    console.log(`| ${kb(html.length)} | ${ours.toFixed(3)} | ${beasties.toFixed(3)} | ${kb(allocation[size]!.ours)} | ${kb(allocation[size]!.beasties)} | ${changed} |`)
  }
  const [oursSize, beastiesSize] = await Promise.all([bundledBytes(fileURLToPath(new URL('../src/runtime.ts', import.meta.url))), bundledBytes('beasties/runtime')])
  console.log('\n| runtime in a server bundle | minified | gzip |')
  console.log('|---|---|---|')
  console.log(`| unplugin-critical-css/runtime | ${kb(oursSize.min)} | ${kb(oursSize.gzip)} |`)
  console.log(`| beasties/runtime | ${kb(beastiesSize.min)} | ${kb(beastiesSize.gzip)} |`)
}
