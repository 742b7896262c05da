/**
 * The few pieces of the HTML standard's tokenizer that htmlparser2's tokenizer does not
 * follow, as browsers do: where an end tag with quoted attributes ends, where a script's
 * raw text ends (the `<!--<script>` escapes), and where another raw-text element ends.
 * Each is a small state machine over the source; none is a regular expression. Also where
 * a `<link` could last begin, which bounds how far a scan has to read.
 */

import { forRecentTexts } from './recent.ts'

const TAB = 0x09
const LF = 0x0a
const FF = 0x0c
const CR = 0x0d
const SPACE = 0x20
const SLASH = 0x2f
const GT = 0x3e
const LT = 0x3c
const DASH = 0x2d
const BANG = 0x21
const EQUALS = 0x3d
const DOUBLE_QUOTE = 0x22
const SINGLE_QUOTE = 0x27

export function isHtmlWhitespace(code: number): boolean {
  return code === TAB || code === LF || code === FF || code === CR || code === SPACE
}

/** Trims ASCII whitespace only: browsers do not trim U+00A0 and the like from attribute values. */
export function asciiTrim(text: string): string {
  let start = 0
  let end = text.length
  while (start < end && isHtmlWhitespace(text.charCodeAt(start))) start++
  while (end > start && isHtmlWhitespace(text.charCodeAt(end - 1))) end--
  return text.slice(start, end)
}

/** Text as a double-quoted attribute value. */
export function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
}

export function asciiLowercase(text: string): string {
  return text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase())
}

/** Splits on ASCII whitespace, as a DOMTokenList does. */
export function asciiTokens(text: string): string[] {
  const tokens: string[] = []
  let start = -1
  for (let i = 0; i <= text.length; i++) {
    const boundary = i === text.length || isHtmlWhitespace(text.charCodeAt(i))
    if (boundary && start >= 0) {
      tokens.push(text.slice(start, i))
      start = -1
    } else if (!boundary && start < 0) {
      start = i
    }
  }
  return tokens
}

/** Where the tag name that begins at `from` ends: at whitespace, '/' or '>'. */
export function tagNameEnd(html: string, from: number): number {
  let i = from
  while (i < html.length) {
    const c = html.charCodeAt(i)
    if (isHtmlWhitespace(c) || c === SLASH || c === GT) break
    i++
  }
  return i
}

/** An attribute as a tag's source spells it: its name's span, and its value's (null when it has none), quotes left out. */
export type AttributeSpan = (nameStart: number, nameEnd: number, valueStart: number | null, valueEnd: number) => void

/**
 * Where a tag ends, given the index just after its name: past attributes, quoted values
 * included (`</title x=">">` ends at the second `>`). -1 when the input ends inside it.
 * `onAttribute` hears each attribute on the way, in source order.
 */
export function endOfTag(html: string, from: number, onAttribute?: AttributeSpan): number {
  const n = html.length
  let i = from
  for (;;) {
    while (i < n && isHtmlWhitespace(html.charCodeAt(i))) i++
    if (i >= n) return -1
    const c = html.charCodeAt(i)
    if (c === GT) return i + 1
    if (c === SLASH) {
      i++
      continue
    }
    // Attribute name: its first character may be anything but whitespace, '/' and '>'.
    const nameStart = i
    i++
    while (i < n) {
      const d = html.charCodeAt(i)
      if (isHtmlWhitespace(d) || d === SLASH || d === GT || d === EQUALS) break
      i++
    }
    const nameEnd = i
    while (i < n && isHtmlWhitespace(html.charCodeAt(i))) i++
    if (i >= n) return -1
    if (html.charCodeAt(i) !== EQUALS) {
      onAttribute?.(nameStart, nameEnd, null, nameEnd)
      continue
    }
    i++
    while (i < n && isHtmlWhitespace(html.charCodeAt(i))) i++
    if (i >= n) return -1
    const quote = html.charCodeAt(i)
    if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
      const close = html.indexOf(String.fromCharCode(quote), i + 1)
      if (close === -1) return -1
      onAttribute?.(nameStart, nameEnd, i + 1, close)
      i = close + 1
    } else if (quote !== GT) {
      const valueStart = i
      while (i < n && !isHtmlWhitespace(html.charCodeAt(i)) && html.charCodeAt(i) !== GT) i++
      onAttribute?.(nameStart, nameEnd, valueStart, i)
    } else onAttribute?.(nameStart, nameEnd, i, i)
  }
}

