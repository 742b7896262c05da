/**
 * Pages for jobs: a warm page per tenant, kept from its last job and cleared, or a spare
 * opened ahead of the next job (starting a page's renderer is most of a small page's cost),
 * or a new one. A browser's pages never outlive it: a dead browser's are closed, never handed out.
 * Nor do they outlive the jobs they wait for: an engine without jobs closes its spares, then its
 * warm pages (`idleMs`), and keeps only its browser.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import type { Viewport } from '../contract/api-contract.ts'
import { BrowserGone, type BrowserOptions, type LaunchedBrowser } from './browser.ts'
import { contextProxy } from './flags.ts'
import type { EgressGate } from './egress.ts'
import { holdPermissionsAtPrompt } from './permissions.ts'
import { STOP_WORKERS_KEY } from './extract.ts'
import type { ResolvedEngineOptions } from './options.ts'

/** Contexts opened ahead of the next job: starting a page's renderer is most of a small page's cost. */
const MAX_SPARE_PAGES = 4
/** Jobs one warm page serves before it is closed and a fresh one opened: what a renderer keeps between pages adds up. */
const MAX_WARM_USES = 50
/** Longest a warm page may take to be cleared; one that takes longer (a page that will not let go) is closed instead. */
const CLEAR_TIMEOUT_MS = 2000
/** Longest a page is given to move itself to about:blank when asked before the browser moves it. */
const SELF_NAVIGATION_MS = 500
/** Longest delay a Node timer takes (2^31 - 1 ms); a longer idle time is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Runs in every frame before the page's own scripts: the console says nothing, so a page that
 * logs in a loop costs the browser and the service nothing; uncaught errors are not reported
 * either (preventDefault keeps them from the DevTools connection). Non-configurable: the page
 * cannot put the methods back.
 *
 * It also keeps the page's dedicated workers, so that the read can stop them (extract.ts,
 * {@link STOP_WORKERS_KEY}): a worker cannot touch the document, and what it still computes
 * once the page is read (a documentation site's search index, built anew on every page, is
 * most of such a page's CPU) changes nothing the job measures. A worker the page starts after
 * that is stopped at once.
 */
const QUIET_PAGE_SCRIPT = `(() => {
  const quiet = function () {};
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'assert', 'time', 'timeLog', 'timeEnd', 'timeStamp', 'profile', 'profileEnd', 'clear']) {
    try { Object.defineProperty(console, name, { value: quiet, writable: false, configurable: false, enumerable: true }); } catch {}
  }
  addEventListener('error', (event) => event.preventDefault());
  addEventListener('unhandledrejection', (event) => event.preventDefault());
  const Native = self.Worker;
  if (typeof Native === 'function') {
    const workers = [];
    let stopped = false;
    const Tracked = new Proxy(Native, {
      construct(target, args, newTarget) {
        const worker = Reflect.construct(target, args, newTarget);
        if (stopped) worker.terminate();
        else workers.push(worker);
        return worker;
      },
    });
    Object.defineProperty(self, 'Worker', { value: Tracked, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(self, Symbol.for(${JSON.stringify(STOP_WORKERS_KEY)}), {
      value: () => {
        stopped = true;
        for (const worker of workers.splice(0)) worker.terminate();
      },
    });
  }
})();`

/** Clears a document's session storage: a warm page's frames as it is cleared, and its first documents of a job, before their own scripts. */
export const CLEAR_SESSION_SCRIPT = `try { sessionStorage.clear() } catch {}`

export interface Spare {
  launched: LaunchedBrowser
  context: BrowserContext
  page: Page
  viewport: Viewport
  /** The context's way out, and the record of what its job could not reach. */
  gate: EgressGate
  /** Its renderer died before a job took it. */
  crashed: boolean
  /** Set once it is being closed. */
  closing: Promise<void> | null
  /** The tenant whose jobs it serves, once one took it: it never serves another. */
  tenant: string | null
  /** Jobs it served. */
  uses: number
  /** Its last job found it kept for its tenant (not a spare, not a new page). */
  fromWarm: boolean
  /** Origins its pages reached since it was last cleared. */
  origins: Set<string>
  /** Its page's DevTools session, for clearing what the page stored; opened when first needed. */
  session: CDPSession | null
}

/** What the pool asks of the engine's browsers. */
export interface PoolBrowsers {
  /** Set once the engine closed. */
  readonly closed: boolean
  /** Whether `launched` is still the browser jobs are given. */
  isCurrent(launched: LaunchedBrowser): boolean
  /** `call`, or BrowserGone when the browser does not answer it in time (and is replaced). */
  answered<T>(launched: LaunchedBrowser, call: Promise<T>): Promise<T>
}

/** A page on its way: tagged with its browser up front, since a dead browser's pending pages never settle. */
interface Pending {
  launched: LaunchedBrowser
  ready: Promise<Spare | null>
}

