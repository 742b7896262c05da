/**
 * Finds, with exact source offsets, what the inliner edits in a document: where `<head>`
 * begins and ends, the stylesheets a browser puts in it and in the body, earlier
 * critical-CSS blocks, and where stylesheets can go at the end of the body. htmlparser2's
 * tokenizer gives the offsets (`tokens.ts`); `syntax.ts` covers where browsers read the
 * source differently; the few tree-building rules of the HTML standard that decide what
 * is in the head and the body are applied in `tree.ts`, as a browser with scripting on
 * applies them.
 */
import { Cursor } from './cursor.ts'
import { attribute, stylesheetHrefsOf, type HtmlOutline, type ScanOptions } from './outline.ts'
import { forRecentTexts } from './recent.ts'
import { asciiLowercase, asciiTokens, asciiTrim } from './syntax.ts'
import { TokenReader } from './tokens.ts'
import { TreeBuilder } from './tree.ts'

export { attribute, becomesStylesheet, CRITICAL_STYLE_ATTRIBUTE, LOADER_MEDIA_ATTRIBUTE, stylesheetHrefsOf, type BodyReading, type HtmlOutline, type ScanOptions, type SourceAttribute, type SourceTag } from './outline.ts'

export function scanHtml(html: string, options: ScanOptions = {}): HtmlOutline {
  const cursor = new Cursor(html)
  const tree = new TreeBuilder(cursor, options)
  const tokens = new TokenReader(cursor, tree)
  tokens.read()
  if (cursor.stopped) return tree.outline
  const none = Number.POSITIVE_INFINITY
  return tree.finish(Math.min(cursor.lastEnd, cursor.cut, tree.openElementStart ?? none, tokens.openTagStart ?? none, html.length))
}

/**
 * The outline of a page read to its head's end (`nothing`) or to its last stylesheet link
 * (`links`), kept for the few pages asked about last: one read for the several questions a
 * build asks of each page. Callers read it and never change it.
 */
export function outlineOf(html: string, body: 'links' | 'nothing'): HtmlOutline {
  return body === 'links' ? linksOutline(html) : headOutline(html)
}

// A build asks several questions of one page in a row (its sheets, its base, its key, its links), then moves on.
const linksOutline = forRecentTexts((html) => scanHtml(html, { readBody: () => 'links' }))
const headOutline = forRecentTexts((html) => scanHtml(html, { readBody: () => 'nothing' }))

/** The `href`s of the stylesheets a page loads, the head's then the body's, in document order, entities decoded. */
export function stylesheetHrefs(html: string): string[] {
  return stylesheetHrefsOf(outlineOf(html, 'links'))
}

/** Where a page says it is deployed: its `<link rel=canonical>`, else its Open Graph URL; null when it says neither. */
export function declaredAddress(html: string): string | null {
  const outline = outlineOf(html, 'nothing')
  const canonical = outline.headLinks.find((link) => asciiTokens(asciiLowercase(attribute(link, 'rel')?.value ?? '')).includes('canonical'))
  const href = canonical === undefined ? undefined : attribute(canonical, 'href')?.value
  const address = href ?? outline.openGraphUrl
  return address === null ? null : asciiTrim(address)
}
