/**
 * Loading a page for a job: the navigation, the hops a page makes on its own (meta refresh,
 * `location` by script), the network the page uses while it loads, and the read of the page
 * once it has what shapes its first screen; and the same page at another viewport.
 */
import type { Page, Request, Response } from 'playwright-core'
import type { ThirdPartyPolicy, Viewport } from '../contract/api-contract.ts'
import { CRITICAL_STYLE_ATTRIBUTE } from '../html/outline.ts'
import { timed } from '../shared/timings.ts'
import type { Attempt } from './attempt.ts'
import { BrowserGone } from './browser.ts'
import { authorityOf, type EgressGate, type Unreached } from './egress.ts'
import { navigationRefused, notAnHtmlPage } from './page-refusals.ts'
import { EngineError } from './engine.ts'
import { MAX_FRAMES, MAX_PAGE_CSS_BYTES, MAX_PRESENT_CHARS, MAX_PRESENT_TOKENS, mebibytes } from './limits.ts'
import { STOP_WORKERS_KEY, settle, type SettledPage } from './extract.ts'
import type { ResolvedEngineOptions } from './options.ts'
import { PageNetwork } from './page-network.ts'
import { CLEAR_SESSION_SCRIPT, sameSize, type Spare } from './page-pool.ts'
import { cssOverBound, ReceivedBytes } from './received-bytes.ts'
import { AFTER_RESIZE_MS, afterResize, ownFontsIn, pageSettled, refreshMoves, stillParsing } from './waits.ts'

/** Navigations after the first load (meta refresh, `location` by script) followed before a page is given up on. */
const MAX_PAGE_HOPS = 3
/** A meta refresh due within this long is waited for; a later one leaves the page as it is. */
const MAX_REFRESH_WAIT_MS = 3000
/** Console messages a page's workers may log before the job fails: each one crosses to the service. */
const MAX_WORKER_CONSOLE_MESSAGES = 1000
const HTTP_URL = /^https?:/
const NET_ERROR = /net::[A-Z_]+/
const TIMEOUT = /timeout/i
/** What a read of a page that navigated away meanwhile fails with. */
const NAVIGATION_RACE = /Execution context was destroyed|navigat/i

export type LoadOptions = Pick<ResolvedEngineOptions, 'navigationTimeoutMs' | 'loadTimeoutMs' | 'thirdPartyTimeoutMs' | 'fontsTimeoutMs' | 'log'> & { thirdParty: ThirdPartyPolicy }

export interface LoadedView {
  spare: Spare
  page: Page
  listed: SettledPage
  /** What the load did on the network: stylesheet responses (bodies are read once per job, when needed), failures, requests in flight. */
  network: PageNetwork
  /** What the page received, counted as it came; the way its stylesheet bodies are read. */
  received: ReceivedBytes
}

export const MOVED_WHILE_MEASURED = 'The page navigated away by itself while it was being measured (a script or a refresh moved it on); its first screen is not known.'

/** The page's own renderer died (out of memory, killed): the job fails, and is not tried again, since the page would do it again. */
class RendererCrash extends EngineError {
  constructor() {
    super('render_failed', "The page's renderer crashed while rendering it (out of memory, or killed); the page is not tried again.")
  }
}

