/**
 * `npm run demo -- --verbose`: where each build's plugin time went. The plugin publishes
 * its steps on a diagnostics channel (src/shared/timings.ts) only while someone listens;
 * the demo listens during each build and sums the steps per page and for the build.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { TIMINGS_CHANNEL, type StepTiming } from '../src/shared/timings.ts'

/** A build's steps, in ms; `at` columns are from the plugin run's start (negative: before it, while the bundler worked). */
export interface Breakdown {
  build: Record<string, number>
  pages: Record<string, number | string>[]
}

/** Records the steps published until `stop()`, which returns them. */
export function recordTimings(): { stop(): StepTiming[] } {
  const steps: StepTiming[] = []
  const listener = (message: unknown): void => void steps.push(message as StepTiming)
  subscribe(TIMINGS_CHANNEL, listener)
  return {
    stop() {
      unsubscribe(TIMINGS_CHANNEL, listener)
      return steps
    },
  }
}

/** The page steps, summed over a page's viewports, in the order a job takes them. */
const PAGE_STEPS: [column: string, step: string][] = [
  ['take a page', 'engine: take a page'],
  ['navigate', 'load: navigate'],
  ['settle', 'load: settle'],
  ['own fonts', 'load: own fonts'],
  ['read', 'load: read'],
  ['sheets', 'engine: stylesheet texts'],
  ['ask', 'engine: ask'],
  ['check', 'engine: first-screen check'],
  ['resize', 'engine: resize'],
]

export function breakdown(steps: StepTiming[]): Breakdown {
  const one = (step: string, page?: string): StepTiming | undefined => steps.find((each) => each.step === step && each.page === page)
  const sum = (step: string, page?: string): number => steps.filter((each) => each.step === step && each.page === page).reduce((total, each) => total + each.ms, 0)
  const lookups = one('run: cache lookups')
  const runStart = lookups?.startMs ?? 0
  const end = (timing: StepTiming | undefined): number => (timing ? timing.startMs + timing.ms : Number.NaN)
  const start = one('embedded: start')
  const build: Record<string, number> = {
    'browser launch began at': start ? start.startMs - runStart : Number.NaN,
    'browsers launched': steps.filter((each) => each.step === 'embedded: start the engine').length,
    // Loaded once per process: a second build in it finds them loaded.
    'modules': sum('embedded: load its module') + sum('embedded: load the engine and service') + sum('engine: load playwright-core'),
    'browser launch': sum('embedded: start the engine') - sum('engine: load playwright-core'),
    'service start': sum('embedded: start the service'),
    'cache lookups': sum('run: cache lookups'),
    'waited for the launch': sum('embedded: wait for the start'),
    'render': sum('run: render'),
    'plugin run': end(one('run: render') ?? lookups) - runStart,
  }
  const urls = [...new Set(steps.filter((each) => each.step === 'request: generate').map((each) => each.page!))]
  const pages = urls.map((url) => {
    const sent = one('request: generate', url)
    const job = one('service: job', url)
    const waited = one('request: wait for the CSS', url)
    // A job starts before its 202 is read: queued is the wait for a worker, if any.
    const row: Record<string, number | string> = { page: new URL(url).pathname, 'sent at': sent ? sent.startMs - runStart : Number.NaN, 'queued': job && sent ? Math.max(0, job.startMs - end(sent)) : Number.NaN }
    for (const [column, step] of PAGE_STEPS) row[column] = sum(step, url)
    row['job'] = job?.ms ?? Number.NaN
    // From the job's end to the plugin holding its CSS: the client's next check, and the answer.
    row['seen after'] = job ? end(waited ?? sent) - end(job) : Number.NaN
    row['total'] = sent ? end(waited ?? sent) - sent.startMs : Number.NaN
    return row
  })
  return { build, pages }
}

/** The breakdown as the demo prints it: whole ms. */
export function printBreakdown(name: string, { build, pages }: Breakdown): void {
  // A step that did not happen (no launch in a warm build) is shown as such, not as NaN.
  const round = (value: number | string): number | string => (typeof value !== 'number' ? value : Number.isFinite(value) ? Math.round(value) : '—')
  console.log(`\n${name}: where the plugin time went (ms; "at" is from the plugin run's start, negative while the bundler still worked)`)
  console.table([Object.fromEntries(Object.entries(build).map(([key, value]) => [key, round(value)]))])
  if (pages.length === 0) console.log('No page was rendered.')
  else console.table(pages.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, round(value)]))))
}
