/**
 * What one build did to its pages: the summary table logged at the end, the progress line
 * while pages are pending, and the JSON file `report` asks for. Nothing here ever holds the
 * token: pages, sizes, times and messages only (messages are already redacted by the client).
 */
import type { FirstScreenDifference } from '../contract/api-contract.ts'
import { writeFileAtomic } from './files.ts'

/** Who gave a page its CSS: the configured service (remote mode), the browser the run started (embedded mode), or the cache. */
export type PageSource = 'service' | 'embedded' | 'cache'
/** inlined: the page got critical CSS; unchanged: nothing to inline; failed: left byte-identical. */
export type PageOutcome = 'inlined' | 'unchanged' | 'failed'

export interface PageReport {
  url: string
  file: string
  source: PageSource | null
  /** What made its critical CSS (`chromium`, `static`; from the cache too); null when nothing did, or a service that does not say. */
  engine: string | null
  /** Bytes of critical CSS inlined (UTF-8). */
  cssBytes: number
  ms: number
  outcome: PageOutcome
  /** Why it failed, or what to know about it. */
  message: string | null
  /**
   * Stylesheets put inline whole where their links were (`href`s as linked), instead of
   * the critical CSS and a deferred request: the critical CSS was nearly all of them.
   */
  inlinedWhole: string[]
  /** Stylesheets the inliner left render-blocking on purpose (it could not move them safely, or the render could not read them). */
  stillBlocking: number
  /** Other hosts the render went on without (cut when they held the page, unreachable, refused, or not contacted), and why. */
  skippedHosts: { host: string; reason: string }[]
  /** Stylesheets the render could not read (paths on the page's own origin, else URLs): their links stay blocking. */
  unreadStylesheets: string[]
  /**
   * Where the page's first screen with only its critical CSS still differs from the full page
   * (until the full CSS loads), per viewport, as the render measured it: share of the screen
   * and the outermost elements. Empty when it does not, or when the render did not check.
   */
  firstScreen: FirstScreenDifference[]
}

export interface BuildReport {
  /** Service address without credentials. */
  service: string | null
  startedAt: string
  ms: number
  pages: PageReport[]
}

export interface BuildLogger {
  info(message: string): void
  warn(message: string): void
  /** Where progress lines go when `info` is only shown after the build (webpack's stats). Default `info`. */
  progress?(message: string): void
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  return `${(bytes / 1024).toFixed(1)} KiB`
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
}

