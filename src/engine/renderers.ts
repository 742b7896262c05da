/**
 * What one page's renderer may take from the machine, so that a tenant's page cannot grow the
 * process tree without end or starve the service's event loop and the other renderers:
 *
 * - memory: V8's heap is capped by a flag (a page that allocates objects without end dies at
 *   512 MiB instead of 4 GiB), and on Linux the renderers get a data limit (RLIMIT_DATA, 2 GiB:
 *   what the heap cap does not see, array buffers, DOM, decoded images, fails to allocate past
 *   it). The limit goes on the zygote the renderers are forked from, so each renderer has it
 *   from its first instruction, and on every renderer seen without it;
 * - CPU: a renderer that keeps more than a fifth of a core busy for 3 s in a row runs at the
 *   lowest priority (nice 19) from then on: it still renders, after everyone else.
 *
 * Only renderers (and the zygote that forks them) are bounded: they run the pages' code. The
 * browser, GPU and network processes are the engine's own and keep what they have.
 *
 * With Chromium's sandbox on (the engine asks for it unless it runs as root), the zygote and
 * the renderers are in their own user and PID namespaces; /proc shows them under the browser
 * with host PIDs, and the same calls apply: prlimit(2) and setpriority(2) need only the same
 * user and only lower a bound, and a process in a user namespace cannot raise its limit back
 * (that takes CAP_SYS_RESOURCE in the host's namespace). Chromium's own sandbox only ever
 * lowers RLIMIT_DATA, so the 2 GiB stays.
 * Tested with Chromium 150 on Linux 6.18, both as root with `--no-sandbox` and as an
 * unprivileged user with the namespace sandbox: the renderers' zygote and every renderer
 * forked from it have the 2 GiB limit; a page filling its heap crashes at 512 MiB and the job
 * fails once; a page filling array buffers gets "Array buffer allocation failed" after 1 GiB
 * of them (the renderer itself holds about 600 MiB of data mappings);
 * a page spinning the CPU has all its renderer's threads at nice 19 within about 4 s.
 *
 * With autogroup scheduling (most desktop kernels), nice ranks threads of one session: the
 * renderers are in the service's session, so a reniced one yields to the service and to the
 * other renderers, which is what it is for.
 */
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** V8 heap of one renderer, MiB. */
export const RENDERER_HEAP_MIB = 512
/** Data limit of one renderer process, bytes (Linux). */
export const RENDERER_DATA_BYTES = 2 * 1024 ** 3
/** A renderer above this share of one core… */
export const CPU_SHARE = 0.2
/** …for this long in a row is reniced. */
export const CPU_SECONDS = 3
const CHECK_INTERVAL_MS = 1000
const LOWEST_PRIORITY = 19
/** Clock ticks per second in /proc/<pid>/stat: USER_HZ, 100 on every architecture Chromium runs on. */
const USER_HZ = 100

export interface RendererBoundsOptions {
  log: (line: Record<string, unknown>) => void
  /** Default {@link RENDERER_DATA_BYTES}. */
  dataBytes?: number
  /** How often renderers are looked at. Default 1 s. */
  intervalMs?: number
  /** A renderer that keeps more than `share` of one core busy for `seconds` in a row is reniced ({@link CPU_SHARE}, {@link CPU_SECONDS} by default: resolveEngineOptions fills them in). */
  cpu: { share: number; seconds: number }
  /** The `/proc` to read (tests). Default `/proc`. */
  proc?: string
}

export interface RendererBounds {
  /** Chromium flags that bound every renderer of a browser launched with them. */
  readonly flags: string[]
  /**
   * Watches one launched browser's renderers (by the browser's PID) until `stop()`: bounds the
   * zygote and renderers already there before it resolves, then checks every interval.
   */
  watch(browserPid: number | undefined): Promise<RendererWatch>
}

export interface RendererWatch {
  stop(): void
}