type PoolOptions = Pick<BrowserOptions, 'egress'> & Pick<ResolvedEngineOptions, 'warmPages' | 'sparesAfterJobs' | 'idleMs' | 'log'>

export class PagePool {
  readonly #browsers: PoolBrowsers
  readonly #options: PoolOptions
  /** Pages opened ahead of a job, each with when it was opened (one that waits its idle time unused is closed) and whether it is open yet. */
  #spares: (Pending & { viewport: Viewport; openedAt: number; open: boolean })[] = []
  /** Pages of finished jobs, oldest first, each kept for its tenant only and cleared before it is handed out. */
  #warm: (Pending & { tenant: string; cleared: boolean })[] = []
  /** When a job last took a page or gave one back (or pages were opened ahead of one): the idle times count from it. */
  #active = performance.now()
  /** Set while pages are kept: fires at the first idle time due, unreferenced (it never keeps the process alive). */
  #idleTimer: NodeJS.Timeout | null = null
  #closed = false
  /** Pages jobs have taken and not given back: a tenant's pages are those and its warm ones. */
  readonly #inUse = new Set<Spare>()
  /** Jobs of each tenant taking a page now (waiting for its clearing or its opening): theirs count too. */
  readonly #taking = new Map<string, number>()

  constructor(browsers: PoolBrowsers, options: PoolOptions) {
    this.#browsers = browsers
    this.#options = options
  }

