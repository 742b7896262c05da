/**
 * What embedded mode costs as a site grows: the Vite playground at 3, 30 and 100 pages
 * (the three originals plus copies, each with its own title and heading), built with the
 * plugin and no service configured, so it starts the reference service in-process and
 * renders every page in the local Chromium, min(4, cores) at a time. Cold: an empty cache
 * dir; warm: the same build again on that cache, every page from it. Beside it, the named
 * peer on the same pages: a plugin-less Vite build of the same site (also the baseline),
 * then beasties over each emitted HTML file (read, processed, written back; one instance).
 *
 * Every build and the beasties pass run in a child process of their own
 * (bench/embedded/one-build.ts). Wall time is taken in the child around the build call
 * (beasties: around its loop over the pages), so Node's start-up is not in it; the plugin's
 * module loading, the browser's launch and the build server are. Peak memory: the parent
 * samples the child's whole process tree (its Chromium included) every 100 ms from /proc;
 * RSS summed over the tree counts shared pages once per process (an upper bound), PSS
 * splits them (what the tree costs the machine; read every 1 s, as it is costly to read);
 * beside them the child's own maxRSS. CPU: of the whole tree after start-up, each
 * process's utime + stime as last sampled (the child's own cutime misses Chromium's
 * renderers, about half of a cold build's CPU); divided by wall, how many of the cores
 * the job kept busy. "others' cores": what the rest of the machine kept busy during the
 * child's life (/proc/stat less the tree's and the parent's CPU); over 0.25 the job is
 * called disturbed.
 * "added" is what the critical CSS step adds to the plugin-less build: ours minus it,
 * beasties' whole pass. The growth table divides each figure at one size by the one at
 * the size before, and fits wall = fixed + pages × per page over all sizes.
 * One throw-away round of each kind on the smallest site comes first (Node, tsx and
 * Chromium's own warm-up is not what is measured); then BENCH_ROUNDS rounds (default 1),
 * medians. On 2 cores a round at 100 pages takes about 3 minutes, the default run about 4
 * to 5. Linux only (/proc).
 *
 *   npm run bench:embedded
 *   BENCH_PAGES=3,30 BENCH_ROUNDS=3 npm run bench:embedded
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ENV } from '../src/core/options.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import type { Job, JobResult } from './embedded/job.ts'
import { makeSite, type GeneratedSite } from './embedded/site.ts'
import { liveTree, machineBusyMs, watchTree, type TreePeak } from './embedded/tree.ts'

const PAGE_COUNTS = (process.env.BENCH_PAGES ?? '3,30,100').split(',').map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const SAMPLE_MS = 100
/** A child that runs this long is stuck: it is stopped and the bench fails. */
const CHILD_TIMEOUT_MS = 15 * 60_000
const KILL_GRACE_MS = 5000
/** Cores other processes may keep busy during a job before its figures are called disturbed. */
const DISTURBED_CORES = 0.25
const REPO = fileURLToPath(new URL('..', import.meta.url))
const ONE_BUILD = fileURLToPath(new URL('./embedded/one-build.ts', import.meta.url))
const MB = 1024 * 1024

const MODES = ['ours cold', 'ours warm', 'vite, no plugin', 'beasties'] as const
type Mode = (typeof MODES)[number]

interface Measured {
  result: JobResult
  tree: TreePeak
  /** CPU time of the child's tree from the start of the measured span to its end, ms. */
  cpuMs: number
  /** Cores other processes of the machine kept busy during the child's life (not this bench's). */
  othersCores: number
}

if (process.platform !== 'linux') {
  console.error('bench:embedded samples process trees from /proc: Linux only.')
  process.exit(1)
}
if (PAGE_COUNTS.some((count) => !Number.isInteger(count) || count < 1) || !Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error('BENCH_PAGES: page counts ≥ 1, comma-separated (default 3,30,100); BENCH_ROUNDS: an integer ≥ 1.')
  process.exit(1)
}
const chromium = findChromium()
if (chromium === null) {
  console.error(INSTALL_HINT)
  process.exit(1)
}
// Embedded mode: the children inherit this environment, with no service configured.
for (const name of Object.values(ENV)) delete process.env[name]