export function createRendererBounds(options: RendererBoundsOptions): RendererBounds {
  const proc = options.proc ?? '/proc'
  const dataBytes = options.dataBytes ?? RENDERER_DATA_BYTES
  const intervalMs = options.intervalMs ?? CHECK_INTERVAL_MS
  const cpuShare = options.cpu.share
  const strikes = Math.max(1, Math.round((options.cpu.seconds * 1000) / intervalMs))
  let unboundedSaid = false
  let prlimitMissing = false
  const unbounded = (reason: string): void => {
    if (unboundedSaid) return
    unboundedSaid = true
    options.log({ event: 'renderer_memory_unbounded', reason, heapMiB: RENDERER_HEAP_MIB })
  }

  /** Lowers a process's data limit to `dataBytes` with prlimit(1) (Node has no prlimit); false when it could not. */
  const limitData = (pid: number): Promise<boolean> => {
    if (prlimitMissing) return Promise.resolve(false)
    return new Promise((resolve) => {
      execFile('prlimit', ['--pid', String(pid), `--data=${dataBytes}:${dataBytes}`], { timeout: 5000 }, (error) => {
        if (!error) return resolve(true)
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          prlimitMissing = true
          unbounded('prlimit (util-linux) is not installed')
        }
        // Else the process is gone, or its limit was already lower (raising is not allowed): nothing to do.
        resolve(false)
      })
    })
  }

  return {
    flags: [`--js-flags=--max-old-space-size=${RENDERER_HEAP_MIB}`],
    async watch(browserPid) {
      if (process.platform !== 'linux' || !existsSync(`${proc}/self/stat`)) {
        unbounded(`no per-process data limit on ${process.platform}`)
        return { stop() {} }
      }
      if (browserPid === undefined) {
        unbounded('the browser process is not known')
        return { stop() {} }
      }
      const tree = new ProcessTree(proc, browserPid)
      const seen = new Map<string, WatchedProcess>()
      const check = async (): Promise<void> => {
        const now = Date.now()
        const alive = new Set<string>()
        const limits: Promise<boolean>[] = []
        for (const info of tree.descendants()) {
          alive.add(info.key)
          let watched = seen.get(info.key)
          if (!watched) {
            const kind = processKind(proc, info.pid)
            if (kind === 'other') continue
            watched = { kind, ticks: info.ticks, at: now, strikes: 0, reniced: null, limited: false }
            seen.set(info.key, watched)
          }
          if (!watched.limited) {
            watched.limited = true
            if (dataLimitOf(proc, info.pid) > dataBytes) limits.push(limitData(info.pid))
          }
          if (watched.kind !== 'renderer') continue
          const seconds = (now - watched.at) / 1000
          const share = seconds > 0 ? (info.ticks - watched.ticks) / USER_HZ / seconds : 0
          watched.ticks = info.ticks
          watched.at = now
          watched.strikes = share > cpuShare ? watched.strikes + 1 : 0
          if (watched.reniced === null && watched.strikes >= strikes) {
            watched.reniced = new Set()
            options.log({ event: 'renderer_reniced', pid: info.pid, cpu: Math.round(share * 100) / 100, nice: LOWEST_PRIORITY })
          }
          // Nice is per thread on Linux: every thread of the renderer, and those it starts later.
          if (watched.reniced) reniceThreads(proc, info.pid, watched.reniced)
        }
        for (const key of seen.keys()) if (!alive.has(key)) seen.delete(key)
        await Promise.all(limits)
      }
      let running = false
      const tick = (): void => {
        if (running) return
        running = true
        check()
          .catch(() => {})
          .finally(() => (running = false))
      }
      const timer = setInterval(tick, intervalMs)
      timer.unref()
      // The zygote is there before the browser answers: renderers forked after this have the limit.
      running = true
      await check()
        .catch(() => {})
        .finally(() => (running = false))
      return { stop: () => clearInterval(timer) }
    },
  }
}

