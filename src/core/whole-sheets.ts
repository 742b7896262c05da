/**
 * Nothing sent twice when it buys nothing (issue 35): where a page's critical CSS is nearly
 * all of the stylesheets it would defer, the page gets those sheets whole, inline where
 * their links were, and no request for them. A small app's one stylesheet is often nearly
 * all above the fold: inlining the critical part and fetching the whole sheet after sends
 * most of its bytes twice, for a request that paints nothing new.
 *
 * Unless the page's code may still ask for one of them (issue 49): a lazily loaded chunk of a
 * Vite app asks for the stylesheets it shares with the entry, looks for their `<link>`, and
 * appends one when it finds none, after the inlined sheets, where it changes the cascade.
 */
import { blockingStylesheets } from '../html/links.ts'
import type { BuildOutput, FileFinder } from './build-server.ts'
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

/** One of the build's stylesheets as a page would take it whole. */
export interface BuildSheetText {
  /** The output file it is (relative, `/` separators). */
  file: string
  /** Its size as built (UTF-8 bytes). */
  bytes: number
  /** Its text as it reads inline (URLs as root paths); null when it imports others. Worked out once, when a page first takes it. */
  inline(): string | null
}

/** The build's stylesheets by URL, each read and decoded once per run however many pages link it. */
export type BuildSheetTexts = (url: URL) => Promise<BuildSheetText | null>

export function buildSheetTexts(find: FileFinder): BuildSheetTexts {
  const known = new Map<string, Promise<BuildSheetText | null>>()
  return (url) => {
    let sheet = known.get(url.href)
    if (sheet === undefined) {
      sheet = find(url.pathname).then((found) => (found === null ? null : sheetText(found.file, found.body, url)))
      known.set(url.href, sheet)
    }
    return sheet
  }
}

function sheetText(file: string, body: string | Uint8Array, url: URL): BuildSheetText | null {
  let raw: string
  try {
    raw = typeof body === 'string' ? body : UTF8.decode(body)
  } catch {
    return null
  }
  let inline: string | null | undefined
  // Parsing is the costly part: most pages' critical CSS is a small part of their sheets, and they never need it.
  return { file, bytes: Buffer.byteLength(raw), inline: () => (inline === undefined ? (inline = rootPathCss(raw, url)) : inline) }
}

/** Whether the page's code may ask for an output file (a stylesheet) once it runs. */
export type LazySheet = (file: string) => Promise<boolean>

/** `BuildOutput.lazySheets`, asked when a page is first about to take its sheets whole, and then once per run. */
export function lazySheetOf(output: BuildOutput): LazySheet {
  let lazy: Promise<ReadonlySet<string>> | null = null
  return async (file) => (await (lazy ??= output.lazySheets())).has(file)
}

/** The `href`s, as written, of the build's stylesheets `html` links that the page's code may ask for once it runs. */
export async function lazyLinks(html: string, pageUrl: string, sheets: BuildSheetTexts, lazy: LazySheet): Promise<Set<string>> {
  const page = new URL(pageUrl)
  const hrefs = new Set<string>()
  for (const { href } of blockingStylesheets(html)) {
    const url = URL.canParse(href, page) ? new URL(href, page) : null
    const sheet = url !== null && url.origin === page.origin ? await sheets(url) : null
    if (sheet !== null && (await lazy(sheet.file))) hrefs.add(href)
  }
  return hrefs
}

/**
 * The text of each stylesheet `html` would defer, by its `href` as written, ready to stand
 * inline in the page at `pageUrl` (URLs as root paths), when the critical `css` is at least
 * {@link WHOLE_SHEET_SHARE} of their bytes; null otherwise. All or none: a sheet the build
 * does not have (another host's, a missing file), one that imports others, or a link the
 * page's own code may look for (not `plain`: React's `data-precedence` links, which hydration
 * matches) keeps every link as it is, since the critical CSS holds their rules together.
 * So does a sheet the page's code may ask for once it runs (`lazy`): a link it then adds
 * would come after the inlined sheets.
 * `keepBlocking`: sheets the render could not read, which stay as they are in any case.
 */
export async function wholeSheets(
  html: string,
  pageUrl: string,
  css: string,
  sheets: BuildSheetTexts,
  lazy: LazySheet,
  keepBlocking: (href: string) => boolean,
): Promise<Map<string, string> | null> {
  const links = blockingStylesheets(html).filter((link) => !keepBlocking(link.href))
  if (links.length === 0 || links.some((link) => !link.plain)) return null
  const page = new URL(pageUrl)
  const found = new Map<string, BuildSheetText>()
  let bytes = 0
  for (const { href } of links) {
    if (found.has(href)) continue
    const url = URL.canParse(href, page) ? new URL(href, page) : null
    const sheet = url !== null && url.origin === page.origin ? await sheets(url) : null
    if (sheet === null) return null
    bytes += sheet.bytes
    found.set(href, sheet)
  }
  if (Buffer.byteLength(css) < WHOLE_SHEET_SHARE * bytes) return null
  for (const sheet of found.values()) if (await lazy(sheet.file)) return null
  const texts = new Map<string, string>()
  for (const [href, sheet] of found) {
    const inline = sheet.inline()
    if (inline === null) return null
    texts.set(href, inline)
  }
  return texts
}