/** `1 page`, `2 pages`: every count in a message agrees with its noun. */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`
}

/**
 * What messages call a page: its path and query when it is on the site (`/hang.html`, as the
 * user configures it), else the address as given. A path stays a path.
 */
export function pageName(address: string, siteUrl: URL | null): string {
  if (!URL.canParse(address)) return address
  const url = new URL(address)
  return siteUrl !== null && url.origin === siteUrl.origin ? `${url.pathname}${url.search}` : url.href
}

/** What the table says of each page beyond the report's own fields. */
export interface SummaryLabels {
  /** The page as messages name it (see `pageName`). */
  name(page: PageReport): string
  /** A failed page's short outcome (`quota used up`): the warnings give the cause in full, once. */
  failure(page: PageReport): string
}

function outcomeLabel(page: PageReport, labels: SummaryLabels): string {
  if (page.outcome === 'failed') return `failed: ${labels.failure(page)}`
  const blocking = page.stillBlocking > 0 ? ` (${counted(page.stillBlocking, 'stylesheet')} left blocking)` : ''
  if (page.outcome === 'unchanged') return `unchanged: ${page.message ?? 'nothing to inline'}${blocking}`
  const whole = page.inlinedWhole.length > 0 ? ` (${counted(page.inlinedWhole.length, 'stylesheet')} whole: the critical CSS was nearly all of ${page.inlinedWhole.length === 1 ? 'it' : 'them'})` : ''
  return `inlined${whole}${blocking}`
}

/** One line of counts, then one row per page. */
export function formatSummary(report: BuildReport, labels: SummaryLabels): string {
  const count = (predicate: (page: PageReport) => boolean): number => report.pages.filter(predicate).length
  const inlined = count((page) => page.outcome === 'inlined')
  const cached = count((page) => page.source === 'cache')
  const failed = count((page) => page.outcome === 'failed')
  const parts = [counted(report.pages.length, 'page'), `${inlined} inlined`]
  if (cached) parts.push(`${cached} from cache`)
  if (failed) parts.push(`${failed} left unchanged after errors`)
  parts.push(formatMs(report.ms))

  const rows = report.pages.map((page) => [
    labels.name(page),
    page.source ?? '-',
    page.engine ?? '-',
    page.outcome === 'failed' ? '-' : formatBytes(page.cssBytes),
    formatMs(page.ms),
    outcomeLabel(page, labels),
  ])
  const header = ['page', 'source', 'engine', 'CSS', 'time', 'outcome']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: string[]): string =>
    `  ${cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}`
  return [`critical CSS: ${parts.join(' · ')}`, line(header), ...rows.map(line)].join('\n')
}

/** Writes the report as JSON, atomically. */
export function writeJsonReport(file: string, report: BuildReport): Promise<void> {
  return writeFileAtomic(file, `${JSON.stringify(report, null, 2)}\n`)
}

const PROGRESS_EVERY_MS = 2000
/** How often the progress line looks whether a line is due. */
const PROGRESS_TICK_MS = 250
/** A line is due this long after the last one: it comes within 2 s even when a tick, or the event loop, is late. */
const PROGRESS_DUE_MS = PROGRESS_EVERY_MS - 2 * PROGRESS_TICK_MS
const HEARTBEAT_MS = 10_000

export interface Progress {
  /** One more page finished. */
  done(): void
  stop(): void
}

/** `3.1 pages/s`, or under one a second `24 pages/min`. */
function rate(perSecond: number): string {
  if (perSecond >= 1) return `${perSecond.toFixed(1)} pages/s`
  const perMinute = perSecond * 60
  return `${perMinute.toFixed(perMinute < 10 ? 1 : 0)} pages/min`
}

/** `about 3 min 20 s left`, `about 40 s left`: whole seconds, since it is a guess. */
function timeLeft(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000))
  const minutes = Math.floor(seconds / 60)
  return `about ${minutes > 0 ? `${minutes} min ${seconds % 60} s` : `${seconds} s`} left`
}

/**
 * "340/1000 pages ready, 660 pending, 3.1 pages/s, about 3 min 33 s left": logged every 2 s
 * while pages finish (not for the last one: the summary follows), so a long render shows how
 * far it got and how long it still needs; and every 10 s while nothing finishes, so a long
 * wait on a slow plan never looks like a hang. The rate is the run's so far.
 */
export function createProgress(total: number, logger: BuildLogger, now: () => number = Date.now, why: string | null = null): Progress {
  const started = now()
  let finished = 0
  let said = 0
  let lastLogged = started
  const log = (): void => {
    lastLogged = now()
    said = finished
    const elapsedMs = lastLogged - started
    const pace = finished > 0 && elapsedMs >= 1000 ? `, ${rate((finished * 1000) / elapsedMs)}, ${timeLeft(((total - finished) * elapsedMs) / finished)}` : ''
    const message = `critical CSS: ${finished}/${total} pages ready, ${total - finished} pending${pace}${why === null ? '' : `, ${why}`}`
    if (logger.progress) logger.progress(message)
    else logger.info(message)
  }
  const ticker = setInterval(() => {
    if (finished >= total) return
    const quiet = now() - lastLogged
    if ((finished > said && quiet >= PROGRESS_DUE_MS) || quiet >= HEARTBEAT_MS) log()
  }, PROGRESS_TICK_MS)
  ticker.unref()
  return {
    done() {
      finished += 1
      if (finished < total && now() - lastLogged >= PROGRESS_DUE_MS) log()
    },
    stop() {
      clearInterval(ticker)
    },
  }
}
