/**
 * Memory of a process and all its descendants (the build's Node and its Chromium's
 * browser, zygotes, renderers, GPU/utility processes), sampled from /proc: Linux only.
 *
 * RSS summed over the tree counts the pages processes share (Chromium's binary, its shared
 * memory) once per process: an upper bound. PSS divides each shared page between the
 * processes mapping it, so its sum is what the tree costs the machine. PSS is read less
 * often: /proc/<pid>/smaps_rollup walks the process's page tables (about 2 ms for each
 * Chromium process here, under its memory lock), which every 100 ms would slow the build
 * it measures by a third; VmRSS is a counter, cheap to read at any rate.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** /proc's CPU times are in USER_HZ ticks: 100 a second on every Linux port Node runs on. */
const TICK_MS = 10
const DIGITS = /^\d+$/
const KB_LINE = (field: string): RegExp => new RegExp(`^${field}:\\s+(\\d+) kB`, 'm')
const VM_RSS = KB_LINE('VmRSS')
const PSS = KB_LINE('Pss')

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null // the process ended between the listing and the read
  }
}

interface ProcessEntry {
  ppid: number
  /** utime + stime so far, ms. */
  cpuMs: number
}

/** Every live process: its parent and CPU time so far, from /proc/<pid>/stat. */
function processTable(): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>()
  for (const name of readdirSync('/proc')) {
    if (!DIGITS.test(name)) continue
    const stat = read(`/proc/${name}/stat`)
    if (stat === null) continue
    // "pid (comm) state ppid … utime stime …": comm may hold spaces and parentheses; the last ')' ends it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    table.set(Number(name), { ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS })
  }
  return table
}

/** The pid and every live descendant. */
function descendants(root: number, table: Map<number, ProcessEntry>): number[] {
  const children = new Map<number, number[]>()
  for (const [pid, { ppid }] of table) {
    const list = children.get(ppid)
    if (list) list.push(pid)
    else children.set(ppid, [pid])
  }
  const found = table.has(root) ? [root] : []
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i]!) ?? []))
  return found
}

/** The pid and its live descendants, now. */
export function liveTree(pid: number): number[] {
  return descendants(pid, processTable())
}

function kb(path: string, pattern: RegExp): number {
  const match = read(path)?.match(pattern)
  return match ? Number(match[1]) * 1024 : 0
}

export interface TreePeak {
  /** Highest sum of VmRSS over the tree in one sample, bytes. */
  rssBytes: number
  /** Highest sum of PSS over the tree in one of the samples that read it, bytes. */
  pssBytes: number
  /** Most processes in the tree in one sample. */
  processes: number
  samples: number
  /**
   * CPU time of every process seen in the tree, each as last sampled, ms. It misses what a
   * process spent after its last sample (up to one interval), but not the processes the
   * child never waits for (Chromium's renderers), which its own cutime misses.
   */
  cpuMs: number
}

export interface TreeWatch {
  stop(): TreePeak
}

/** Samples the tree under `pid` every `intervalMs` (its PSS every `pssEvery`-th time) until stopped. */
export function watchTree(pid: number, intervalMs = 100, pssEvery = 10): TreeWatch {
  const peak: TreePeak = { rssBytes: 0, pssBytes: 0, processes: 0, samples: 0, cpuMs: 0 }
  const cpu = new Map<number, number>()
  const sample = (): void => {
    const withPss = peak.samples % pssEvery === 0
    let rss = 0
    let pss = 0
    const table = processTable()
    const pids = descendants(pid, table)
    for (const each of pids) {
      rss += kb(`/proc/${each}/status`, VM_RSS)
      if (withPss) pss += kb(`/proc/${each}/smaps_rollup`, PSS)
      cpu.set(each, table.get(each)!.cpuMs)
    }
    peak.rssBytes = Math.max(peak.rssBytes, rss)
    peak.pssBytes = Math.max(peak.pssBytes, pss)
    peak.processes = Math.max(peak.processes, pids.length)
    peak.samples += 1
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      peak.cpuMs = [...cpu.values()].reduce((sum, ms) => sum + ms, 0)
      return peak
    },
  }
}

/**
 * CPU time of this process and of the descendants it has waited for, ms: /proc/self/stat
 * utime + stime + cutime + cstime. Chromium's renderers' time does not reach it (they are
 * not waited for along the chain up to the child): about half a cold build's CPU here.
 */
export function selfAndReapedCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  // Fields from the 3rd (state) on, after "pid (comm) ": utime is the 14th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) * TICK_MS
}

/** CPU time the whole machine spent busy since boot, ms: /proc/stat's first line, all but idle and iowait. */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
  // cpu user nice system idle iowait irq softirq steal (guest time is inside user already)
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number)
  return [user, nice, system, irq, softirq, steal].reduce((sum: number, ticks) => sum + (ticks ?? 0), 0) * TICK_MS
}
