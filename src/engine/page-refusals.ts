/**
 * Why a job's page is not rendered, in the words every engine fails it with: a navigation
 * the egress gate did not let out (refused by the policy is `blocked_url`; not reached,
 * `fetch_failed`), and a response that is not an HTML page.
 */
import type { Unreached } from './egress.ts'
import { EngineError } from './engine.ts'

/** Documents critical CSS is made for; a response without a type is sniffed by the browser, and read as it shows it. */
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml'])

/** Where a navigation the gate did not let out was going, in the failure's words. */
const NAVIGATION_STEP = {
  page: { refused: 'The service does not fetch this page', other: 'The page could not be loaded' },
  redirect: { refused: 'The page redirected to an address the service does not fetch', other: 'The page redirected to an address that could not be loaded' },
  moved: { refused: 'The page moved on to an address the service does not fetch', other: 'The page moved on to an address that could not be loaded' },
} as const

/** A navigation the gate did not let out: refused by the policy is `blocked_url`; not reached, `fetch_failed`. */
export function navigationRefused(why: Unreached, step: keyof typeof NAVIGATION_STEP): EngineError {
  const words = NAVIGATION_STEP[step]
  if (why.kind === 'refused') return new EngineError('blocked_url', `${words.refused}: ${why.reason}.`)
  if (why.kind === 'blocked') return new EngineError('fetch_failed', `${words.other}: it is on another host, and only the page’s own host is contacted (third party: block).`)
  return new EngineError('fetch_failed', `${words.other}: ${why.reason}.`)
}

/** An XML document (a feed, an XSLT page) is shown by the browser's own viewer or a transform, not styled by sheets one can inline. Null for an HTML page. */
export function notAnHtmlPage(contentType: string | undefined): EngineError | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === '' || HTML_TYPES.has(type)) return null
  return new EngineError('render_failed', `The page is not an HTML document (it is ${type.slice(0, 100)}); critical CSS is inlined into HTML pages only.`)
}
