/**
 * Lighthouse on the first page of each site, in the variants that load the full
 * stylesheets: its default mode, the one PageSpeed Insights and the DevTools panel show
 * (simulated throttling, a mobile form factor, the default config), performance only. Each
 * run gets a fresh Chromium from chrome-launcher, offline but for 127.0.0.1 like the bench's
 * own browser, and the server answers at once: Lighthouse's simulator does the slowing, from
 * what it saw of the fast load.
 */
import * as chromeLauncher from 'chrome-launcher'
import lighthouse, { type Result } from 'lighthouse'
import { chromiumFlags } from '../../src/engine/flags.ts'
import { OFFLINE } from './browser.ts'
import { label, median, ms, table } from './report.ts'
import type { BenchServer } from './server.ts'
import { overlayDir, type PreparedPage, type Variant } from './variants.ts'

export const LIGHTHOUSE_VARIANTS = ['no plugin', 'loader', 'body', 'media', 'swap', 'beasties'] as const satisfies readonly Variant[]
type LighthouseVariant = (typeof LIGHTHOUSE_VARIANTS)[number]

/** Issue 35's target: on this site, `loader`'s median first paint at least this share below `no plugin`'s. */
const TARGET_SITE = 'startbootstrap-creative'
const TARGET_GAIN = 0.25

export interface LighthouseRun {
  /** Simulated ms; null when the run gave none. */
  fcp: number | null
  lcp: number | null
  speedIndex: number | null
  /** The performance score, 0–100. */
  score: number | null
  /** Same-origin stylesheets the render-blocking audit listed, by path. */
  blockingSheets: string[]
  /** Whatever else it listed (scripts, other origins). */
  blockingOther: string[]
  /** Stylesheet request (path; the URL for another origin) → the priority Chrome gave it. */
  priorities: Map<string, string>
  /** Requests that failed or were answered with an error status. */
  failed: string[]
}

/** First page of a site → its runs per variant. */
export type LighthouseResults = Map<PreparedPage, Map<LighthouseVariant, LighthouseRun[]>>

const NO_RUN: LighthouseRun = { fcp: null, lcp: null, speedIndex: null, score: null, blockingSheets: [], blockingOther: [], priorities: new Map(), failed: [] }

type Item = Record<string, unknown>

function itemsOf(lhr: Result, audit: string): Item[] {
  const details = lhr.audits[audit]?.details
  return details && 'items' in details && Array.isArray(details.items) ? (details.items as Item[]) : []
}

const numeric = (lhr: Result, audit: string): number | null => lhr.audits[audit]?.numericValue ?? null

/** Path for the page's own origin, so rows read the same from run to run (the server's port changes). */
function where(url: string, origin: string): string {
  const parsed = new URL(url)
  return parsed.origin === origin ? parsed.pathname : url
}

function figuresOf(lhr: Result, origin: string): LighthouseRun {
  const requests = itemsOf(lhr, 'network-requests').filter((item) => typeof item.url === 'string' && !item.url.startsWith('data:'))
  const isSheet = (item: Item): boolean => item.resourceType === 'Stylesheet' || /\.css$/i.test(new URL(String(item.url)).pathname)
  const sheets = new Set(requests.filter(isSheet).map((item) => String(item.url)))
  const blocking = itemsOf(lhr, 'render-blocking-resources').map((item) => String(item.url))
  const ownSheet = (url: string): boolean => new URL(url).origin === origin && (sheets.has(url) || /\.css$/i.test(new URL(url).pathname))
  const status = (item: Item): number => (typeof item.statusCode === 'number' ? item.statusCode : -1)
  const score = lhr.categories.performance?.score
  return {
    fcp: numeric(lhr, 'first-contentful-paint'),
    lcp: numeric(lhr, 'largest-contentful-paint'),
    speedIndex: numeric(lhr, 'speed-index'),
    score: typeof score === 'number' ? score * 100 : null,
    blockingSheets: blocking.filter(ownSheet).map((url) => where(url, origin)),
    blockingOther: blocking.filter((url) => !ownSheet(url)).map((url) => where(url, origin)),
    priorities: new Map(requests.filter(isSheet).map((item) => [where(String(item.url), origin), String(item.priority)])),
    failed: requests.filter((item) => status(item) < 200 || status(item) >= 400).map((item) => `${where(String(item.url), origin)} (${status(item)})`),
  }
}