const roots = new Set<string>()
/** The job's process while one runs: stopped with the bench (its browser closes with it). */
let running: ChildProcess | null = null
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    const child = running
    const cleanUp = (): never => {
      for (const root of roots) rmSync(root, { recursive: true, force: true })
      process.exit(130)
    }
    if (child === null || child.exitCode !== null || child.signalCode !== null) cleanUp()
    child!.once('close', cleanUp)
    child!.kill('SIGTERM')
    setTimeout(cleanUp, KILL_GRACE_MS)
  })
}

function version(name: string): string {
  const manifest = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url))
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

function chromiumVersion(path: string): string {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return `${path} (version unknown)`
  }
}

/** Runs one job in a child process while sampling its process tree's memory. */
function runJob(job: Job): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const [busyBefore, ownBefore, startedAt] = [machineBusyMs(), process.cpuUsage(), performance.now()]
    const child = spawn(process.execPath, ['--import', 'tsx', ONE_BUILD, JSON.stringify(job)], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
    running = child
    const watch = watchTree(child.pid!, SAMPLE_MS)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGTERM')
      // The child and what is still under it after the grace period (a browser it could not close).
      setTimeout(() => {
        for (const pid of liveTree(child.pid!).reverse()) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // already gone
          }
        }
      }, KILL_GRACE_MS).unref()
    }, CHILD_TIMEOUT_MS)
    child.on('error', (error) => {
      clearTimeout(timer)
      watch.stop()
      reject(error)
    })
    child.on('close', (code, signal) => {
      running = null
      clearTimeout(timer)
      const tree = watch.stop()
      const lifeMs = performance.now() - startedAt
      const own = process.cpuUsage(ownBefore)
      const busy = machineBusyMs() - busyBefore - (own.user + own.system) / 1000
      const last = stdout.trim().split('\n').at(-1) ?? ''
      if (code !== 0 || timedOut) {
        const why = timedOut ? `timed out after ${CHILD_TIMEOUT_MS / 1000} s` : `exited with ${code ?? signal}`
        return reject(new Error(`${job.kind} job ${why}:\n${stderr.trim().split('\n').slice(-20).join('\n')}`))
      }
      try {
        const result = JSON.parse(last) as JobResult
        const lifeCpuMs = Math.max(tree.cpuMs, result.lifeCpuMs)
        resolve({ result, tree, cpuMs: lifeCpuMs - result.startupCpuMs, othersCores: Math.max(0, busy - lifeCpuMs) / lifeMs })
      } catch {
        reject(new Error(`${job.kind} job answered no result:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`))
      }
    })
  })
}

/** One round at one size: the plugin-less build, beasties over its output, ours cold, ours warm. */
async function round(site: GeneratedSite, cacheDir: string, only?: readonly Mode[]): Promise<Partial<Record<Mode, Measured>>> {
  const out: Partial<Record<Mode, Measured>> = {}
  const wanted = (mode: Mode): boolean => !only || only.includes(mode)
  const plainDir = join(site.root, 'dist-plain')
  if (wanted('vite, no plugin') || wanted('beasties')) {
    out['vite, no plugin'] = await runJob({ kind: 'vite', site: site.site, inputs: site.inputs, outDir: plainDir })
  }
  if (wanted('beasties')) out.beasties = await runJob({ kind: 'beasties', distDir: plainDir })
  const ours = (report: string): Job => ({ kind: 'ours', site: site.site, inputs: site.inputs, outDir: join(site.root, 'dist'), cacheDir, report: join(site.root, report) })
  if (wanted('ours cold')) out['ours cold'] = await runJob(ours('report-cold.json'))
  if (wanted('ours warm')) out['ours warm'] = await runJob(ours('report-warm.json'))
  return out
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** "n" when every round agrees, else "min–max". */
function span(values: (number | null)[]): string {
  const numbers = values.filter((value): value is number => value !== null)
  if (numbers.length === 0) return ''
  const [low, high] = [Math.min(...numbers), Math.max(...numbers)]
  return low === high ? String(low) : `${low}–${high}`
}

/** Least squares of wall (ms) on pages: [fixed ms, ms per page]. */
function fit(points: [number, number][]): [number, number] | null {
  if (points.length < 2) return null
  const n = points.length
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n
  const sxx = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0)
  if (sxx === 0) return null
  const slope = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0) / sxx
  return [meanY - slope * meanX, slope]
}

const label = (mode: Mode): string => (mode === 'beasties' ? 'beasties (after vite)' : mode)
const seconds = (ms: number): string => (ms / 1000).toFixed(2)
const ratio = (after: number, before: number): string => (before > 0 ? `${(after / before).toFixed(2)}×` : '')

