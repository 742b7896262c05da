/**
 * What a load waits for before the page is read, each wait on its own bound: the page's own
 * resources, its own fonts, a meta refresh about to move it, a resize taking effect. None
 * waits on another host longer than a short window: a third-party host holds no job, and is
 * cut when it would.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Page } from 'playwright-core'
import type { ThirdPartyPolicy } from '../contract/api-contract.ts'
import { shownHost, type EgressGate } from './egress.ts'
import { EngineError } from './engine.ts'
import { PageNetwork } from './page-network.ts'

/** How often, and for how long in a row, nothing of the page's own is in flight before it counts as loaded. */
const QUIET_CHECK_MS = 25
const QUIET_CHECKS = 3
/** How long a font of another host may hold a read once the page's own fonts are in. */
const OTHER_FONTS_MS = 300
/** How long after layout a face the page loads may take to show on the network, and how often that is looked at. */
const FONT_REQUEST_SEEN_MS = 100
const FONT_REQUEST_CHECK_MS = 10
/** How long past its due time a meta refresh is given to move the page. */
const REFRESH_GRACE_MS = 2000
/** Longest wait for a resize to take effect in the page: a hidden page gets no frames. */
export const AFTER_RESIZE_MS = 500
/** How long the parser a cut script held is given to reach the end of the document. */
const AFTER_CUT_MS = 500
/** Hosts a page still waits on named in the failure that says so. */
const MAX_HOSTS_NAMED = 3

export interface SettleBounds {
  /** Longest wait for the page's own resources. */
  loadMs: number
  /** Longest another host may hold the page once the page's own resources are in (`cut`). */
  thirdPartyMs: number
  thirdParty: ThirdPartyPolicy
}

/**
 * Waits, at most `bounds.loadMs`, until the page has what shapes its first screen: the `load`
 * event, or, sooner, its document parsed with nothing of its own in flight for a few checks
 * in a row and no other host's script, stylesheet, font or fetch pending. Once its own are in,
 * another host whose request has been pending `thirdPartyMs` (from when it was sent) is cut
 * by the gate (`cut`), and the page goes on as a browser does after a network error: a
 * blocking script that fails is skipped, a stylesheet that fails is absent. Under `wait`
 * other hosts are waited for like the page's own.
 */
export async function pageSettled(page: Page, network: PageNetwork, gate: EgressGate, bounds: SettleBounds): Promise<void> {
  const until = Date.now() + bounds.loadMs
  const state = { loaded: false, parsed: false }
  const stop = new AbortController()
  // Each for the document the page is on now: a load state it reached before this call counts.
  // Settles only when the event came (a wait that failed leaves the checks to their pace).
  const loaded = new Promise<void>((resolve) => {
    page.waitForLoadState('load', { timeout: bounds.loadMs + AFTER_CUT_MS }).then(() => {
      state.loaded = true
      resolve()
    }, () => {})
  })
  void page.waitForLoadState('domcontentloaded', { timeout: bounds.loadMs + AFTER_CUT_MS }).then(() => (state.parsed = true), () => {})
  const cut = (holding: Map<string, unknown>, reason: string): void => {
    for (const authority of holding.keys()) gate.cut(authority, reason)
  }
  try {
    let calm = 0
    for (;;) {
      if (state.loaded) return
      calm = network.ownInFlight(page) ? 0 : calm + 1
      const holding = network.holdingHosts(page)
      if (calm >= QUIET_CHECKS) {
        if (state.parsed && holding.size === 0) return
        if (bounds.thirdParty !== 'wait') {
          // Each host on its own clock, from its oldest request: one sent early costs the page nothing more once its own are in.
          const now = Date.now()
          for (const [authority, sent] of holding) if (now - sent >= bounds.thirdPartyMs) gate.cut(authority, `no answer within ${seconds(bounds.thirdPartyMs)}`, true)
        }
      }
      if (Date.now() >= until) {
        if (bounds.thirdParty === 'wait' || holding.size === 0) return
        cut(holding, `still loading when the page’s load bound (${seconds(bounds.loadMs)}) ended`)
        // The parser a cut script held goes on at once: a moment for it to get to the end.
        const parsedBy = Date.now() + AFTER_CUT_MS
        while (!state.parsed && Date.now() < parsedBy) await sleep(QUIET_CHECK_MS, undefined, { signal: stop.signal })
        return
      }
      // The load event ends the wait when it comes, not at the next check.
      await Promise.race([sleep(QUIET_CHECK_MS, undefined, { signal: stop.signal }), loaded])
    }
  } finally {
    stop.abort()
  }
}

/**
 * A parser still held once {@link pageSettled} gave up: by a script of the page's own that
 * never came, or (third party `wait`) another host's. The failure names what it waited on,
 * never the page's own host by name: the user knows where the page is.
 */
export function stillParsing(page: Page, network: PageNetwork): EngineError {
  const own = network
    .inFlightBy(page)
    .filter((entry) => entry.own)
    .map((entry) => pathOf(entry.request.url()))
  const others = [...network.holdingHosts(page).keys()].map(shownHost)
  const waited = [...others, ...own.map((path) => `its own ${path}`)].slice(0, MAX_HOSTS_NAMED)
  return new EngineError('render_failed', `The page was still being parsed when its load bound ended${waited.length ? `, waiting on ${waited.join(', ')}` : ''}; its first screen is not known.`)
}

function pathOf(url: string): string {
  if (!URL.canParse(url)) return url.slice(0, 100)
  const parsed = new URL(url)
  return `${parsed.pathname}${parsed.search}`.slice(0, 100)
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/**
 * Waits, at most `waitMs`, for the page's own web fonts in flight (they move the fold), and
 * says how long the read may still wait for fonts: another host's font still loading gets a
 * short window, not the whole bound. The page is laid out first: a face is requested only
 * once text is laid out with it, which may come after the page loaded, and a face the page
 * has started loading shows on the network a moment later.
 */
export async function ownFontsIn(page: Page, network: PageNetwork, waitMs: number): Promise<number> {
  const fonts = (own: boolean): boolean => network.inFlightBy(page).some((entry) => entry.request.resourceType() === 'font' && entry.own === own)
  const until = Date.now() + waitMs
  let loading = await page.evaluate('document.documentElement.getBoundingClientRect(), document.fonts.status === "loading"')
  const seenBy = Math.min(until, Date.now() + FONT_REQUEST_SEEN_MS)
  // Until a face shows on the network, or the page is no longer loading any (a face that failed at once, a local or data: one).
  while (loading === true && !fonts(true) && !fonts(false) && Date.now() < seenBy) {
    await sleep(FONT_REQUEST_CHECK_MS)
    loading = await page.evaluate('document.fonts.status === "loading"')
  }
  while (fonts(true) && Date.now() < until) await sleep(QUIET_CHECK_MS)
  const left = Math.max(0, until - Date.now())
  return fonts(false) ? Math.min(OTHER_FONTS_MS, left) : left
}

/** Whether a meta refresh due in `refreshMs` moves the main frame within its grace, and at most `leftMs`. */
export function refreshMoves(page: Page, refreshMs: number, leftMs: number): Promise<boolean> {
  return page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: Math.min(refreshMs + REFRESH_GRACE_MS, leftMs) }).then(
    () => true,
    () => false,
  )
}

/** In the page: two frames after a resize, so `resize` listeners and media-query handlers have run (at most `maxMs`). */
export function afterResize(maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, maxMs)
    requestAnimationFrame(() => requestAnimationFrame(() => resolve()))
  })
}
