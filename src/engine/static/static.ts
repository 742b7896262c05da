/**
 * The static engine: critical CSS without a browser, for hosts that have none. It fetches the
 * page and its stylesheets through the same egress gate a browser context uses (the network
 * policy admits every connection, redirects included), reads the page as a browser parses it,
 * and keeps the rules whose selectors match one of its elements, with what they need (custom
 * properties, `@font-face`s, `@keyframes`, layer order, and the `@media`, `@supports` and
 * `@container` around them, media queries held to the job's viewports). With no layout there
 * is no fold: every rule the page uses is kept, where the Chromium engine keeps the first
 * screen's. No script runs, so a page whose body its scripts build is refused, naming why.
 *
 * This thread keeps the gates, the policy and what a tenant's jobs learn of silent hosts; the
 * parsing and matching run on the engine's worker threads (render.ts, workers.ts). Everything
 * after the CSS is the same as for the Chromium engine: the job contract, the sheets' combined
 * parse (once per site and thread, parsed-sheets.ts) and the CSS it writes (css.ts).
 */
import { availableParallelism } from 'node:os'
import { DEFAULT_THIRD_PARTY, type JobNetwork } from '../../contract/api-contract.ts'
import { admitEveryHost, authorityOf, createEgressProxy, shownHost, type Admit, type EgressGate, type EgressProxy } from '../egress.ts'
import { EngineError, type Engine, type EngineInput, type EngineResult } from '../engine.ts'
import { MAX_DOCUMENT_BYTES, mebibytes } from '../limits.ts'
import { DEFAULT_LOAD_TIMEOUT_MS, DEFAULT_NAVIGATION_TIMEOUT_MS, DEFAULT_THIRD_PARTY_TIMEOUT_MS } from '../options.ts'
import { navigationRefused } from '../page-refusals.ts'
import { SilentHosts } from '../silent-hosts.ts'
import type { StaticOutcome } from './render.ts'
import { StaticJobFailed, StaticWorkers, type WorkerFailure } from './workers.ts'

export { SCRIPT_BUILT_PAGE } from './render.ts'

/** Hosts and stylesheets a job's notes name at most, as the Chromium engine's. */
const MAX_NOTED = 50
const SILENT_ON_AN_EARLIER_PAGE = 'no answer on an earlier page'
/** Threads at most: past the cores they only share them. */
const MAX_THREADS = 4
/**
 * Jobs in flight per thread: enough that a thread has a page to parse while others' pages and
 * sheets come through the gates; each one in flight holds its page's tree, and the build's
 * thread its page. On the 1,000-page MkDocs site 4 peaked at 473–572 MB, 3 at 464–489 MB
 * (interleaved runs), with the thread as busy.
 */
const JOBS_PER_THREAD = 3

/**
 * Threads that parse and match: one core is left to the engine's own thread, which serves the
 * pages, runs the gates and (in a build) writes the pages, about a third of a static build's
 * CPU; each thread's heap is some 140 MB at its peak, so one that only shares a core costs memory for nothing.
 */
export function staticThreads(cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(MAX_THREADS, cores - 1))
}

export interface StaticEngineOptions {
  /** Where a connection may go (the service passes its network policy). Default: every host, resolved by the system. */
  admit?: Admit
  /** Longest wait for the page's response. Default 15 s (never past the job's deadline). */
  navigationTimeoutMs?: number
  /** Longest wait for the page's own stylesheets. Default 5 s. */
  loadTimeoutMs?: number
  /** Longest another host's stylesheet is waited for under third party `cut`. Default 1 s. */
  thirdPartyTimeoutMs?: number
  /** Worker threads that parse and match. Default: one fewer than the cores, at least 1 and at most 4. */
  threads?: number
  /** Engine events (`egress_refused`). */
  log?: (line: Record<string, unknown>) => void
}

export interface StaticEngine extends Engine {
  close(): Promise<void>
}

export function createStaticEngine(options: StaticEngineOptions = {}): StaticEngine {
  return new StaticCriticalCss(options)
}

class StaticCriticalCss implements StaticEngine {
  readonly #egress: EgressProxy
  readonly #workers: StaticWorkers
  readonly #silentHosts = new SilentHosts()
  readonly #navigationMs: number
  readonly #loadMs: number
  readonly #thirdPartyMs: number
  readonly jobsAtOnce: number