const started = performance.now()
const counts = [...new Set(PAGE_COUNTS)].sort((a, b) => a - b)
/** Every round's measurements, by page count and mode. */
const results = new Map<number, Record<Mode, Measured[]>>()
const troubles: string[] = []
/** Jobs during which other processes kept the machine busy. */
const disturbed: string[] = []
const loadBefore = loadavg()[0]!
const progress = (message: string): void => void process.stderr.write(`${message}\n`)

try {
  // Throw-away round on the smallest site: tsx's transform cache, the OS file cache, Chromium's first launch.
  const warmup = await makeSite(counts[0]!)
  roots.add(warmup.root)
  progress(`warm-up: ${counts[0]} pages, one job of each kind (not measured)`)
  await round(warmup, join(warmup.root, 'cache-warmup'), ['vite, no plugin', 'beasties', 'ours cold'])
  await rm(warmup.root, { recursive: true, force: true })
  roots.delete(warmup.root)

  for (const pages of counts) {
    const site = await makeSite(pages)
    roots.add(site.root)
    const byMode = { 'ours cold': [], 'ours warm': [], 'vite, no plugin': [], beasties: [] } as Record<Mode, Measured[]>
    results.set(pages, byMode)
    try {
      for (let r = 0; r < ROUNDS; r++) {
        const measured = await round(site, join(site.root, `cache-${r}`))
        for (const mode of MODES) {
          const one = measured[mode]!
          byMode[mode].push(one)
          const { result } = one
          progress(`  ${pages} pages, round ${r + 1}/${ROUNDS}, ${mode}: ${seconds(result.wallMs)} s, tree peak ${(one.tree.pssBytes / MB).toFixed(0)} MB PSS, others' cores ${one.othersCores.toFixed(2)}`)
          if (one.othersCores > DISTURBED_CORES) disturbed.push(`${pages} pages, ${mode}, round ${r + 1}: ${one.othersCores.toFixed(2)} cores`)
          for (const problem of result.problems) troubles.push(`${pages} pages, ${mode}, round ${r + 1}: ${problem}`)
          if (result.pages !== pages) troubles.push(`${pages} pages, ${mode}, round ${r + 1}: ${result.pages} pages handled`)
          if (mode === 'ours warm' && result.fromCache !== result.pages) troubles.push(`${pages} pages, ours warm, round ${r + 1}: ${result.fromCache}/${result.pages} pages from cache`)
          if (mode === 'ours cold' && result.fromCache !== 0) troubles.push(`${pages} pages, ours cold, round ${r + 1}: ${result.fromCache} pages from cache on an empty cache dir`)
        }
      }
    } finally {
      await rm(site.root, { recursive: true, force: true })
      roots.delete(site.root)
    }
  }
} finally {
  for (const root of roots) await rm(root, { recursive: true, force: true })
}

// ─── report ───────────────────────────────────────────────────────────────────────────

const cpu = cpus()
console.log(
  `\nEmbedded mode at ${counts.join(', ')} pages, median of ${ROUNDS} round${ROUNDS > 1 ? 's' : ''}: ` +
    `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'} (available parallelism ${availableParallelism()}), ${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM, Linux ${release()}; ` +
    `Node ${process.version}, Vite ${version('vite')}, beasties ${version('beasties')}, playwright-core ${version('playwright-core')}, ${chromiumVersion(chromium)}; ` +
    `1-min load average ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end`,
)

interface Summary {
  wallMs: number
  ownMs: number | null
  rssBytes: number
  pssBytes: number
  nodeRssBytes: number
  processes: number
  cpuMs: number
  othersCores: number
}

const summaries = new Map<number, Record<Mode, Summary>>()
for (const [pages, byMode] of results) {
  const entry = {} as Record<Mode, Summary>
  for (const mode of MODES) {
    const list = byMode[mode]
    const own = list.map(({ result }) => result.ownMs).filter((ms): ms is number => ms !== null)
    entry[mode] = {
      wallMs: median(list.map(({ result }) => result.wallMs)),
      ownMs: own.length ? median(own) : null,
      rssBytes: median(list.map(({ tree }) => tree.rssBytes)),
      pssBytes: median(list.map(({ tree }) => tree.pssBytes)),
      nodeRssBytes: median(list.map(({ result }) => result.maxRssBytes)),
      processes: Math.max(...list.map(({ tree }) => tree.processes)),
      cpuMs: median(list.map(({ cpuMs }) => cpuMs)),
      othersCores: Math.max(...list.map(({ othersCores }) => othersCores)),
    }
  }
  summaries.set(pages, entry)
}