/** Loads `url` in the job's page at `viewport` and reads it, every wait within `remaining()`. */
export async function loadPage(spare: Spare, url: string, viewport: Viewport, remaining: () => number, attempt: Attempt, options: LoadOptions): Promise<LoadedView> {
  const { launched, page, gate, viewport: opened } = spare
  spare.viewport = viewport
  // What the page stores is kept per origin: every origin it reaches is cleared after the job.
  page.on('request', (request) => {
    if (HTTP_URL.test(request.url())) spare.origins.add(new URL(request.url()).origin)
  })
  let crashed = false
  page.on('crash', () => {
    crashed = true
    // Out of memory (the heap cap, the data limit) or killed: the same page would only do it again.
    options.log({ event: 'renderer_crashed', relaunch: false })
    attempt.fail(launched.browser.isConnected() ? new RendererCrash() : new BrowserGone())
  })
  // Workers get no init script: their console is counted instead, and a flood ends the job.
  page.on('worker', (worker) =>
    worker.on('console', () => {
      if (++attempt.workerMessages !== MAX_WORKER_CONSOLE_MESSAGES + 1) return
      attempt.fail(new EngineError('render_failed', `The page's workers logged more than ${MAX_WORKER_CONSOLE_MESSAGES} messages; the engine does not render a page that floods it.`))
    }),
  )
  // The browser's state, read after a call failed: a dead renderer or browser says more than the call's own error.
  const died = (): EngineError | null => (!launched.browser.isConnected() || launched.dead ? new BrowserGone() : crashed ? new RendererCrash() : null)
  // A page that keeps attaching frames floods the browser and this process with their documents and events.
  let frames = 0
  page.on('frameattached', () => {
    if (++frames !== MAX_FRAMES + 1) return
    attempt.fail(new EngineError('render_failed', `The page attached more than ${MAX_FRAMES} frames; the engine does not render a page that floods it.`))
  })
  spare.session ??= await spare.context.newCDPSession(page)
  const received = await ReceivedBytes.watch(spare.session, (error) => attempt.fail(error))
  attempt.onClose(() => received.stop())
  if (!sameSize(opened, viewport)) await page.setViewportSize(viewport)
  const network = new PageNetwork(page)
  // Under `block` nothing but the page's own host is contacted, from its first request on.
  gate.only(options.thirdParty === 'block' ? [authorityOf(url)!] : null)
  // On a warm page, the documents this navigation creates start with no session storage, as in a new tab:
  // what the last job's page wrote as it was left (pagehide) is gone before this page's scripts run.
  const sessionReset = spare.uses > 1 ? await page.addInitScript({ content: CLEAR_SESSION_SCRIPT }) : null
  let response: Response | null
  const navigationMs = Math.min(options.navigationTimeoutMs, remaining())
  try {
    response = await timed('load: navigate', () => page.goto(url, { waitUntil: 'commit', timeout: navigationMs }), url)
    await sessionReset?.dispose()
  } catch (error) {
    const death = died()
    if (death) throw death
    const refused = refusedNavigation(gate, network)
    if (refused) throw navigationRefused(refused, 'page')
    throw new EngineError('fetch_failed', `The page could not be loaded: ${navigationError(error, navigationMs)}.`)
  }
  // A redirect the gate refused ends the navigation on the gate's own 403.
  const refused = response?.ok() ? null : refusedNavigation(gate, network)
  if (refused) throw navigationRefused(refused, 'redirect')
  if (!response) throw new EngineError('fetch_failed', 'The page could not be loaded: no response.')
  if (!response.ok()) throw new EngineError('fetch_failed', `The page answered HTTP ${response.status()}.`)
  // An XML document (a feed, an XSLT page) is shown by the browser's own viewer or a transform, not styled by sheets one can inline.
  const notHtml = notAnHtmlPage(response.headers()['content-type'])
  if (notHtml) throw notHtml
  // A page may move on by meta refresh or script before it is read: the page it lands on
  // is the one a visitor sees, so it is followed, a few hops at most.
  // Main-frame navigations so far: a read that saw one happen is of a page already gone, or not yet loaded.
  let navigations = 0
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++
  })
  const landing = (): Promise<unknown> =>
    page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: Math.min(options.navigationTimeoutMs, remaining()) }).catch(() => {})
  for (let hop = 0; ; hop++) {
    const seen = navigations
    try {
      // Bounded waits: an unreachable font host or a stalled CDN must not hold the job.
      await timed('load: settle', () => pageSettled(page, network, gate, { loadMs: Math.min(options.loadTimeoutMs, remaining()), thirdPartyMs: options.thirdPartyTimeoutMs, thirdParty: options.thirdParty }), url)
      if (navigations !== seen && hop < MAX_PAGE_HOPS) continue
      const fontsMs = await timed('load: own fonts', () => ownFontsIn(page, network, Math.min(options.fontsTimeoutMs, remaining())), url)
      const listed = await timed('load: read', () => readPage(page, fontsMs), url)
      // Read without them: another host's font or script still coming changes nothing in this job any more.
      for (const authority of network.holdingHosts(page).keys()) gate.cut(authority, 'still loading when the page was read')
      // The page moved on while it was read (a refresh or script firing just then): read the page it landed on.
      if (navigations !== seen && hop < MAX_PAGE_HOPS) continue
      // Asked to move on and not there yet: Playwright's next read would wait for that navigation and run in the
      // document it brings. Followed as one that landed is, once it lands (or the job's time is up).
      if (network.pendingNavigations.size > 0) {
        if (hop >= MAX_PAGE_HOPS) throw keptNavigating(hop)
        await landing()
        continue
      }
      const { refreshMs } = listed
      if (refreshMs !== null && refreshMs <= MAX_REFRESH_WAIT_MS && hop < MAX_PAGE_HOPS) {
        // A refresh that is about to move the page: read the page it moves to.
        const moved = navigations !== seen || (await refreshMoves(page, refreshMs, remaining()))
        if (moved) continue
      }
      // A parser held by a script that never came: the first screen is not known, and a read now would find no body.
      if (!listed.parsed) throw stillParsing(page, network)
      // The page moved on by script to something that did not load: that is the page a visitor would get, not a page to read.
      if (network.failure) throw movedOn(gate, network)
      // Read: from here a page that asks to move on fails at once, whenever (or whether) the next document comes.
      const moving = (request: Request): void => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) attempt.fail(new EngineError('render_failed', MOVED_WHILE_MEASURED))
      }
      page.on('request', moving)
      attempt.onClose(() => page.off('request', moving))
      return { spare, page, listed, network, received }
    } catch (error) {
      const death = died()
      if (death) throw death
      if (!isNavigationRace(error)) throw error
      const refused = refusedNavigation(gate, network)
      if (refused) throw navigationRefused(refused, 'moved')
      if (hop >= MAX_PAGE_HOPS) throw keptNavigating(hop)
      // The old document's context can be gone before the browser says the new one committed: a read now would
      // race the same navigation again. The next hop starts once it has landed.
      if (navigations === seen) await landing()
    }
  }
}