  constructor(options: StaticEngineOptions) {
    const threads = Math.max(1, options.threads ?? staticThreads())
    this.#egress = createEgressProxy(options.admit ?? admitEveryHost, options.log ?? (() => {}))
    this.#workers = new StaticWorkers(threads)
    this.jobsAtOnce = threads * JOBS_PER_THREAD
    this.#navigationMs = options.navigationTimeoutMs ?? DEFAULT_NAVIGATION_TIMEOUT_MS
    this.#loadMs = options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS
    this.#thirdPartyMs = options.thirdPartyTimeoutMs ?? DEFAULT_THIRD_PARTY_TIMEOUT_MS
  }

  async generate(input: EngineInput): Promise<EngineResult> {
    input.signal.throwIfAborted()
    const thirdParty = input.thirdParty ?? DEFAULT_THIRD_PARTY
    const own = authorityOf(input.url)
    const gate = await this.#egress.open()
    try {
      // Under `block` nothing but the page's own host is contacted.
      gate.only(thirdParty === 'block' && own !== null ? [own] : null)
      if (input.tenant !== undefined && thirdParty === 'cut') for (const host of this.#silentHosts.of(input.tenant)) if (host !== own) gate.cut(host, SILENT_ON_AN_EARLIER_PAGE)
      const job = {
        url: input.url,
        ...(input.tenant !== undefined ? { tenant: input.tenant } : {}),
        viewports: input.viewports,
        thirdParty,
        ...(input.selection ? { selection: input.selection } : {}),
        proxy: gate.server,
        pageBy: Math.min(Date.now() + this.#navigationMs, input.deadline ?? Infinity),
        loadTimeoutMs: this.#loadMs,
        thirdPartyTimeoutMs: this.#thirdPartyMs,
      }
      let outcome: StaticOutcome
      try {
        outcome = await this.#workers.run(job, input.signal)
      } catch (error) {
        input.signal.throwIfAborted()
        throw error instanceof StaticJobFailed ? failureOf(error.failure, gate, this.#navigationMs) : error
      }
      const pageOwn = authorityOf(outcome.pageUrl)
      for (const authority of outcome.timedOut) if (authority !== pageOwn) gate.cut(authority, `no answer within ${(this.#thirdPartyMs / 1000).toFixed(1)} s`, true)
      if (input.tenant !== undefined) this.#silentHosts.add(input.tenant, [...gate.unreached].filter(([, why]) => why.silent).map(([authority]) => authority))
      return { css: outcome.css, network: networkNotes(gate, pageOwn, outcome.unread), engine: 'static' }
    } finally {
      gate.close()
    }
  }

  async close(): Promise<void> {
    await this.#workers.close()
    await this.#egress.close()
  }
}

/** A job's failure in the words every engine uses: the page the gate did not let out, the page that did not come, the engine's own. */
function failureOf(failure: WorkerFailure, gate: EgressGate, navigationMs: number): Error {
  switch (failure.kind) {
    case 'engine':
      return new EngineError(failure.code, failure.message)
    case 'page': {
      const { kind, url, hops, message } = failure.failure
      const authority = authorityOf(url)
      const why = authority === null ? undefined : gate.unreached.get(authority)
      if (why) return navigationRefused(why, hops.length > 1 ? 'redirect' : 'page')
      if (kind === 'status') return new EngineError('fetch_failed', `The page answered ${message}.`)
      if (kind === 'over') return new EngineError('render_failed', `A document of the page is larger than the ${mebibytes(MAX_DOCUMENT_BYTES)} the engine loads.`)
      return new EngineError('fetch_failed', `The page could not be loaded: ${failure.timedOut ? `no answer within ${(navigationMs / 1000).toFixed(1)} s` : message}.`)
    }
    case 'aborted':
      return new EngineError('render_failed', 'The job ended.')
    case 'fault':
      // An unexpected fault of the engine: the service says only that it failed (render-job.ts).
      return new Error('the static engine failed on this page')
  }
}

/** What the job went without: hosts the gate let out no connection to (not the page's own), and stylesheets it could not read. */
function networkNotes(gate: EgressGate, own: string | null, unread: readonly string[]): JobNetwork {
  const hosts = new Map<string, string>()
  for (const [authority, why] of gate.unreached) if (authority !== own && !hosts.has(shownHost(authority))) hosts.set(shownHost(authority), why.reason)
  return {
    skippedHosts: [...hosts]
      .map(([host, reason]) => ({ host, reason }))
      .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
      .slice(0, MAX_NOTED),
    unreadStylesheets: [...new Set(unread)].sort().slice(0, MAX_NOTED),
  }
}
