/**
 * Nothing sent twice when it buys nothing (issue 35): where a page's critical CSS is nearly
 * all of the stylesheets it would defer, the page gets those sheets whole, inline where
 * their links were, and no request for them. A small app's one stylesheet is often nearly
 * all above the fold: inlining the critical part and fetching the whole sheet after sends
 * most of its bytes twice, for a request that paints nothing new.
 */
import { blockingStylesheets } from '../html/links.ts'
import type { FileFinder } from './build-server.ts'
import { rootPathCss } from './portable-css.ts'

/**
 * The share of the deferred sheets' bytes the critical CSS must reach for them to be inlined
 * whole. From `npm run bench:fcp`'s 20 pages: the Vite playground's and the create-vite apps'
 * critical CSS is 0.91–0.95 of their one stylesheet, every template site's at most 0.09 of its
 * sheets. Inlined whole, a sheet is sent with every page instead of cached once: at 0.8 each
 * page carries at most a quarter more than its critical CSS, for one request less.
 */
export const WHOLE_SHEET_SHARE = 0.8

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The text of each stylesheet `html` would defer, by its `href` as written, ready to stand
 * inline in the page at `pageUrl` (URLs as root paths), when the critical `css` is at least
 * {@link WHOLE_SHEET_SHARE} of their bytes; null otherwise. All or none: a sheet the build
 * does not have (another host's, a missing file), one that imports others, or a link the
 * page's own code may look for (not `plain`: React's `data-precedence` links, which hydration
 * matches) keeps every link as it is, since the critical CSS holds their rules together.
 * `keepBlocking`: sheets the render could not read, which stay as they are in any case.
 */
export async function wholeSheets(html: string, pageUrl: string, css: string, find: FileFinder, keepBlocking: (href: string) => boolean): Promise<Map<string, string> | null> {
  const links = blockingStylesheets(html).filter((link) => !keepBlocking(link.href))
  if (links.length === 0 || links.some((link) => !link.plain)) return null
  const hrefs = links.map((link) => link.href)
  const page = new URL(pageUrl)
  const sheets = new Map<string, string>()
  let bytes = 0
  for (const href of new Set(hrefs)) {
    const text = await ownSheet(href, page, find)
    if (text === null) return null
    bytes += Buffer.byteLength(text.raw)
    sheets.set(href, text.inline)
  }
  return Buffer.byteLength(css) >= WHOLE_SHEET_SHARE * bytes ? sheets : null
}

/** A sheet of the build on the page's origin: its text as built, and as it reads inline; null when it cannot be inlined. */
async function ownSheet(href: string, page: URL, find: FileFinder): Promise<{ raw: string; inline: string } | null> {
  let url: URL
  try {
    url = new URL(href, page)
  } catch {
    return null
  }
  if (url.origin !== page.origin) return null
  const found = await find(url.pathname)
  if (found === null) return null
  let raw: string
  try {
    raw = typeof found.body === 'string' ? found.body : UTF8.decode(found.body)
  } catch {
    return null
  }
  const inline = rootPathCss(raw, url)
  return inline === null ? null : { raw, inline }
}
