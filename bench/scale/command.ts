/**
 * The folder command as a user runs it: package.json's `critical-css` bin (dist/, rebuilt
 * first when src/ is newer, since a stale build would measure old code), in a process group
 * of its own, embedded mode (the service's variables unset), no browser flags. Around it: the
 * wall time, the peak memory of its whole process tree (Chromium included) sampled from /proc,
 * whether a Chromium ever ran below it, and every stderr line with the time it arrived.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BuildReport } from '../../src/core/report.ts'
import { chromiumProcesses } from '../../test/fixtures/process-tree.ts'
import { watchTree, type TreePeak } from '../embedded/tree.ts'
import { newest } from '../newest-file.ts'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
/** The service's variables: unset, so the command runs in embedded mode whatever the shell has. */
const SERVICE_ENV = ['CRITICAL_CSS_BASE_URL', 'CRITICAL_CSS_API_TOKEN', 'CRITICAL_CSS_SITE_URL']
/** The sampling period for memory; a browser launched and closed between two samples would be missed. */
const SAMPLE_MS = 200

export interface Cli {
  label: string
  argv: string[]
  /** What to know about the code measured (a rebuild, or tsx on the source). */
  note: string | null
}

/**
 * The command to measure. `BENCH_CLI=source` runs tsx on src/cli/critical-css.ts (no build;
 * useful while someone else's measurement uses dist/, which `npm run build` empties first).
 */
export function resolveCli(): Cli {
  const source = join(REPO, 'src/cli/critical-css.ts')
  if (process.env.BENCH_CLI === 'source') {
    return { label: 'tsx src/cli/critical-css.ts', argv: [join(REPO, 'node_modules/.bin/tsx'), source], note: 'BENCH_CLI=source: tsx on src/, not the built bin users run' }
  }
  const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }
  const bin = join(REPO, manifest.bin['critical-css']!)
  const src = newest(join(REPO, 'src'))
  let note: string | null = null
  if (!existsSync(bin) || statSync(bin).mtimeMs < src.mtimeMs) {
    const why = existsSync(bin) ? `${relative(REPO, src.path)} is newer than ${relative(REPO, bin)}` : `${relative(REPO, bin)} is missing`
    process.stderr.write(`${why}: npm run build …\n`)
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] })
    note = `rebuilt dist/ first (${why})`
  }
  return { label: `node ${relative(REPO, bin)} (package.json bin)`, argv: [process.execPath, bin], note }
}

export interface Line {
  /** ms since the command was spawned. */
  at: number
  text: string
}

export interface CommandRun {
  wallMs: number
  /** The exit code, or how the run ended otherwise. */
  exit: string
  report: BuildReport | null
  lines: Line[]
  peak: TreePeak
  /** Most Chromium browser processes (no --type) seen at once below the command. */
  browsers: number
}

/** The process group of the run in progress, for {@link killRunning}. */
let runningGroup: number | null = null

/** Ends the run in progress with its browser (Ctrl-C on the bench). */
export function killRunning(): void {
  if (runningGroup === null) return
  try {
    process.kill(-runningGroup, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** Runs `cli <siteDir> …args --report <reportFile>` from `cwd`; kills it with its tree after `timeoutMs`. */
export async function runFolderCommand(cli: Cli, siteDir: string, args: readonly string[], options: { cwd: string; reportFile: string; timeoutMs: number }): Promise<CommandRun> {
  const env = { ...process.env }
  for (const name of SERVICE_ENV) delete env[name]
  const began = performance.now()
  // stdout is ignored: the command writes its report there only with --json.
  const child = spawn(cli.argv[0]!, [...cli.argv.slice(1), siteDir, ...args, '--report', options.reportFile], {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  runningGroup = child.pid ?? null
  const lines: Line[] = []
  let partial = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const at = performance.now() - began
    const parts = (partial + chunk).split('\n')
    partial = parts.pop()!
    for (const text of parts) lines.push({ at, text })
  })
  const tree = child.pid === undefined ? null : watchTree(child.pid, SAMPLE_MS)
  let browsers = 0
  const browserWatch = setInterval(() => {
    if (child.pid !== undefined) browsers = Math.max(browsers, chromiumProcesses(child.pid).browser ?? 0)
  }, SAMPLE_MS)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    killRunning()
  }, options.timeoutMs)
  const exit = await new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`spawn error: ${error.message}`))
    child.once('close', (code, signal) => resolve(timedOut ? `killed after ${options.timeoutMs / 1000} s` : code !== null ? String(code) : `signal ${signal}`))
  })
  const wallMs = performance.now() - began
  clearTimeout(timer)
  clearInterval(browserWatch)
  runningGroup = null
  if (partial) lines.push({ at: wallMs, text: partial })
  const peak = tree?.stop() ?? { rssBytes: 0, pssBytes: 0, processes: 0, samples: 0, cpuMs: 0 }
  const report = existsSync(options.reportFile) ? (JSON.parse(readFileSync(options.reportFile, 'utf8')) as BuildReport) : null
  return { wallMs, exit, report, lines, peak, browsers }
}
