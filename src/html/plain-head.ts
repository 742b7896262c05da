/**
 * The head of a plain page, read for where its stylesheet links stand: for request time,
 * where a server's bundle should carry a few KB and a response should cost nothing but its
 * output (runtime/). A plain page is what frameworks render: a doctype, `<html>`, a head of
 * meta, link, base, title, style, script and noscript elements with comments between them
 * (its `<head>` and `</head>` written or implied), the body (`<body>` written or implied by
 * what begins it), and no `<link` in the body; or the same up to its head's end (a streamed
 * response read that far). Anything else (a template, an element the head does not hold,
 * markup a browser reads in a way this reader does not follow, an earlier run's critical
 * style) makes the page not plain, and the runtime sends it as it is. Nothing is allocated
 * per page but the offsets it reports: names are compared where they stand.
 */
import { CRITICAL_STYLE_ATTRIBUTE, LOADER_PRELOAD_ATTRIBUTE } from './outline.ts'
import { endOfTag, isHtmlWhitespace, rawTextEnd, scriptEnd, tagNameEnd } from './syntax.ts'

const LT = 0x3c
const GT = 0x3e
const BANG = 0x21
const SLASH = 0x2f
const QUESTION = 0x3f
const AMPERSAND = 0x26

/** Head elements a plain page has, by kind: void, raw text, or a script. */
const VOID = ['meta', 'link', 'base']
const RAW = ['title', 'style', 'noscript']
const SCRIPT = 'script'
/** A tag name, lowercased, as this reader takes one. */
const TAG_NAME = /^[a-z][a-z0-9-]*$/
/** A `<link` in the body, in any letter case (in a comment or a script too: a plain page has none at all). */
const LINK_START = /<link[\t\n\f\r />]/gi
/** What a head `<noscript>` of a plain page holds, from where it begins to its end: links (the inliner's own fallbacks) and nothing a parser reads otherwise with scripting off. */
const PLAIN_NOSCRIPT = /(?:[\t\n\f\r ]|<link\b[^<>"']*(?:"[^"]*"[^<>"']*|'[^']*'[^<>"']*)*>)*/iy
/** Start tags that do not simply begin the body where a plain page has them: a browser reads them its own way. */
const NOT_BODY_START = new Set(['html', 'head', 'body', 'frameset', 'frame', 'template', 'noframes', 'basefont', 'bgsound', 'plaintext'])

/** Thrown where the page is not plain: the reader answers false. */
class NotPlain extends Error {}

function notPlain(): never {
  throw new NotPlain()
}

/** Whether `html[from, to)` is `name` (lowercase) in any letter case. */
function spells(html: string, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false
  for (let k = 0; k < name.length; k++) {
    const c = html.charCodeAt(from + k)
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== name.charCodeAt(k)) return false
  }
  return true
}

/** Whether the ASCII-whitespace-separated list `html[from, to)` holds `token` (lowercase) in any letter case, as a DOMTokenList would. */
function holdsToken(html: string, from: number, to: number, token: string): boolean {
  let i = from
  while (i < to) {
    while (i < to && isHtmlWhitespace(html.charCodeAt(i))) i++
    const start = i
    while (i < to && !isHtmlWhitespace(html.charCodeAt(i))) i++
    if (i > start && spells(html, start, i, token)) return true
  }
  return false
}

/** The head element named `html[from, to)` (its name lowercased), or null. */
function headElement(html: string, from: number, to: number): string | null {
  for (const name of VOID) if (spells(html, from, to, name)) return name
  for (const name of RAW) if (spells(html, from, to, name)) return name
  return spells(html, from, to, SCRIPT) ? SCRIPT : null
}

/** What the tag being read holds, as far as this reader asks: read through `onAttribute`, with no closure per tag. */
let tagHtml = ''
let relSeen = false
let relFrom = 0
let relTo = 0
let marked = false
let handled = false
let loaderPreload = false

function onAttribute(from: number, to: number, valueStart: number | null, valueEnd: number): void {
  const html = tagHtml
  // An attribute name or unquoted value holding what a browser reads otherwise than this reader.
  for (let i = from; i < to; i++) {
    const c = html.charCodeAt(i)
    if (c === 0x22 || c === 0x27 || c === LT || c === 0x3d) notPlain()
  }
  const quoted = valueStart !== null && (html.charCodeAt(valueStart - 1) === 0x22 || html.charCodeAt(valueStart - 1) === 0x27)
  if (valueStart !== null && !quoted) {
    for (let i = valueStart; i < valueEnd; i++) {
      const c = html.charCodeAt(i)
      if (c === 0x22 || c === 0x27 || c === LT || c === 0x3d || c === 0x60) notPlain()
    }
  }
  // A repeated attribute is ignored by browsers: the first counts.
  if (spells(html, from, to, 'rel') && !relSeen) {
    relSeen = true
    relFrom = valueStart ?? to
    relTo = valueStart === null ? to : valueEnd
  } else if (spells(html, from, to, CRITICAL_STYLE_ATTRIBUTE)) marked = true
  else if (spells(html, from, to, 'onload')) handled = true
  else if (spells(html, from, to, LOADER_PRELOAD_ATTRIBUTE)) loaderPreload = true
}

/** Reads the start tag whose name ends at `nameEnd` to its end, which it gives. */
function startTagEnd(html: string, nameEnd: number): number {
  tagHtml = html
  relSeen = false
  marked = false
  handled = false
  loaderPreload = false
  const end = endOfTag(html, nameEnd, onAttribute)
  if (end === -1) notPlain()
  return end
}

/**
 * Whether the link just read loads styles where it stands, or could: a stylesheet, a preload
 * that becomes one (its own `onload`, an earlier loader's mark), an earlier run's, or a `rel`
 * with a character reference in it (read as whatever it decodes to: it counts).
 */
function loadsStyles(html: string): boolean {
  if (marked || !relSeen) return marked
  for (let i = relFrom; i < relTo; i++) if (html.charCodeAt(i) === AMPERSAND) return true
  return holdsToken(html, relFrom, relTo, 'stylesheet') || ((handled || loaderPreload) && holdsToken(html, relFrom, relTo, 'preload'))
}

/** Past whitespace and comments from `at`; where the next markup begins. */
function skipSpaceAndComments(html: string, at: number): number {
  let i = at
  for (;;) {
    while (i < html.length && isHtmlWhitespace(html.charCodeAt(i))) i++
    if (!html.startsWith('<!--', i)) return i
    // `<!-->` and `<!--->` are whole comments to a browser; `--!>` ends one too.
    if (html.startsWith('>', i + 4) || html.startsWith('->', i + 4)) notPlain()
    const close = html.indexOf('-->', i + 4)
    if (close === -1) notPlain()
    const bang = html.indexOf('--!>', i + 4)
    if (bang !== -1 && bang < close) notPlain()
    i = close + 3
  }
}

/** Whether the start tag (or, `end`, end tag) `name` stands at `at`, in any letter case, then a delimiter. */
function isTag(html: string, at: number, name: string, end = false): boolean {
  const from = at + (end ? 2 : 1)
  if (html.charCodeAt(at) !== LT || (end && html.charCodeAt(at + 1) !== SLASH)) return false
  if (!spells(html, from, Math.min(from + name.length, html.length), name)) return false
  const after = html.charCodeAt(from + name.length)
  return isHtmlWhitespace(after) || after === SLASH || after === GT
}

const HEAD_END = 0
const BODY = 1
const IMPLIED_BODY = 2
const HEAD_ELEMENT = 3
const END = 4

/** What stands at `at` in the head or after it: its end, a head element, or where the body begins. */
function headToken(html: string, at: number): number {
  if (at >= html.length) return END
  if (html.charCodeAt(at) !== LT) return IMPLIED_BODY
  if (isTag(html, at, 'head', true)) return HEAD_END
  if (isTag(html, at, 'body')) return BODY
  const second = html.charCodeAt(at + 1)
  const next = second | 0x20
  // `<` not followed by a letter, `!`, `/` or `?` is text, which begins the body.
  if (next < 0x61 || next > 0x7a) return second === BANG || second === SLASH || second === QUESTION ? notPlain() : IMPLIED_BODY
  const nameEnd = tagNameEnd(html, at + 1)
  if (headElement(html, at + 1, nameEnd) !== null) return HEAD_ELEMENT
  const name = html.slice(at + 1, nameEnd).toLowerCase()
  return TAG_NAME.test(name) && !NOT_BODY_START.has(name) ? IMPLIED_BODY : notPlain()
}

/** Reads the page into `found` (see `readPlainHead`). */
function read(html: string, found: number[]): number {
  let count = 0
  let i = skipSpaceAndComments(html, html.charCodeAt(0) === 0xfeff ? 1 : 0)
  if (spells(html, i, Math.min(i + 9, html.length), '<!doctype')) {
    const end = html.indexOf('>', i)
    if (end === -1) notPlain()
    i = skipSpaceAndComments(html, end + 1)
  }
  if (isTag(html, i, 'html')) i = skipSpaceAndComments(html, startTagEnd(html, i + 5))
  // A head element with no `<head>` before it opens the head all the same.
  if (isTag(html, i, 'head')) i = startTagEnd(html, i + 5)
  else if (headToken(html, i) !== HEAD_ELEMENT) notPlain()
  for (;;) {
    i = skipSpaceAndComments(html, i)
    const token = headToken(html, i)
    if (token !== HEAD_ELEMENT) {
      // `</head>`, `<body>`, or what begins the body without them (text, another element) ends the head where it stands.
      if (token === END) notPlain()
      if (token === HEAD_END) {
        i = endOfTag(html, i + '</head'.length)
        if (i === -1) notPlain()
      }
      break
    }
    const nameEnd = tagNameEnd(html, i + 1)
    const name = headElement(html, i + 1, nameEnd)!
    const start = i
    i = startTagEnd(html, nameEnd)
    if (name === 'link') {
      if (loadsStyles(html)) {
        found[count++] = start
        found[count++] = i
      }
      continue
    }
    if (VOID.includes(name)) continue
    // `<style/>` opens a style all the same, which the full scan reads its own way; an earlier run's style is replaced by the full inliner only.
    if (html.charCodeAt(i - 2) === SLASH || (name === 'style' && marked)) notPlain()
    const close = name === SCRIPT ? scriptEnd(html, i) : rawTextEnd(html, i, name)
    if (close === -1) notPlain()
    if (name === 'noscript') {
      PLAIN_NOSCRIPT.lastIndex = i
      if (!PLAIN_NOSCRIPT.test(html) || PLAIN_NOSCRIPT.lastIndex !== close) notPlain()
    }
    i = endOfTag(html, close + 2 + name.length)
    if (i === -1) notPlain()
  }
  i = skipSpaceAndComments(html, i)
  const after = headToken(html, i)
  // A page read to its head's end (a streamed response's head): no body yet.
  if (after === END) return count
  // Head elements after the head's end go into the head, where the full scan follows them.
  if (after === HEAD_ELEMENT || after === HEAD_END) notPlain()
  // A link in the body is one of its tree.
  LINK_START.lastIndex = i
  if (LINK_START.test(html)) notPlain()
  return count
}

/**
 * Reads a plain page's head, putting in `found` where each `<link>` there that loads styles
 * (or could) begins and ends, in document order: `[start, end, start, end, …]` from its
 * first item on (the array is written over, never made anew). Gives how many offsets it put
 * there, or -1 where the page is not plain.
 */
export function readPlainHead(html: string, found: number[]): number {
  try {
    return read(html, found)
  } catch (error) {
    if (error instanceof NotPlain) return -1
    throw error
  } finally {
    tagHtml = ''
  }
}