function keptNavigating(hop: number): EngineError {
  return new EngineError('render_failed', `The page kept navigating (${hop + 1} times after it loaded) and could not be read.`)
}

/** Why the gate let none of the hosts the main frame navigated to out (the latest first), or null. */
function refusedNavigation(gate: EgressGate, network: PageNetwork): Unreached | null {
  for (const authority of [...network.navigations].reverse()) {
    const why = gate.unreached.get(authority)
    if (why) return why
  }
  return null
}

/** The page moved on to something that did not load. */
function movedOn(gate: EgressGate, network: PageNetwork): EngineError {
  const refused = refusedNavigation(gate, network)
  return refused ? navigationRefused(refused, 'moved') : new EngineError('fetch_failed', `The page moved on to ${network.failure}.`)
}

/** The page at another viewport, read again once its layout and scripts have seen the resize. */
export async function resizePage({ page, network }: LoadedView, viewport: Viewport, remaining: () => number, fontsTimeoutMs: number): Promise<SettledPage> {
  await page.setViewportSize(viewport)
  await inPage(page, afterResize, AFTER_RESIZE_MS)
  const fontsMs = await ownFontsIn(page, network, Math.min(fontsTimeoutMs, remaining()))
  return await readPage(page, fontsMs)
}

/** The page read again where it is, after something other than its size changed what it shows (a colour scheme). */
export async function readAgain({ page, network }: LoadedView, remaining: () => number, fontsTimeoutMs: number): Promise<SettledPage> {
  const fontsMs = await ownFontsIn(page, network, Math.min(fontsTimeoutMs, remaining()))
  return await readPage(page, fontsMs)
}

/** The page read once it has what shapes its first screen; a page past a bound of the read fails, naming it. */
async function readPage(page: Page, fontsMs: number): Promise<SettledPage> {
  const listed = await inPage(page, settle, { fontsMs, stopWorkersKey: STOP_WORKERS_KEY, ignoreAttribute: CRITICAL_STYLE_ATTRIBUTE, maxCssChars: MAX_PAGE_CSS_BYTES, maxTokens: MAX_PRESENT_TOKENS, maxTokenChars: MAX_PRESENT_CHARS })
  if (listed.over?.what === 'css') throw cssOverBound(listed.over.count)
  if (listed.over) throw new EngineError('render_failed', `The page has more distinct tags, ids and classes above the fold than the engine reads (${MAX_PRESENT_TOKENS.toLocaleString('en')}, or ${mebibytes(MAX_PRESENT_CHARS)} of names).`)
  return listed
}

/**
 * Runs one of extract.ts's functions in the page from its source text. Transpilers may
 * wrap named functions in a `__name(…)` helper that only exists in this process; the page
 * gets a harmless one in the same scope.
 */
export function inPage<A, R>(page: Page, fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  const source = `(() => { const __name = (target) => target; return (${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)}) })()`
  return page.evaluate(source) as Promise<R>
}

/** A read of the page cut short because it navigated away meanwhile. */
export function isNavigationRace(error: unknown): boolean {
  return error instanceof Error && NAVIGATION_RACE.test(error.message)
}

/** What went wrong with the navigation; a timeout says what it waited for, and how long. */
function navigationError(error: unknown, waitedMs: number): string {
  const message = error instanceof Error ? error.message : String(error)
  const net = NET_ERROR.exec(message)
  if (net) return net[0]
  return TIMEOUT.test(message) ? `no first response within ${(waitedMs / 1000).toFixed(1)} s` : 'navigation failed'
}
