/**
 * What Vite 8 (Rolldown) prints as `[PLUGIN_TIMINGS]` on a cold build with the plugin, and
 * whether doing the render in a later hook would change it (issue 30). The Vite playground
 * grown to BENCH_PAGES pages (default 10), built in one process, in turn:
 *
 * - the named peer: the same build without the plugin;
 * - ours as published (`unplugin-critical-css/vite` from dist/, so `npm run build` first),
 *   no service configured (embedded mode: every page rendered in the local Chromium),
 *   `cache: false`, so every build is cold; the render runs in `generateBundle`;
 * - the same, with the user's off switch `build.rolldownOptions.checks.bundlerTimings: false`;
 * - the same plugin with its `generateBundle` handler moved, by a wrapper in this file, to
 *   `writeBundle` or to `closeBundle` (the bundle captured in writeBundle). Simulations: the
 *   render costs what it costs, but Vite has already written the files, so its edits never
 *   reach the disk (the "HTML inlined on disk" column shows it);
 * - a scratch plugin that only waits BENCH_SLEEP_MS (default 3000, 0 to skip) in
 *   renderStart, generateBundle, writeBundle or closeBundle.
 *
 * Per build: whether Vite printed PLUGIN_TIMINGS (with several rounds: in how many), the
 * warning's headline and the row naming the slow hook (from the last round that warned),
 * the plugin's own time from its summary line, Vite's own "built in" figure (it stops before
 * closeBundle), and the wall time of the build() call (what the terminal waits for). The
 * full text of the shipped build's first warning follows the table. One throw-away round of
 * the plugin-less and the shipped build first; then BENCH_ROUNDS rounds (default 1), medians.
 * Rolldown only warns when its own clock of the build passes 3 s, so a site whose cold render
 * takes about that long warns in some rounds only: the playground's own 3 pages do (2–3 s
 * cold on 2 cores, BENCH_PAGES=3); 10 pages clear it.
 *
 *   npm run build && npx tsx bench/plugin-timings.ts
 *   BENCH_ROUNDS=3 BENCH_PAGES=3 BENCH_SLEEP_MS=0 npx tsx bench/plugin-timings.ts
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { existsSync, readFileSync } from 'node:fs'
import { build, createLogger, type Logger, type Plugin } from 'vite'
import { ENV } from '../src/core/options.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { makeSite, type GeneratedSite } from './embedded/site.ts'

const PAGES = Number(process.env.BENCH_PAGES ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const SLEEP_MS = Number(process.env.BENCH_SLEEP_MS ?? 3000)
const REPO = fileURLToPath(new URL('..', import.meta.url))
const ANSI = /\u001b\[[0-9;]*m/g
const STYLE = /<style[\s>]/

if (![PAGES, ROUNDS].every((n) => Number.isInteger(n) && n >= 1) || !Number.isInteger(SLEEP_MS) || SLEEP_MS < 0) {
  console.error('BENCH_PAGES, BENCH_ROUNDS: integers ≥ 1; BENCH_SLEEP_MS: an integer ≥ 0 (0 skips the scratch rows).')
  process.exit(1)
}
if (!existsSync(join(REPO, 'dist/vite.mjs'))) {
  console.error('dist/vite.mjs is missing: run `npm run build` first (this bench measures the published plugin).')
  process.exit(1)
}
if (findChromium() === null) {
  console.error(INSTALL_HINT)
  process.exit(1)
}
// Embedded mode: no service configured.
for (const name of Object.values(ENV)) delete process.env[name]
// The package's own name resolves to dist/ through its exports, as in a user's config.
// A name in a variable: the typecheck of a clean clone runs before dist/ is built.
const PUBLISHED = 'unplugin-critical-css/vite'
const { default: criticalCss } = (await import(PUBLISHED)) as { default: (options: object) => Plugin }

type Hook = 'renderStart' | 'generateBundle' | 'writeBundle' | 'closeBundle'
interface Variant {
  label: string
  /** Where the time is spent; '' for the peer. */
  hook: Hook | ''
  plugins: () => Plugin[]
  checksOff?: boolean
}

type Handler = (this: unknown, ...args: unknown[]) => unknown
const handlerOf = (hook: unknown): Handler => (typeof hook === 'function' ? hook : (hook as { handler: Handler }).handler) as Handler