/** One Lighthouse run in a Chromium of its own, killed whatever happens. */
async function runOnce(url: string, chromePath: string): Promise<Result> {
  const chrome = await chromeLauncher.launch({ chromePath, chromeFlags: ['--headless=new', ...chromiumFlags(), OFFLINE] })
  try {
    const result = await lighthouse(url, { port: chrome.port, onlyCategories: ['performance'], logLevel: 'error', output: 'json' })
    if (!result) throw new Error('Lighthouse returned no result')
    return result.lhr
  } finally {
    await chrome.kill()
  }
}

async function measureOnce(url: string, chromePath: string, note: (message: string) => void): Promise<LighthouseRun> {
  try {
    const lhr = await runOnce(url, chromePath)
    // A run Lighthouse gave up on (no paint, a page that did not load) still has a report, without figures.
    if (lhr.runtimeError) note(`${lhr.runtimeError.code}: ${lhr.runtimeError.message}`)
    return figuresOf(lhr, new URL(url).origin)
  } catch (error) {
    note(error instanceof Error ? error.message.split('\n')[0]! : String(error))
    return NO_RUN
  }
}

export interface LighthouseOptions {
  runs: number
  chromePath: string
  /** Pointed at each variant's overlay in turn. */
  server: BenchServer
  note(message: string): void
}

/** `runs` Lighthouse runs of each site's first page per variant, the variants taking turns. */
export async function measureLighthouse(pages: PreparedPage[], { runs, chromePath, server, note }: LighthouseOptions): Promise<LighthouseResults> {
  const results: LighthouseResults = new Map()
  const firsts = pages.filter((page) => page.page === page.site.pages[0])
  for (const [index, page] of firsts.entries()) {
    const byVariant = new Map(LIGHTHOUSE_VARIANTS.map((variant) => [variant, [] as LighthouseRun[]]))
    results.set(page, byVariant)
    for (let run = 0; run < runs; run++) {
      console.error(`[Lighthouse ${index + 1}/${firsts.length}] ${label(page)}, run ${run + 1}/${runs}`)
      for (const variant of LIGHTHOUSE_VARIANTS) {
        server.target = { overlay: overlayDir(page.site, variant), root: page.site.dir, firstScripts: new Map(), delayMs: 0 }
        byVariant.get(variant)!.push(await measureOnce(server.origin + page.page, chromePath, (message) => note(`${label(page)} ${variant}, Lighthouse: ${message}`)))
      }
    }
  }
  return results
}

// ─── report ───────────────────────────────────────────────────────────────────────────

/** A figure missing from some runs is not a median of the others. */
function medianOf(runs: LighthouseRun[], pick: (run: LighthouseRun) => number | null): number | null {
  const values = runs.map(pick)
  return values.every((value): value is number => value !== null) ? median(values) : null
}

const union = (lists: string[][]): string[] => [...new Set(lists.flat())]

function figureRow(page: PreparedPage, variant: LighthouseVariant, runs: LighthouseRun[]): string[] {
  const blocking = union(runs.map((run) => run.blockingSheets))
  return [
    label(page),
    variant,
    ms(medianOf(runs, (run) => run.fcp)),
    ms(medianOf(runs, (run) => run.lcp)),
    ms(medianOf(runs, (run) => run.speedIndex)),
    ms(medianOf(runs, (run) => run.score)),
    blocking.join(', ') || 'none',
  ]
}

