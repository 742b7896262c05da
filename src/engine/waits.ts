/**
 * What a load waits for before the page is read, each wait on its own bound: the page's own
 * resources, its own fonts, a meta refresh about to move it, a resize taking effect. None
 * waits on another host longer than a short window: a third-party host holds no job.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Page, Request } from 'playwright-core'
import { EngineError } from './engine.ts'

/** How often, and for how long in a row, nothing of the page's own is in flight before it counts as loaded. */
const QUIET_CHECK_MS = 25
const QUIET_CHECKS = 3
/** How long a font of another host may hold a read once the page's own fonts are in. */
const OTHER_FONTS_MS = 300
/** How long past its due time a meta refresh is given to move the page. */
const REFRESH_GRACE_MS = 2000
/** Longest wait for a resize to take effect in the page: a hidden page gets no frames. */
export const AFTER_RESIZE_MS = 500
/** Hosts a page still waits on named in the failure that says so. */
const MAX_HOSTS_NAMED = 3

/**
 * Waits, at most `waitMs`, until the page has what shapes its first screen: the `load`
 * event, or, sooner, its document parsed with no stylesheet and nothing from its own
 * origin in flight for a few checks in a row. Another host's script, image or font still
 * loading does not hold it (its fonts are waited for, within their own bound, when read).
 */
export async function ownResourcesIn(page: Page, inFlight: Set<Request>, waitMs: number): Promise<void> {
  const origin = new URL(page.url()).origin
  const own = (request: Request): boolean => request.resourceType() === 'stylesheet' || sameOrigin(request.url(), origin)
  const stop = new AbortController()
  const quiet = (async () => {
    await page.waitForLoadState('domcontentloaded', { timeout: waitMs })
    for (let calm = 0; calm < QUIET_CHECKS; ) {
      await sleep(QUIET_CHECK_MS, undefined, { signal: stop.signal })
      calm = [...inFlight].some(own) ? 0 : calm + 1
    }
  })()
  try {
    await Promise.race([page.waitForLoadState('load', { timeout: waitMs }), quiet, sleep(waitMs, undefined, { signal: stop.signal })]).catch(() => {})
  } finally {
    stop.abort()
    quiet.catch(() => {})
  }
}

/**
 * A parser held by a script that never came (a host that takes the connection and says
 * nothing) once {@link ownResourcesIn} gave up: the failure names the hosts still waited on.
 */
export function stillParsing(inFlight: Set<Request>): EngineError {
  const hosts = [...new Set([...inFlight].map((request) => (URL.canParse(request.url()) ? new URL(request.url()).host : request.url())))].slice(0, MAX_HOSTS_NAMED)
  return new EngineError('render_failed', `The page was still being parsed when its load bound ended${hosts.length ? `, waiting on ${hosts.join(', ')}` : ''}; its first screen is not known.`)
}

/**
 * Waits, at most `waitMs`, for the page's own web fonts in flight (they move the fold), and
 * says how long the read may still wait for fonts: another host's font still loading gets a
 * short window, not the whole bound.
 */
export async function ownFontsIn(page: Page, inFlight: Set<Request>, waitMs: number): Promise<number> {
  const origin = new URL(page.url()).origin
  const fonts = (own: boolean): boolean => [...inFlight].some((request) => request.resourceType() === 'font' && sameOrigin(request.url(), origin) === own)
  const until = Date.now() + waitMs
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

function sameOrigin(url: string, origin: string): boolean {
  return URL.canParse(url) && new URL(url).origin === origin
}