/** What the critical CSS step adds to the plugin-less build; null for the baseline. */
function added(pages: number, mode: Mode): number | null {
  const entry = summaries.get(pages)!
  if (mode === 'vite, no plugin') return null
  if (mode === 'beasties') return entry.beasties.wallMs
  return entry[mode].wallMs - entry['vite, no plugin'].wallMs
}

console.log('\nPer build. wall: in the child, around the build (beasties: its pass over the built pages); added: over the plugin-less build; plugin: the plugin\'s own time (its report); CPU: the child\'s and its Chromium\'s, cores busy = CPU ÷ wall; others\' cores: the rest of the machine meanwhile (worst round); peak: the process tree (Node + Chromium), sampled every 100 ms (PSS every 1 s)')
console.table(
  counts.flatMap((pages) =>
    MODES.map((mode) => {
      const summary = summaries.get(pages)![mode]
      const list = results.get(pages)![mode]
      const extra = added(pages, mode)
      return {
        pages,
        tool: label(mode),
        'wall s': seconds(summary.wallMs),
        'ms/page': (summary.wallMs / pages).toFixed(0),
        'added s': extra === null ? '' : seconds(extra),
        'added ms/page': extra === null ? '' : (extra / pages).toFixed(0),
        'plugin s': summary.ownMs === null ? '' : seconds(summary.ownMs),
        'CPU s': seconds(summary.cpuMs),
        'cores busy': (summary.cpuMs / summary.wallMs).toFixed(2),
        "others' cores": summary.othersCores.toFixed(2),
        'peak MB RSS': (summary.rssBytes / MB).toFixed(0),
        'peak MB PSS': (summary.pssBytes / MB).toFixed(0),
        'node maxRSS MB': (summary.nodeRssBytes / MB).toFixed(0),
        procs: summary.processes,
        'from cache': span(list.map(({ result }) => result.fromCache)),
        inlined: span(list.map(({ result }) => result.inlined)),
      }
    }),
  ),
)

if (counts.length >= 2) {
  const steps = counts.slice(1).map((pages, i) => [counts[i]!, pages] as const)
  console.log(
    `\nGrowth: each figure at one size ÷ the one at the size before (pages ${steps.map(([a, b]) => `${b}/${a} = ${(b / a).toFixed(2)}×`).join(', ')}). ` +
      'Linear cost: wall grows as pages do and ms/page stays 1.00×. Fit: wall = fixed + pages × per page, least squares over all sizes.',
  )
  console.table(
    MODES.map((mode) => {
      const row: Record<string, string> = { tool: label(mode) }
      for (const [a, b] of steps) {
        const [before, after] = [summaries.get(a)![mode], summaries.get(b)![mode]]
        row[`wall ${b}/${a}`] = ratio(after.wallMs, before.wallMs)
        row[`ms/page ${b}/${a}`] = ratio(after.wallMs / b, before.wallMs / a)
      }
      for (const [a, b] of steps) {
        const [before, after] = [added(a, mode), added(b, mode)]
        // Ours warm minus the plugin-less build is within the noise, negative at times: no ratio of that.
        row[`added ${b}/${a}`] = before === null || after === null || before <= 0 || after <= 0 ? '' : ratio(after, before)
      }
      const [first, last] = [counts[0]!, counts.at(-1)!]
      row[`peak PSS ${last}/${first}`] = ratio(summaries.get(last)![mode].pssBytes, summaries.get(first)![mode].pssBytes)
      const line = fit(counts.map((pages) => [pages, summaries.get(pages)![mode].wallMs]))
      row['fit: fixed s'] = line ? seconds(line[0]) : ''
      row['fit: ms/page'] = line ? line[1].toFixed(1) : ''
      return row
    }),
  )
}

if (troubles.length) console.log(`\n${troubles.length} problem(s):\n${troubles.map((trouble) => `  ${trouble}`).join('\n')}`)
else console.log('\nEvery page inlined by both tools; warm builds took every page from the cache.')
if (disturbed.length) {
  console.log(
    `\nDisturbed: other processes kept more than ${DISTURBED_CORES} core busy during ${disturbed.length} job(s); their times are not this code's alone, rerun on a quiet machine:\n` +
      disturbed.map((line) => `  ${line}`).join('\n'),
  )
}
console.log(`\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s.`)