  /**
   * The tenant's warm page when it has one, else a fresh context and page: a spare opened ahead
   * when one is ready (one of this viewport's size first), else a new one.
   */
  async take(launched: LaunchedBrowser, viewport: Viewport, tenant: string | undefined): Promise<Spare> {
    if (launched.dead) throw new BrowserGone()
    this.#touch()
    if (tenant !== undefined) this.#taking.set(tenant, (this.#taking.get(tenant) ?? 0) + 1)
    try {
      const warm = tenant === undefined ? null : await this.#warmPage(launched, tenant)
      const spare = warm ?? (await this.#freshPage(launched, viewport))
      spare.tenant = tenant ?? null
      spare.fromWarm = warm !== null
      spare.uses++
      this.#inUse.add(spare)
      return spare
    } finally {
      if (tenant !== undefined) this.#taking.set(tenant, this.#taking.get(tenant)! - 1)
    }
  }

  /**
   * Spares for the next job, one per viewport of this one: a page's renderer takes a while to
   * start. After a job (`served`: the page it ran on), only when it had no warm page and the
   * engine opens spares after jobs: a tenant whose jobs find their warm pages needs no spare,
   * and each costs a renderer's memory.
   */
  refill(launched: LaunchedBrowser, viewports: Viewport[], served?: Spare): void {
    if (launched.dead || !this.#browsers.isCurrent(launched)) return
    if (served !== undefined && (served.fromWarm || !this.#options.sparesAfterJobs)) return
    for (const viewport of viewports.slice(0, MAX_SPARE_PAGES)) {
      if (this.#spares.filter((spare) => sameSize(spare.viewport, viewport)).length >= viewports.filter((other) => sameSize(other, viewport)).length) continue
      const spare = { launched, viewport, openedAt: performance.now(), open: false, ready: this.#newPage(launched, viewport).catch(() => null) }
      void spare.ready.then((ready) => (spare.open = ready !== null))
      this.#spares.push(spare)
    }
    this.#spares.splice(0, Math.max(0, this.#spares.length - MAX_SPARE_PAGES)).forEach((spare) => void spare.ready.then((ready) => ready && this.discard(ready)))
    this.#touch()
  }

  /**
   * Keeps a finished job's page for its tenant's next job, cleared of what the job's pages left
   * behind. Past the warm bound the least recently used page is closed.
   */
  park(spare: Spare): void {
    this.#inUse.delete(spare)
    const { launched, tenant } = spare
    if (tenant === null || this.#browsers.closed || launched.dead || !this.#browsers.isCurrent(launched) || spare.crashed) {
      void this.discard(spare)
      return
    }
    if (spare.uses >= MAX_WARM_USES) {
      // Its successor is opened now, for the tenant: its next job finds a page as it would have, and no spare waits for it.
      void this.discard(spare)
      const fresh = { launched, tenant, cleared: true, ready: this.#newPage(launched, spare.viewport).catch(() => null) }
      this.#warm.push(fresh)
      this.#discardAll(this.#warm.splice(0, Math.max(0, this.#warm.length - this.#options.warmPages)))
      this.#touch()
      return
    }
    spare.viewport = spare.page.viewportSize() ?? spare.viewport
    // The job's own listeners go with it; the crash flag stays.
    spare.page.removeAllListeners()
    spare.page.once('crash', () => (spare.crashed = true))
    const warm = { launched, tenant, ready: Promise.resolve<Spare | null>(null), cleared: false }
    warm.ready = this.#cleared(spare).then((cleared) => {
      warm.cleared = true
      if (cleared) return spare
      // Its successor costs a renderer, as a page per job would: said, so the cost is seen.
      this.#options.log({ event: 'warm_page_renewed', reason: 'not cleared in time' })
      void this.discard(spare)
      return null
    })
    this.#warm.push(warm)
    this.#discardAll(this.#warm.splice(0, Math.max(0, this.#warm.length - this.#options.warmPages)))
    this.#touch()
  }

  /** Closes a context, then its gate: what the page left open (a WebSocket, a beacon) is cut with it. A browser that does not close it in time is replaced. */
  discard(spare: Spare): Promise<void> {
    this.#inUse.delete(spare)
    spare.closing ??= this.#browsers
      .answered(spare.launched, spare.context.close())
      .catch(() => {})
      .finally(() => spare.gate.close())
    return spare.closing
  }

  /** Closes the pages of a browser that died or was killed: never handed out. */
  forget(launched: LaunchedBrowser): void {
    const gone = [...this.#spares, ...this.#warm].filter((spare) => spare.launched === launched)
    this.#spares = this.#spares.filter((spare) => spare.launched !== launched)
    this.#warm = this.#warm.filter((spare) => spare.launched !== launched)
    this.#discardAll(gone)
  }

  /** Closes every page kept; nothing is kept from then on. */
  close(): void {
    this.#closed = true
    if (this.#idleTimer) clearTimeout(this.#idleTimer)
    this.#idleTimer = null
    const kept = [...this.#spares, ...this.#warm]
    this.#spares = []
    this.#warm = []
    this.#discardAll(kept)
  }

  /** A job took a page or gave one back: the idle times start again, and the timer runs while pages are kept. */
  #touch(): void {
    this.#active = performance.now()
    this.#armIdle()
  }

  /** (Re)arms the idle timer for the first idle time due that has pages to close; none when nothing is kept. */
  #armIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer)
    this.#idleTimer = null
    if (this.#closed) return
    const { spares, warm } = this.#options.idleMs
    const oldestSpare = Math.min(...this.#spares.map((spare) => spare.openedAt))
    const due = Math.min(oldestSpare + spares, this.#warm.length > 0 ? this.#active + warm : Infinity)
    if (due === Infinity) return
    this.#idleTimer = setTimeout(() => this.#idle(), Math.min(MAX_TIMER_MS, Math.max(0, due - performance.now())))
    this.#idleTimer.unref()
  }

  /**
   * Closes each spare that waited its idle time untaken (busy or not: a tenant's jobs on warm
   * pages never take it), and the warm pages once the pool has gone without a job for theirs.
   */
  #idle(): void {
    this.#idleTimer = null
    const now = performance.now()
    const stale = this.#spares.filter((spare) => now - spare.openedAt >= this.#options.idleMs.spares)
    this.#spares = this.#spares.filter((spare) => !stale.includes(spare))
    this.#discardAll(stale)
    if (now - this.#active >= this.#options.idleMs.warm) this.#discardAll(this.#warm.splice(0))
    this.#armIdle()
  }

  #discardAll(pending: Pending[]): void {
    for (const spare of pending) void spare.ready.then((ready) => ready && this.discard(ready))
  }

  async #warmPage(launched: LaunchedBrowser, tenant: string): Promise<Spare | null> {
    this.#warm = this.#warm.filter((warm) => warm.launched === launched)
    // One already cleared first: the tenant's page of the job that just ended is still being cleared.
    const cleared = this.#warm.findIndex((warm) => warm.tenant === tenant && warm.cleared)
    const at = cleared >= 0 ? cleared : this.#warm.findIndex((warm) => warm.tenant === tenant)
    if (at < 0) return null
    // Rather than wait for it, an open spare, while the warm bound has room for one more page of the tenant's: its
    // jobs one after the other then take its two pages in turn, each cleared while the other works.
    // The job asking is one of those taking: the others' pages are on their way to them, out of the warm list and not yet in use.
    const tenantPages = this.#warm.filter((warm) => warm.tenant === tenant).length + [...this.#inUse].filter((page) => page.tenant === tenant).length + (this.#taking.get(tenant) ?? 1) - 1
    if (cleared < 0 && tenantPages < this.#options.warmPages && this.#spares.some((spare) => spare.launched === launched && spare.open)) return null
    const taken = this.#usable(launched, await this.#warm.splice(at, 1)[0]!.ready)
    // Cookies are cleared here, as the page is handed out, not with the rest: one the last page set as it was left
    // (pagehide) reaches the network service on the renderer's own channel, and under load it landed after a
    // clearing done as the page left. The next job starts later.
    if (taken) await this.#browsers.answered(launched, taken.context.clearCookies())
    return taken
  }

  async #freshPage(launched: LaunchedBrowser, viewport: Viewport): Promise<Spare> {
    this.#spares = this.#spares.filter((spare) => spare.launched === launched)
    // An open one of this viewport's size first, then one still opening.
    const open = this.#spares.findIndex((spare) => spare.open && sameSize(spare.viewport, viewport))
    const fits = open >= 0 ? open : this.#spares.findIndex((spare) => sameSize(spare.viewport, viewport))
    const taken = await this.#spares.splice(fits >= 0 ? fits : 0, 1)[0]?.ready
    return this.#usable(launched, taken) ?? (await this.#newPage(launched, viewport))
  }

  /** A page taken from the pool, when it can still serve a job; else it is closed. */
  #usable(launched: LaunchedBrowser, taken: Spare | null | undefined): Spare | null {
    if (taken && !taken.crashed && !taken.page.isClosed() && !launched.dead) return taken
    if (taken) void this.discard(taken)
    return null
  }

  async #newPage(launched: LaunchedBrowser, viewport: Viewport): Promise<Spare> {
    const gate = await this.#options.egress()
    try {
      const opened = this.#browsers.answered(
        launched,
        (async () => {
          // Loopback included, whatever the environment tells Playwright (contextProxy): nothing bypasses the gate.
          const context = await launched.browser.newContext({ viewport, deviceScaleFactor: 1, serviceWorkers: 'block', proxy: contextProxy(gate.server) })
          try {
            await context.addInitScript({ content: QUIET_PAGE_SCRIPT })
            const page = await context.newPage()
            const session = await context.newCDPSession(page)
            await holdPermissionsAtPrompt(launched.browser, session)
            return { context, page, session }
          } catch (error) {
            void context.close().catch(() => {})
            throw error
          }
        })(),
      )
      const { context, page, session } = await opened
      const spare: Spare = { launched, viewport, context, page, gate, crashed: false, closing: null, tenant: null, uses: 0, fromWarm: false, origins: new Set(), session }
      page.once('crash', () => (spare.crashed = true))
      return spare
    } catch (error) {
      gate.close()
      throw error
    }
  }

  /**
   * Clears what a page can leave for the next job of its tenant: popups, session storage,
   * the page itself (about:blank), `window.name`, and every origin's
   * local storage, IndexedDB, Cache Storage and service workers (permissions never change:
   * permissions.ts; cookies go as the page is handed out, in #warmPage). The HTTP cache stays: it is the tenant's own. `history.length` is not cleared. False when it could not be done in time.
   */
  async #cleared(spare: Spare): Promise<boolean> {
    const { context, page } = spare
    const clearing = (async () => {
      await Promise.all(context.pages().map((other) => (other === page ? null : other.close())))
      // Session storage belongs to the tab, per origin: cleared by each frame before the page leaves.
      await Promise.all(page.frames().map((frame) => frame.evaluate(CLEAR_SESSION_SCRIPT).catch(() => {})))
      if ((await leaveForBlank(page)) === 'browser') this.#options.log({ event: 'warm_page_renewed', reason: 'moved to about:blank by the browser, in a new renderer' })
      spare.session ??= await context.newCDPSession(page)
      const session = spare.session
      const origins = [...spare.origins]
      spare.origins.clear()
      await Promise.all([
        page.evaluate("window.name = ''"),
        ...origins.map((origin) => session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
      ])
      spare.gate.reset()
      return true
    })()
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLEAR_TIMEOUT_MS)))
    try {
      return await Promise.race([clearing.catch(() => false), late])
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Moves a page to about:blank, committed (the old document and its scripts are gone), in the
 * renderer it is in. Asked of the page itself, the blank document stays in the page's renderer
 * and the tenant's next page of the same site loads there too, with its stylesheets and
 * scripts already parsed; a navigation asked of the browser (`goto`) swaps in a new renderer
 * each time, whose start cost more than the rest of a small page's job. A page that holds the
 * navigation off (its `navigate` handler cancels it) is moved by the browser instead.
 */
async function leaveForBlank(page: Page): Promise<'self' | 'browser'> {
  if (page.url() === 'about:blank') return 'self'
  const committed = page.waitForURL('about:blank', { waitUntil: 'commit', timeout: SELF_NAVIGATION_MS })
  committed.catch(() => {})
  const asked = await page.evaluate("location.href = 'about:blank'").then(
    () => true,
    () => false,
  )
  if (asked && (await committed.then(() => true, () => false))) return 'self'
  await page.goto('about:blank', { waitUntil: 'commit' })
  return 'browser'
}

export function sameSize(a: Viewport, b: Viewport): boolean {
  return a.width === b.width && a.height === b.height
}
