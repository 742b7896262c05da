/**
 * The isolation run (issue 15): one hostile tenant beside a normal one, in the real
 * service and Chromium on loopback. For each kind of hostile page
 * (test/fixtures/hostile-pages.ts) one round on a fresh service with 2 workers and a 20 s
 * job deadline: the hostile token submits BENCH_JOBS jobs of that page at once, the normal
 * token BENCH_NORMAL jobs of a small page, one every 2.5 s from the same moment, then 2
 * more once every hostile job has ended. The peer is `baseline`: the same normal jobs
 * with no hostile tenant.
 *
 * Latency is each job's own created_at → updated_at (queue wait + render, by the service's
 * clock), not what a poller saw; a job's wait is that less its last render (duration_ms):
 * time in the queue and any render of it that preemption threw away. Memory is VmRSS summed over this process (the service
 * runs in it) and all its descendants (Chromium's browser, zygotes, renderers), sampled
 * every 200 ms from /proc on a worker thread: an upper bound, shared pages counted once
 * per process. Memory pages grow to BENCH_CEILING_MIB (default 2048) per renderer at most,
 * then spin, unless something bounds them first. The last column is the CPU the rest of the
 * machine used meanwhile (its busy time from /proc/stat less this tree's), in cores: on a
 * shared 2-core machine, a round with other work in it is slower for reasons of its own.
 *
 *   npm run bench:isolation
 *   BENCH_KINDS=pushState,console BENCH_JOBS=2 BENCH_NORMAL=4 npm run bench:isolation
 *
 * Linux only (/proc), and a system Chrome/Chromium.
 */
import { execFileSync } from 'node:child_process'
import { findChromium } from '../src/engine/find-browsers.ts'
import { HOSTILE_DESCRIPTIONS, HOSTILE_KINDS, runIsolation, startHostilePages, type HostileKind, type IsolationRun } from '../test/fixtures/hostile-pages.ts'

const KINDS = (process.env.BENCH_KINDS ? process.env.BENCH_KINDS.split(',') : [...HOSTILE_KINDS]) as HostileKind[]
const HOSTILE_JOBS = Number(process.env.BENCH_JOBS ?? 4)
const NORMAL_JOBS = Number(process.env.BENCH_NORMAL ?? 8)
const NORMAL_AFTER = 2
const NORMAL_GAP_MS = 2500
const CEILING_MIB = Number(process.env.BENCH_CEILING_MIB ?? 2048)
const JOB_TIMEOUT_MS = 20_000
const WORKERS = 2

const chromium = findChromium()
if (process.platform !== 'linux' || !chromium) {
  console.error(process.platform !== 'linux' ? 'bench:isolation samples process trees from /proc: Linux only.' : 'No Chromium: `apt-get install -y chromium` or set CHROME_PATH.')
  process.exit(1)
}
const unknown = KINDS.filter((kind) => !(HOSTILE_KINDS as readonly string[]).includes(kind))
if (unknown.length > 0) {
  console.error(`BENCH_KINDS: unknown ${unknown.join(', ')}; known: ${HOSTILE_KINDS.join(', ')}`)
  process.exit(1)
}

const progress = (line: string): void => void process.stderr.write(`${line}\n`)
const gib = (bytes: number): string => (bytes / 1024 ** 3).toFixed(2)
const seconds = (ms: number | undefined): string => (ms === undefined ? '—' : (ms / 1000).toFixed(1))
const median = (values: number[]): number | undefined => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]
const tally = (codes: string[]): string =>
  Object.entries(codes.reduce<Record<string, number>>((counts, code) => ({ ...counts, [code]: (counts[code] ?? 0) + 1 }), {}))
    .map(([code, count]) => `${code}×${count}`)
    .join(' ') || '—'

