/**
 * The README's main command as a newcomer runs it (issue 36): `npm run demo`, each time in a
 * fresh child process with the plugin's cache removed first (cold: the embedded service and
 * Chromium start, every page is rendered), BENCH_ROUNDS times (default 3), then once more
 * with the cache kept (warm: the peer, every page from the cache, no browser). The figure is
 * the plugin's own time per playground, from the report each build writes
 * (playground/<name>/report.json, `ms`: the summary line's "X s"), beside the whole command's
 * wall time. `CRITICAL_CSS_*` variables are not passed on: the demo runs in embedded mode.
 *
 * Target (issue 36): each playground's cold plugin time ≤ 1.5 s at the median; the warm run
 * renders nothing.
 *
 *   npm run bench:demo
 *   BENCH_ROUNDS=5 npm run bench:demo
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { BuildReport } from '../src/core/report.ts'
import { median, table } from './fcp/report.ts'

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
const TARGET_MS = 1500
const PLAYGROUNDS = ['vite', 'webpack'] as const
const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CACHE = fileURLToPath(new URL('../node_modules/.cache/unplugin-critical-css/', import.meta.url))
const ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CRITICAL_CSS_')))

interface Run {
  wallMs: number
  /** Per playground: the plugin's own time and where its pages came from. */
  plugin: Record<(typeof PLAYGROUNDS)[number], { ms: number; rendered: number; cached: number }>
}

function demo(): Run {
  const started = performance.now()
  const child = spawnSync('npm', ['run', 'demo', '--silent'], { cwd: ROOT, env: ENV, encoding: 'utf8' })
  const wallMs = performance.now() - started
  if (child.status !== 0) throw new Error(`npm run demo exited ${child.status}:\n${child.stderr}${child.stdout}`)
  const plugin = Object.fromEntries(
    PLAYGROUNDS.map((name) => {
      const report = JSON.parse(readFileSync(fileURLToPath(new URL(`../playground/${name}/report.json`, import.meta.url)), 'utf8')) as BuildReport
      const count = (source: string): number => report.pages.filter((page) => page.source === source).length
      return [name, { ms: report.ms, rendered: count('embedded'), cached: count('cache') }]
    }),
  ) as Run['plugin']
  return { wallMs, plugin }
}

const loadAtStart = loadavg()[0]!
const cold: Run[] = []
for (let round = 0; round < ROUNDS; round++) {
  rmSync(CACHE, { recursive: true, force: true })
  cold.push(demo())
  console.error(`  cold ${round + 1}: ${PLAYGROUNDS.map((name) => `${name} ${(cold.at(-1)!.plugin[name].ms / 1000).toFixed(2)} s`).join(', ')}`)
}
const warm = demo()

const seconds = (ms: number | null): string => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`)
const range = (values: number[]): string => `${seconds(median(values))} (${seconds(Math.min(...values))}–${seconds(Math.max(...values))})`
console.log(`\nnpm run demo, ${ROUNDS} cold run(s) (cache removed) and one warm; ${cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; node ${process.version}\n`)
console.log(
  table(
    ['playground', 'plugin time, cold: median (min–max)', 'pages rendered, cold', 'plugin time, warm (the peer)', 'pages from the cache, warm'],
    PLAYGROUNDS.map((name) => [
      name,
      range(cold.map((run) => run.plugin[name].ms)),
      cold.map((run) => run.plugin[name].rendered).join(', '),
      seconds(warm.plugin[name].ms),
      String(warm.plugin[name].cached),
    ]),
  ),
)
console.log(`\nThe whole command, cold: ${range(cold.map((run) => run.wallMs))}; warm: ${seconds(warm.wallMs)}\n`)
for (const name of PLAYGROUNDS) {
  const ms = median(cold.map((run) => run.plugin[name].ms))!
  console.log(`${ms <= TARGET_MS ? 'PASS' : 'FAIL'} ${name}: cold plugin time ≤ ${TARGET_MS / 1000} s at the median: ${seconds(ms)}`)
}
const renderedWarm = PLAYGROUNDS.reduce((sum, name) => sum + warm.plugin[name].rendered, 0)
console.log(`${renderedWarm === 0 ? 'PASS' : 'FAIL'} the warm run renders nothing: ${renderedWarm} page(s) rendered`)
