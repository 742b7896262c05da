/**
 * The README's main command as a newcomer runs it (issue 36): `npm run demo`, each time in a
 * fresh child process with the plugin's cache removed first (cold: the embedded service and
 * Chromium start, every page is rendered), BENCH_ROUNDS times (default 3), then once more
 * with the cache kept (warm: the peer, every page from the cache, no browser). The figure is
 * the plugin's own time per playground, from the report each build writes
 * (playground/<name>/report.json, `ms`: the summary line's "X s"), beside the whole command's
 * wall time. `CRITICAL_CSS_*` variables are not passed on: the demo runs in embedded mode.
 *
 * This checkout's cold runs are made with `--verbose`, and the median of each step of the
 * breakdown the demo writes (playground/<name>/timings.json) is printed per playground.
 *
 * BENCH_AGAINST=<commit> runs the same on that commit, side by side: a git worktree in
 * bench/.out/demo-<commit> (its own `npm ci` the first time; or give the path of a checkout
 * that has its dependencies installed), its cold runs alternating with
 * this checkout's, so that what the machine does at the moment weighs on both alike. What
 * differs between the two is the code; what both show on this machine and not on another
 * is the machine.
 *
 * Target (issue 36): each playground's cold plugin time ≤ 1.5 s at the median; the warm run
 * renders nothing.
 *
 *   npm run bench:demo
 *   BENCH_ROUNDS=5 BENCH_AGAINST=4020bba npm run bench:demo
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Breakdown } from '../playground/timings.ts'
import type { BuildReport } from '../src/core/report.ts'
import { median, table } from './fcp/report.ts'

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const AGAINST = process.env.BENCH_AGAINST?.trim() || null
const TARGET_MS = 1500
const PLAYGROUNDS = ['vite', 'webpack'] as const
const ROOT = fileURLToPath(new URL('../', import.meta.url))
const ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CRITICAL_CSS_')))

type Playground = (typeof PLAYGROUNDS)[number]

interface Run {
  wallMs: number
  /** Per playground: the plugin's own time, where its pages came from, and (verbose) where the time went. */
  plugin: Record<Playground, { ms: number; rendered: number; cached: number; spent: Breakdown | null }>
}

interface Checkout {
  name: string
  dir: string
  verbose: boolean
  cold: Run[]
  warm?: Run
}