function commitOf(paths: string[]): string {
  try {
    const commit = execFileSync('git', ['log', '-1', '--format=%h', '--', ...paths], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', ...paths], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return dirty ? `${commit} + uncommitted changes (${dirty.split('\n').length} files under ${paths.join(', ')})` : commit
  } catch {
    return 'unknown'
  }
}

interface Row {
  name: string
  run: IsolationRun
}

const rows: Row[] = []
const pages = await startHostilePages({ ceilingMiB: CEILING_MIB })
const started = Date.now()
try {
  for (const kind of [null, ...KINDS]) {
    const name = kind ?? 'baseline'
    progress(`\n${name}${kind ? `: ${HOSTILE_DESCRIPTIONS[kind]}` : ': no hostile tenant'}`)
    const run = await runIsolation(pages, {
      hostile: kind ? Array.from({ length: HOSTILE_JOBS }, () => kind) : [],
      normal: NORMAL_JOBS,
      normalGapMs: NORMAL_GAP_MS,
      normalAfter: kind ? NORMAL_AFTER : 0,
      workers: WORKERS,
      jobTimeoutMs: JOB_TIMEOUT_MS,
      progress: (line) => progress(`  ${line}`),
    })
    rows.push({ name, run })
  }
} finally {
  await pages.close()
}

// Whole folders: the engine and the queue are several files each, and a stamp must not miss one.
const engineAt = commitOf(['src/engine/', 'src/service/'])
console.log(
  `\nIsolation run: ${WORKERS} workers, job deadline ${JOB_TIMEOUT_MS / 1000} s; per round ${HOSTILE_JOBS} hostile jobs at once, ${NORMAL_JOBS} normal jobs one every ${NORMAL_GAP_MS / 1000} s, ` +
    `${NORMAL_AFTER} more once the hostile ones ended; memory pages capped at ${CEILING_MIB} MiB per renderer. Node ${process.version}, ${execFileSync(chromium, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()}, ` +
    `engine and queue at ${engineAt}; ${Math.round((Date.now() - started) / 1000)} s in all.\n`,
)
const baseline = rows.find((row) => row.name === 'baseline')!
const baselineP50 = median(baseline.run.jobs.filter((job) => job.tenant === 'normal' && job.status === 'done').map((job) => job.ms!))
console.log("| hostile tenant | normal done in deadline | normal p50 / max (s) | p50 vs baseline | normal longest wait (s) | normal jobs after it ended | hostile outcomes | tree RSS idle / peak / settled (GiB) | slowest API answer | longest event-loop stall | other processes' CPU (cores) |")
console.log('|---|---|---|---|---|---|---|---|---|---|---|')
for (const { name, run } of rows) {
  const during = run.jobs.filter((job) => job.tenant === 'normal' && job.phase === 'during')
  const after = run.jobs.filter((job) => job.tenant === 'normal' && job.phase === 'after')
  const inDeadline = (job: (typeof during)[number]): boolean => job.status === 'done' && job.ms !== null && job.ms <= run.jobTimeoutMs
  const done = during.filter((job) => job.status === 'done').map((job) => job.ms!)
  const p50 = median(done)
  const late = during.filter((job) => job.status === 'done' && !inDeadline(job)).length
  const failedNormal = tally(during.filter((job) => job.status !== 'done').map((job) => job.code ?? job.status))
  const normal = `${during.filter(inDeadline).length}/${during.length}${late ? ` (+${late} late)` : ''}${failedNormal !== '—' ? `, ${failedNormal}` : ''}`
  const latency = done.length ? `${seconds(p50)} / ${seconds(Math.max(...done))}` : '— (none done)'
  const ratio = p50 !== undefined && baselineP50 ? `${(p50 / baselineP50).toFixed(1)}×` : '—'
  const waits = during.filter((job) => job.ms !== null && job.renderMs !== null).map((job) => job.ms! - job.renderMs!)
  const wait = waits.length ? seconds(Math.max(...waits)) : '—'
  const afterCell = name === 'baseline' ? '—' : `${after.filter(inDeadline).length}/${after.length}${after.some((job) => job.status !== 'done') ? `, ${tally(after.filter((job) => job.status !== 'done').map((job) => job.code ?? job.status))}` : ''}`
  const hostile = tally(run.jobs.filter((job) => job.tenant === 'hostile').map((job) => (job.status === 'done' ? 'done' : (job.code ?? job.status))))
  const memory = `${gib(run.idleRssBytes)} / ${gib(run.peakRssBytes)} / ${gib(run.settledRssBytes)}`
  console.log(`| ${name} | ${normal} | ${latency} | ${ratio} | ${wait} | ${afterCell} | ${hostile} | ${memory} | ${(run.slowestAnswerMs / 1000).toFixed(2)} s | ${(run.longestStallMs / 1000).toFixed(2)} s | ${run.othersCores.toFixed(1)} |`)
}
// What the queue, the engine and the egress proxy said meanwhile (preemptions, crashes, relaunches, kills, refusals).
const ROUTINE = new Set(['listening', 'request', 'closed', 'job_done', 'job_failed'])
console.log('\nEvents per round (service log lines other than request, listening, closed, job_done, job_failed):')
for (const { name, run } of rows) {
  const lines = run.log.filter((line) => !ROUTINE.has(String(line.event)))
  const refused = [...new Set(lines.filter((line) => line.event === 'egress_refused').map((line) => `${String(line.host)}: ${String(line.reason)}`))]
  console.log(`- ${name}: ${tally(lines.map((line) => String(line.event ?? '?')))}${refused.length ? ` (refused: ${refused.join('; ')})` : ''}`)
}