interface WatchedProcess {
  kind: 'renderer' | 'zygote'
  ticks: number
  at: number
  strikes: number
  /** Threads already at the lowest priority; null while not reniced. */
  reniced: Set<number> | null
  limited: boolean
}

interface ProcessInfo {
  pid: number
  /** PID and start time: a PID used again is another process. */
  key: string
  /** User and system CPU time, in clock ticks. */
  ticks: number
}

/** A process and its descendants, from /proc: the children lists when the kernel has them, else every process's parent. */
class ProcessTree {
  readonly #proc: string
  readonly #root: number
  readonly #childrenFiles: boolean

  constructor(proc: string, root: number) {
    this.#proc = proc
    this.#root = root
    this.#childrenFiles = existsSync(`${proc}/${root}/task/${root}/children`)
  }

  descendants(): ProcessInfo[] {
    const out: ProcessInfo[] = []
    if (this.#childrenFiles) {
      const queue = this.#children(this.#root)
      for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
        const info = readStat(this.#proc, pid)
        if (!info) continue
        out.push(info)
        queue.push(...this.#children(pid))
      }
      return out
    }
    const parents = new Map<number, ProcessInfo & { ppid: number }>()
    for (const entry of safeReaddir(this.#proc)) {
      if (!/^\d+$/.test(entry)) continue
      const info = readStat(this.#proc, Number(entry))
      if (info) parents.set(info.pid, info)
    }
    const wanted = new Set([this.#root])
    // Parents before children is not guaranteed: repeat until nothing is added.
    for (let added = true; added; ) {
      added = false
      for (const info of parents.values()) {
        if (wanted.has(info.pid) || !wanted.has(info.ppid)) continue
        wanted.add(info.pid)
        out.push(info)
        added = true
      }
    }
    return out
  }

  #children(pid: number): number[] {
    const out: number[] = []
    for (const task of safeReaddir(`${this.#proc}/${pid}/task`)) {
      const text = safeRead(`${this.#proc}/${pid}/task/${task}/children`)
      for (const child of text.split(' ')) if (/^\d+$/.test(child)) out.push(Number(child))
    }
    return out
  }
}

function readStat(proc: string, pid: number): (ProcessInfo & { ppid: number }) | null {
  const text = safeRead(`${proc}/${pid}/stat`)
  // The command name is in parentheses and may hold anything, spaces and parentheses too.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  if (fields.length < 20) return null
  return { pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), key: `${pid}:${fields[19]}` }
}

/** Chromium rewrites its children's command lines (one string, spaces between): the flags are there either way. */
function processKind(proc: string, pid: number): 'renderer' | 'zygote' | 'other' {
  const cmdline = safeRead(`${proc}/${pid}/cmdline`)
  if (/(^|[\0 ])--type=renderer([\0 ]|$)/.test(cmdline)) return 'renderer'
  // The zygote renderers are forked from; the other one (--no-zygote-sandbox) forks the GPU process.
  if (/(^|[\0 ])--type=zygote([\0 ]|$)/.test(cmdline) && !cmdline.includes('--no-zygote-sandbox')) return 'zygote'
  return 'other'
}

/** The soft data limit in bytes (Infinity when unlimited or unknown). */
function dataLimitOf(proc: string, pid: number): number {
  const line = safeRead(`${proc}/${pid}/limits`)
    .split('\n')
    .find((row) => row.startsWith('Max data size'))
  const soft = line?.slice('Max data size'.length).trim().split(/\s+/)[0]
  return soft && /^\d+$/.test(soft) ? Number(soft) : Infinity
}

function reniceThreads(proc: string, pid: number, done: Set<number>): void {
  for (const task of safeReaddir(`${proc}/${pid}/task`)) {
    const tid = Number(task)
    if (done.has(tid)) continue
    try {
      setPriority(tid, LOWEST_PRIORITY)
      done.add(tid)
    } catch {
      // Gone meanwhile.
    }
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}