/** A worktree of `commit` with its dependencies installed, made once and kept in bench/.out. */
function worktree(commit: string): string {
  const sha = execFileSync('git', ['rev-parse', '--short', `${commit}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim()
  const dir = join(ROOT, 'bench/.out', `demo-${sha}`)
  if (!existsSync(dir)) {
    mkdirSync(join(ROOT, 'bench/.out'), { recursive: true })
    execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: ROOT, stdio: 'inherit' })
  }
  if (!existsSync(join(dir, 'node_modules'))) execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' })
  return dir
}

function demo(checkout: Checkout): Run {
  const started = performance.now()
  const child = spawnSync('npm', ['run', 'demo', '--silent', ...(checkout.verbose ? ['--', '--verbose'] : [])], { cwd: checkout.dir, env: ENV, encoding: 'utf8' })
  const wallMs = performance.now() - started
  if (child.status !== 0) throw new Error(`npm run demo (${checkout.name}) exited ${child.status}:\n${child.stderr}${child.stdout}`)
  const read = <T>(name: Playground, file: string): T => JSON.parse(readFileSync(join(checkout.dir, 'playground', name, file), 'utf8')) as T
  const plugin = Object.fromEntries(
    PLAYGROUNDS.map((name) => {
      const report = read<BuildReport>(name, 'report.json')
      const count = (source: string): number => report.pages.filter((page) => page.source === source).length
      const spent = checkout.verbose ? read<Breakdown>(name, 'timings.json') : null
      return [name, { ms: report.ms, rendered: count('embedded'), cached: count('cache'), spent }]
    }),
  ) as Run['plugin']
  return { wallMs, plugin }
}

const checkouts: Checkout[] = [{ name: `${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()} (this checkout)`, dir: ROOT, verbose: true, cold: [] }]
if (AGAINST !== null) {
  const dir = existsSync(join(AGAINST, 'package.json')) ? AGAINST : worktree(AGAINST)
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()
  checkouts.push({ name: head, dir, verbose: false, cold: [] })
}

const loadAtStart = loadavg()[0]!
for (let round = 0; round < ROUNDS; round++) {
  // Alternating which goes first: neither always runs on a machine the other just warmed.
  for (const checkout of round % 2 === 0 ? checkouts : [...checkouts].reverse()) {
    rmSync(join(checkout.dir, 'node_modules/.cache/unplugin-critical-css'), { recursive: true, force: true })
    const run = demo(checkout)
    checkout.cold.push(run)
    console.error(`  cold ${round + 1}, ${checkout.name}: ${PLAYGROUNDS.map((name) => `${name} ${(run.plugin[name].ms / 1000).toFixed(2)} s`).join(', ')}`)
  }
}
for (const checkout of checkouts) checkout.warm = demo(checkout)

const seconds = (ms: number | null): string => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`)
const range = (values: number[]): string => `${seconds(median(values))} (${seconds(Math.min(...values))}–${seconds(Math.max(...values))})`
console.log(`\nnpm run demo, ${ROUNDS} cold run(s) (cache removed) and one warm; ${cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; node ${process.version}\n`)
console.log(
  table(
    ['playground', 'code', 'plugin time, cold: median (min–max)', 'pages rendered, cold', 'plugin time, warm (the peer)', 'pages from the cache, warm', 'the whole command, cold'],
    PLAYGROUNDS.flatMap((name) =>
      checkouts.map((checkout) => [
        name,
        checkout.name,
        range(checkout.cold.map((run) => run.plugin[name].ms)),
        checkout.cold.map((run) => run.plugin[name].rendered).join(', '),
        seconds(checkout.warm!.plugin[name].ms),
        String(checkout.warm!.plugin[name].cached),
        range(checkout.cold.map((run) => run.wallMs)),
      ]),
    ),
  ),
)

// Where this checkout's cold time went: each step's median over the rounds (ms).
const ours = checkouts[0]!
// A step the demo could not time is null in its JSON.
const number = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN)
const round = (values: number[]): string => {
  const middle = median(values.filter((value) => Number.isFinite(value)))
  return middle === null ? '—' : String(Math.round(middle))
}
for (const name of PLAYGROUNDS) {
  const spent = ours.cold.map((run) => run.plugin[name].spent).filter((each) => each !== null)
  if (spent.length === 0) continue
  console.log(`\n${name}, ${ours.name}: where the cold plugin time went, median ms ("at": from the plugin run's start; negative while the bundler worked)\n`)
  const buildSteps = Object.keys(spent[0]!.build)
  console.log(table(buildSteps, [buildSteps.map((step) => round(spent.map((each) => number(each.build[step]))))]))
  const columns = Object.keys(spent[0]!.pages[0] ?? {}).filter((column) => column !== 'page')
  const pages = spent[0]!.pages.map((row) => String(row.page))
  console.log()
  console.log(
    table(
      ['page', ...columns],
      pages.map((page) => [page, ...columns.map((column) => round(spent.map((each) => number(each.pages.find((row) => row.page === page)?.[column]))))]),
    ),
  )
}

console.log()
for (const name of PLAYGROUNDS) {
  const ms = median(ours.cold.map((run) => run.plugin[name].ms))!
  console.log(`${ms <= TARGET_MS ? 'PASS' : 'FAIL'} ${name}: cold plugin time ≤ ${TARGET_MS / 1000} s at the median: ${seconds(ms)}`)
}
const renderedWarm = PLAYGROUNDS.reduce((sum, name) => sum + ours.warm!.plugin[name].rendered, 0)
const launchedWarm = PLAYGROUNDS.reduce((sum, name) => sum + number(ours.warm!.plugin[name].spent?.build['browsers launched']), 0)
console.log(`${renderedWarm === 0 && launchedWarm === 0 ? 'PASS' : 'FAIL'} the warm run renders nothing and starts no browser: ${renderedWarm} page(s) rendered, ${launchedWarm} browser(s) launched`)