/** Does `name` (lowercase) stand at `at`, in any letter case, followed by whitespace, '/' or '>'? */
function nameFollowedByDelimiter(html: string, at: number, name: string): boolean {
  if (at + name.length >= html.length) return false
  for (let k = 0; k < name.length; k++) if ((html.charCodeAt(at + k) | 0x20) !== name.charCodeAt(k)) return false
  const after = html.charCodeAt(at + name.length)
  return isHtmlWhitespace(after) || after === SLASH || after === GT
}

/** A `<link` start tag's beginning, in any letter case: a plain search, not a reading of the markup. */
const LINK_START = /<link[\t\n\f\r />]/gi

/**
 * Where the last `<link` (any letter case, then whitespace, '/' or '>') at or after `from`
 * begins, or -1: no link element can begin after it. It may stand in a comment or a script;
 * the scan decides what it is. (A regular expression searches far faster here than a loop
 * over the page's `<`s.)
 */
export function lastLinkStart(html: string, from: number): number {
  const last = lastLinkIn(html)
  return last >= from ? last : -1
}

/** Where a page's last `<link` begins: a build reads each page's links a few times in a row. */
const lastLinkIn = /* @__PURE__ */ forRecentTexts((html) => {
  let last = -1
  LINK_START.lastIndex = 0
  for (let found = LINK_START.exec(html); found !== null; found = LINK_START.exec(html)) last = found.index
  return last
})

/** The raw text of a `name` element (not a script) ends at the first `</name` + delimiter. */
export function rawTextEnd(html: string, from: number, name: string): number {
  for (let i = html.indexOf('</', from); i !== -1; i = html.indexOf('</', i + 2)) {
    if (nameFollowedByDelimiter(html, i + 2, name)) return i
  }
  return -1
}

/**
 * Where a script's raw text ends: the `</script` that ends it, or -1. Follows the standard's
 * script-data states, in which `<!--` then `<script` hides a `</script>` until `-->`
 * (the old `document.write('<script …></script>')` pattern).
 */
export function scriptEnd(html: string, from: number): number {
  const n = html.length
  let state: 'data' | 'escaped' | 'double' = 'data'
  let dashes = 0
  for (let i = from; i < n; i++) {
    const c = html.charCodeAt(i)
    if (state === 'data') {
      if (c !== LT) continue
      if (html.charCodeAt(i + 1) === SLASH && nameFollowedByDelimiter(html, i + 2, 'script')) return i
      if (html.charCodeAt(i + 1) === BANG && html.charCodeAt(i + 2) === DASH && html.charCodeAt(i + 3) === DASH) {
        state = 'escaped'
        dashes = 2
        i += 3
      }
      continue
    }
    if (c === DASH) {
      dashes++
      continue
    }
    if (c === GT && dashes >= 2) {
      state = 'data'
      dashes = 0
      continue
    }
    dashes = 0
    if (c !== LT) continue
    if (state === 'escaped') {
      if (html.charCodeAt(i + 1) === SLASH && nameFollowedByDelimiter(html, i + 2, 'script')) return i
      if (nameFollowedByDelimiter(html, i + 1, 'script')) {
        state = 'double'
        i += 'script'.length
      }
    } else if (html.charCodeAt(i + 1) === SLASH && nameFollowedByDelimiter(html, i + 2, 'script')) {
      state = 'escaped'
      i += 1 + 'script'.length
    }
  }
  return -1
}
