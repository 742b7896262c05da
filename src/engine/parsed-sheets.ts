/**
 * The parse of a page's stylesheets, shared by the jobs of one site: pages of a site link the
 * same sheets, so their combined parse (and the questions it asks) is made once and reused
 * while the sheets and their imports stay the same. Both engines keep one.
 */
import { createHash } from 'node:crypto'
import { CriticalCss } from './css.ts'
import { PARSED_CSS_CACHE_BYTES } from './limits.ts'
import { combineSheets, type AppliedSheet } from './sheets.ts'

/** A stylesheet's text as it was received, and where it ended up after redirects. */
export interface FetchedSheet {
  text: string
  url: string
}

/** A sheet as a job keys it; `href` is the URL the page asked for (null for a `<style>`). */
export type KeyedSheet = AppliedSheet & { key: string; href: string | null }

interface ParsedSheets {
  /** The sheets it was parsed from, as keyed: what the next page of the site is compared with before anything is hashed. */
  sheets: readonly KeyedSheet[]
  critical: CriticalCss
  imports: Map<string, string | undefined>
  unread: string[]
  /** CSS source it was parsed from, imports included: what it weighs in the cache. */
  chars: number
}

/** The parse of a page's sheets, and the linked sheets whose rules it lacks (an import that did not come). */
export interface Parsed {
  critical: CriticalCss
  unread: string[]
}

/** The key a `<style>` of the page is known by: its media and its text. */
export function styleKey(media: string, text: string): string {
  return `style\u0000${media}\u0000${text}`
}

/** The key a linked sheet is known by: its media and the URL the page asked for. */
export function linkKey(media: string, href: string): string {
  return `link\u0000${media}\u0000${href}`
}

/**
 * Parses kept for jobs to come, keyed by the sheets' texts, the least recently used going
 * first past {@link PARSED_CSS_CACHE_BYTES} of CSS source. Bodies are always the bytes the
 * job received: the cache holds parses keyed by those bytes, never bodies to use instead.
 */
export class ParsedSheetCache {
  readonly #entries = new Map<string, ParsedSheets>()
  #chars = 0
  /** The parse the last page got, with its page's origin. */
  #last: { origin: string; parsed: ParsedSheets } | null = null

  /** `texts`: every stylesheet body the job received, by the URL asked for (imports among them). */
  parsed(sheets: KeyedSheet[], texts: ReadonlyMap<string, FetchedSheet>, pageUrl: string): Parsed {
    // The pages of a site come one after another, with the same sheets: compared first, with no hash of their texts.
    const last = this.#last
    const origin = new URL(pageUrl).origin
    if (last !== null && last.origin === origin && sameSheets(last.parsed, sheets, texts)) return last.parsed
    const found = this.#parse(sheets, texts, pageUrl)
    this.#last = { origin, parsed: found }
    return found
  }

  #parse(sheets: KeyedSheet[], texts: ReadonlyMap<string, FetchedSheet>, pageUrl: string): ParsedSheets {
    const hash = createHash('sha256').update(new URL(pageUrl).origin)
    for (const sheet of sheets) hash.update(`\u0000${sheet.key}\u0000${sheet.base}\u0000${sheet.text}`)
    const key = hash.digest('hex')
    const cached = this.#entries.get(key)
    if (cached && [...cached.imports].every(([url, text]) => texts.get(url)?.text === text)) {
      // Most recently used last: the oldest goes first when the cache is full.
      this.#entries.delete(key)
      this.#entries.set(key, cached)
      return cached
    }
    const imports = new Map<string, string | undefined>()
    const imported = (url: string): FetchedSheet | undefined => {
      const found = texts.get(url)
      imports.set(url, found?.text)
      return found
    }
    const { sheet, incomplete } = combineSheets(sheets, imported, pageUrl)
    // A linked sheet whose import did not come is missing rules: its link must stay as it is.
    const unread = sheets.filter((each) => incomplete.has(each) && each.href !== null).map((each) => each.href!)
    const chars = sheets.reduce((sum, each) => sum + each.text.length, 0) + [...imports.values()].reduce((sum, text) => sum + (text?.length ?? 0), 0)
    const parsed = { sheets, critical: new CriticalCss(sheet), imports, unread, chars }
    this.#remember(key, parsed)
    return parsed
  }

  #remember(key: string, parsed: ParsedSheets): void {
    const known = this.#entries.get(key)
    if (known) this.#chars -= known.chars
    this.#entries.delete(key)
    if (parsed.chars > PARSED_CSS_CACHE_BYTES) return
    this.#entries.set(key, parsed)
    this.#chars += parsed.chars
    for (const [oldest, entry] of this.#entries) {
      if (this.#chars <= PARSED_CSS_CACHE_BYTES) break
      this.#entries.delete(oldest)
      this.#chars -= entry.chars
    }
  }
}

/** Whether `sheets` (and the imports the parse read) are those `parsed` was made from, the texts compared as they are. */
function sameSheets(parsed: ParsedSheets, sheets: readonly KeyedSheet[], texts: ReadonlyMap<string, FetchedSheet>): boolean {
  if (parsed.sheets.length !== sheets.length) return false
  for (let index = 0; index < sheets.length; index++) {
    const was = parsed.sheets[index]!
    const now = sheets[index]!
    if (was.key !== now.key || was.base !== now.base || was.media !== now.media || was.text !== now.text) return false
  }
  for (const [url, text] of parsed.imports) if (texts.get(url)?.text !== text) return false
  return true
}