/** The hook's context with emitFile made a no-op (too late to add files there), counted. */
function lateContext(context: object, emitted: { count: number }): object {
  return new Proxy(context, {
    get(target, key) {
      if (key === 'emitFile') return () => (emitted.count++, '')
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** The published plugin with its generateBundle handler run in a later hook instead. */
function moved(to: 'writeBundle' | 'closeBundle'): Plugin {
  const plugin = criticalCss({ cache: false })
  const render = handlerOf(plugin.generateBundle)
  const close = handlerOf(plugin.closeBundle)
  const emitted = { count: 0 }
  let captured: unknown[] | null = null
  const { generateBundle: _dropped, ...rest } = plugin
  if (to === 'writeBundle') {
    return { ...rest, async writeBundle(...args: unknown[]) { await render.apply(lateContext(this, emitted), args) } } as Plugin
  }
  return {
    ...rest,
    writeBundle(...args: unknown[]) {
      captured = args
    },
    async closeBundle(...args: unknown[]) {
      // The render first, then the plugin's own closeBundle (it stops the browser).
      if (captured) await render.apply(lateContext(this, emitted), captured)
      await close.apply(this, args)
    },
  } as Plugin
}

function sleeper(hook: Hook): Plugin {
  return { name: 'bench-sleeper', [hook]: () => new Promise((resolve) => setTimeout(resolve, SLEEP_MS)) } as Plugin
}

const VARIANTS: Variant[] = [
  { label: 'Vite, no plugin (peer)', hook: '', plugins: () => [] },
  { label: 'ours, cold, as shipped', hook: 'generateBundle', plugins: () => [criticalCss({ cache: false })] },
  { label: 'ours, cold, checks.bundlerTimings: false', hook: 'generateBundle', plugins: () => [criticalCss({ cache: false })], checksOff: true },
  { label: 'ours, cold, render moved (simulated)', hook: 'writeBundle', plugins: () => [moved('writeBundle')] },
  { label: 'ours, cold, render moved (simulated)', hook: 'closeBundle', plugins: () => [moved('closeBundle')] },
  ...(SLEEP_MS > 0
    ? (['renderStart', 'generateBundle', 'writeBundle', 'closeBundle'] as const).map((hook): Variant => ({
        label: `scratch plugin, waits ${SLEEP_MS / 1000} s`,
        hook,
        plugins: () => [sleeper(hook)],
      }))
    : []),
]

interface Result {
  warned: boolean
  /** The warning as printed, ANSI codes removed. */
  text: string | null
  /** Headline share (or "ran for X. The build took Y."), as printed. */
  headline: string | null
  /** The row naming the variant's hook, as printed. */
  row: string | null
  /** Vite's "✓ built in" figure, ms. */
  builtInMs: number | null
  /** The plugin's own figure for its pages, from its summary line, ms. */
  renderMs: number | null
  wallMs: number
  inlinedOnDisk: number
  pages: number
}

/** Vite's logger, kept quiet: every line is recorded, none printed. */
function recordingLogger(lines: { type: 'info' | 'warn' | 'error'; text: string }[]): Logger {
  const logger = createLogger('info')
  for (const type of ['info', 'warn', 'error'] as const) {
    logger[type] = (message: string) => void lines.push({ type, text: message.replace(ANSI, '') })
  }
  logger.warnOnce = logger.warn
  return logger
}

/** The first figure the pattern finds in the recorded lines, ms. */
function figure(lines: { text: string }[], pattern: RegExp): number | null {
  for (const line of lines) {
    const match = pattern.exec(line.text)
    if (match) return Number(match[1]) * (match[2] === 's' ? 1000 : 1)
  }
  return null
}

async function htmlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.html')).map((entry) => join(entry.parentPath, entry.name))
}

async function run(site: GeneratedSite, variant: Variant): Promise<Result> {
  const outDir = join(site.root, 'dist')
  const lines: { type: 'info' | 'warn' | 'error'; text: string }[] = []
  const started = performance.now()
  await build({
    root: site.site,
    configFile: false,
    publicDir: false,
    // Vite's progress lines off; every logger line still reaches the recording logger.
    logLevel: 'warn',
    customLogger: recordingLogger(lines),
    build: {
      outDir,
      emptyOutDir: true,
      rolldownOptions: { input: site.inputs, ...(variant.checksOff ? { checks: { bundlerTimings: false } } : {}) },
    },
    plugins: variant.plugins(),
  })
  const wallMs = performance.now() - started
  const warning = lines.find((line) => line.type === 'warn' && line.text.includes('[PLUGIN_TIMINGS]'))?.text ?? null
  const files = await htmlFiles(outDir)
  const inlinedOnDisk = (await Promise.all(files.map(async (file) => STYLE.test(await readFile(file, 'utf8'))))).filter(Boolean).length
  const rowName = variant.hook && warning?.split('\n').find((line) => line.trimStart().startsWith('- ') && line.includes(` ${variant.hook} (`))
  return {
    warned: warning !== null,
    text: warning,
    headline: warning?.split('\n')[0]!.replace('[PLUGIN_TIMINGS] ', '').trim() ?? null,
    row: rowName ? rowName.trim().replace(/^- /, '') : null,
    builtInMs: figure(lines, /built in ([\d.]+)(ms|s)\b/),
    renderMs: figure(lines, /^critical CSS: .* · ([\d.]+) (ms|s)$/m),
    wallMs,
    inlinedOnDisk,
    pages: files.length,
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`
const version = (name: string): string => (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version

async function main(): Promise<void> {
  const site = await makeSite(PAGES)
  try {
    console.log(`Vite ${version('vite')}, Rolldown ${version('rolldown')}, Node ${process.versions.node}; ${PAGES} page(s), ${ROUNDS} round(s), cache off.`)
    // Throw-away: Vite's, Node's and Chromium's own warm-up is not what is measured.
    for (const variant of VARIANTS.slice(0, 2)) await run(site, variant)

    const results = VARIANTS.map((): Result[] => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, variant] of VARIANTS.entries()) {
        process.stderr.write(`round ${round + 1}/${ROUNDS}: ${variant.label}${variant.hook ? `, ${variant.hook}` : ''}\n`)
        results[index]!.push(await run(site, variant))
      }
    }

    const peerWall = median(results[0]!.map((result) => result.wallMs))
    const header = ['build', 'time spent in', 'PLUGIN_TIMINGS printed', "warning's headline", "warning's row for that hook", "plugin's own time", 'Vite "built in"', 'wall (build())', 'vs peer', 'HTML inlined on disk']
    const medianOf = (values: (number | null)[]): string => {
      const numbers = values.filter((value): value is number => value !== null)
      return numbers.length ? seconds(median(numbers)) : '-'
    }
    const rows = VARIANTS.map((variant, index) => {
      const runs = results[index]!
      const last = runs.at(-1)!
      const warnedRuns = runs.filter((result) => result.warned)
      const shown = warnedRuns.at(-1)
      const wall = median(runs.map((result) => result.wallMs))
      return [
        variant.label,
        variant.hook || '-',
        ROUNDS === 1 ? (shown ? 'yes' : 'no') : `${warnedRuns.length}/${ROUNDS}`,
        shown?.headline ?? '-',
        shown?.row ?? '-',
        medianOf(runs.map((result) => result.renderMs)),
        medianOf(runs.map((result) => result.builtInMs)),
        seconds(wall),
        `${(wall / peerWall).toFixed(1)}×`,
        `${last.inlinedOnDisk}/${last.pages}`,
      ]
    })
    console.log(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`)
    for (const row of rows) console.log(`| ${row.join(' | ')} |`)

    const shipped = results[1]!.find((result) => result.text !== null)
    console.log(`\nThe warning of the shipped cold build, as Vite printed it:\n${shipped?.text?.trimEnd() ?? '(none: the build stayed under Rolldown\'s 3 s core clock)'}`)
    const lost = VARIANTS.some((variant, index) => variant.hook && variant.label.includes('moved') && results[index]!.at(-1)!.inlinedOnDisk < PAGES)
    if (lost) console.log('\nThe moved renders run after Vite wrote the files: their edits are not on disk unless they are written again.')
  } finally {
    await rm(site.root, { recursive: true, force: true })
  }
}

await main()
