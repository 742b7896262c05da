/**
 * The Chromium engine: a system Chrome/Chromium driven by playwright-core (never a
 * downloaded browser), launched once and reused: one load per job, resized per viewport, on a page kept warm per tenant.
 *
 * Its rooms: options.ts (defaults, resolved once), browser.ts (find, launch, heartbeat,
 * relaunch) with flags.ts and egress-wall.ts, page-pool.ts (warm pages per tenant, spares), load.ts and waits.ts (navigation,
 * network, bounded waits), job.ts and attempt.ts (one job within its deadline).
 */
import { DEFAULT_VIEWPORTS } from '../contract/api-contract.ts'
import { abortable } from '../shared/abortable.ts'
import { BrowserGone, Browsers, disconnects } from './browser.ts'
import { createEgressProxy, type EgressProxy } from './egress.ts'
import { EngineError, type Engine, type EngineInput, type EngineResult } from './engine.ts'
import { Jobs } from './job.ts'
import { resolveEngineOptions, type ChromiumEngineOptions, type ResolvedEngineOptions } from './options.ts'
import { PagePool } from './page-pool.ts'

export type { ChromiumEngineOptions } from './options.ts'

/** How long an unexpected error waits to learn whether the browser went away under it. */
const DISCONNECT_GRACE_MS = 2000

/** The browser an engine runs, as an operator checks it. */
export interface BrowserIdentity {
  /** Its executable. */
  executablePath: string
  /** Its version, as the browser says it (e.g. `142.0.7444.59`). */
  version: string
}

export interface ChromiumEngine extends Engine {
  /** Launches the browser now (else the first job does): a browser that cannot start fails here, with its reason. */
  ready(): Promise<BrowserIdentity>
  close(): Promise<void>
}

/** Throws a hint to install a browser when none is found; the browser itself starts with the first job. */
export function createChromiumEngine(options: ChromiumEngineOptions = {}): ChromiumEngine {
  return new ChromiumCriticalCss(resolveEngineOptions(options))
}

class ChromiumCriticalCss implements ChromiumEngine {
  readonly #log: ResolvedEngineOptions['log']
  readonly #executablePath: string
  readonly #browsers: Browsers
  readonly #pool: PagePool
  readonly #jobs: Jobs
  readonly #egress: EgressProxy

  constructor(options: ResolvedEngineOptions) {
    this.#log = options.log
    this.#executablePath = options.executablePath
    // One way out for every context: its gate admits, resolves within a bound, and can cut a host.
    this.#egress = createEgressProxy(options.admit, options.log)
    const egress = () => this.#egress.open()
    this.#browsers = new Browsers({ ...options, egress })
    this.#pool = new PagePool(this.#browsers, { egress, warmPages: options.warmPages, sparesAfterJobs: options.sparesAfterJobs, idleMs: options.idleMs, log: options.log })
    this.#jobs = new Jobs(this.#pool, options)
    // A dead browser's spares and warm pages are closed, never handed out.
    this.#browsers.onForget((launched) => this.#pool.forget(launched))
  }

  async generate(input: EngineInput): Promise<EngineResult> {
    return { ...(await this.#generate(input)), engine: 'chromium' }
  }

  async #generate(input: EngineInput): Promise<EngineResult> {
    const launched = await abortable(this.#browsers.launch(), input.signal)
    try {
      return await this.#jobs.attempt(launched, input)
    } catch (error) {
      // A call can hear of the browser's end before its connection does: an unexpected error waits a moment for it.
      const gone = error instanceof BrowserGone || (!(error instanceof EngineError) && (await disconnects(launched.browser, DISCONNECT_GRACE_MS)))
      if (input.signal.aborted || this.#browsers.closed || !gone) throw error
      // The browser died under this job (or stopped answering and was killed): a fresh one gets
      // one more try. A page whose own renderer died is not tried again (RendererCrash).
      this.#log({ event: 'browser_crashed', relaunch: true })
      this.#browsers.forget(launched)
      return await this.#jobs.attempt(await abortable(this.#browsers.launch(), input.signal), input)
    }
  }

  async ready(): Promise<BrowserIdentity> {
    const launched = await this.#browsers.launch()
    // The first jobs find their pages open: a page's renderer takes a while to start.
    this.#pool.refill(launched, [DEFAULT_VIEWPORTS[0]!, DEFAULT_VIEWPORTS[0]!])
    return { executablePath: this.#executablePath, version: launched.browser.version() }
  }

  async close(): Promise<void> {
    // The pages first, then the browser: nothing kept is handed out once closing began.
    this.#pool.close()
    await this.#browsers.close()
    await this.#egress.close()
  }
}