/** One row per page and stylesheet, a column per variant: the priorities its runs saw ("—": not requested). */
function priorityRows(page: PreparedPage, byVariant: Map<LighthouseVariant, LighthouseRun[]>): string[][] {
  const runs = [...byVariant.values()].flat()
  const sheets = union(runs.map((run) => [...run.priorities.keys()]))
  return sheets.map((sheet) => [
    label(page),
    sheet,
    ...LIGHTHOUSE_VARIANTS.map((variant) => union((byVariant.get(variant) ?? []).map((run) => (run.priorities.has(sheet) ? [run.priorities.get(sheet)!] : []))).join('/') || '—'),
  ])
}

/** Per page and variant, what the runs listed in `field`, deduplicated. */
function listed(results: LighthouseResults, field: 'blockingOther' | 'failed'): string[] {
  return [...results].flatMap(([page, byVariant]) =>
    [...byVariant].flatMap(([variant, runs]) => {
      const urls = union(runs.map((run) => run[field]))
      return urls.length ? [`  ${label(page)} ${variant}: ${urls.join(', ')}`] : []
    }),
  )
}

/** The figures table, the priorities table, and what else the runs turned up. */
export function lighthouseTables(results: LighthouseResults): string {
  const figures = [...results].flatMap(([page, byVariant]) => [...byVariant].map(([variant, runs]) => figureRow(page, variant, runs)))
  const priorities = [...results].flatMap(([page, byVariant]) => priorityRows(page, byVariant))
  const other = listed(results, 'blockingOther')
  const failed = listed(results, 'failed')
  return [
    table(['page', 'variant', 'FCP ms', 'LCP ms', 'SI ms', 'score', 'render-blocking stylesheets (any run)'], figures),
    '\nStylesheet request priorities (Chrome\'s, from the network-requests audit; "a/b": the runs differed; "—": not requested)\n',
    table(['page', 'stylesheet', ...LIGHTHOUSE_VARIANTS], priorities),
    ...(other.length ? [`\nAlso listed as render-blocking:\n${other.join('\n')}`] : []),
    ...(failed.length ? [`\nRequests that failed in the Lighthouse runs:\n${failed.join('\n')}`] : []),
  ].join('\n')
}

/** `loader` beside `no plugin` on one page: met when its median FCP is TARGET_GAIN lower and no own stylesheet blocks render. */
function comparison(page: PreparedPage, byVariant: Map<LighthouseVariant, LighthouseRun[]>): { ok: boolean; text: string } {
  const loader = medianOf(byVariant.get('loader') ?? [], (run) => run.fcp)
  const plain = medianOf(byVariant.get('no plugin') ?? [], (run) => run.fcp)
  const blocking = union((byVariant.get('loader') ?? []).map((run) => run.blockingSheets))
  if (loader === null || plain === null) return { ok: false, text: `${label(page)}: no figure` }
  const gain = 1 - loader / plain
  const text = `${label(page)}: ${ms(loader)} ms vs ${ms(plain)} ms (${gain >= 0 ? '−' : '+'}${Math.abs(gain * 100).toFixed(0)} %), render-blocking: ${blocking.join(', ') || 'none'}`
  return { ok: gain >= TARGET_GAIN && blocking.length === 0, text }
}

/** The target line (pass null when its site was not run) and the same comparison on every site. */
export function lighthouseTarget(results: LighthouseResults): { pass: boolean | null; lines: string[] } {
  const title = `loader: Lighthouse median FCP ≥ ${TARGET_GAIN * 100} % below no plugin and no same-origin stylesheet render-blocking, on ${TARGET_SITE}`
  const target = [...results].find(([page]) => page.site.name === TARGET_SITE)
  const verdict = target ? comparison(...target) : null
  const lines = [verdict ? `${verdict.ok ? 'PASS' : 'FAIL'} ${title}: ${verdict.text}` : `SKIP ${title}: not in this run`]
  lines.push('  every site, for reference:')
  for (const [page, byVariant] of results) {
    const { ok, text } = comparison(page, byVariant)
    lines.push(`    ${ok ? 'met   ' : 'missed'} ${text}`)
  }
  return { pass: verdict ? verdict.ok : null, lines }
}
