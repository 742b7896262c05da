/**
 * The outline of a plain page, read without a tokenizer library: for request time, where a
 * server's bundle should carry a few KB (runtime/). A plain page is what frameworks render:
 * a doctype, `<html>`, a head of meta, link, base, title, style, script and noscript
 * elements with comments between them (its `<head>` and `</head>` written or implied), the
 * body (`<body>` written or implied by what begins it), and no `<link` in the body; or
 * the same up to its head's end (a streamed response read that far). For such a page the
 * outline is the one `scanHtml` gives (test/unit/plain-head.test.ts holds the two to each
 * other on generated pages); for anything else (a template, an element the head does not
 * hold, a character reference it would need the whole table for, markup a browser reads in
 * a way this reader does not follow) it gives null, and the runtime sends the page as it is.
 */
import { HeadContent } from './head.ts'
import { emptyOutline, type HtmlOutline, type ScanOptions, type SourceAttribute, type SourceTag } from './outline.ts'
import { endOfTag, isHtmlWhitespace, rawTextEnd, scriptEnd } from './syntax.ts'

const LT = 0x3c
const BANG = 0x21
const SLASH = 0x2f

/** Head elements a plain page has, and how their content is read: none (void), raw text, or a script. */
const HEAD_ELEMENTS: ReadonlyMap<string, 'void' | 'raw' | 'script'> = new Map([
  ['meta', 'void'],
  ['link', 'void'],
  ['base', 'void'],
  ['title', 'raw'],
  ['style', 'raw'],
  ['noscript', 'raw'],
  ['script', 'script'],
])
/** The tags whose attributes the outline holds, as `scanHtml` reads them. */
const ATTRIBUTES_READ = new Set(['link', 'style', 'base', 'meta'])
/** A tag name, lowercased, as this reader takes one. */
const TAG_NAME = /^[a-z][a-z0-9-]*$/
/** An attribute name this reader takes: what a browser reads the same way in every state. */
const ATTRIBUTE_NAME = /^[^\s"'<>/=]+$/
const CHARACTER_REFERENCE = /&(#[xX]?[0-9a-fA-F]*|[A-Za-z0-9]*)(;?)/g
const NAMED: ReadonlyMap<string, string> = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"]])
/** A `<link` in the body, in any letter case (in a comment or a script too: a plain page has none at all). */
const LINK_START = /<link[\t\n\f\r />]/gi
/** What a head `<noscript>` of a plain page holds: links (the inliner's own fallbacks) and nothing a parser reads otherwise with scripting off. */
const PLAIN_NOSCRIPT = /^(?:[\t\n\f\r ]|<link\b[^<>"']*(?:"[^"]*"[^<>"']*|'[^']*'[^<>"']*)*>)*$/i

/** Thrown where the page is not plain: the reader gives null. */
class NotPlain extends Error {}

function notPlain(): never {
  throw new NotPlain()
}

/**
 * An attribute value with its character references decoded, as a browser decodes them in an
 * attribute. Only those it can decode without the table of named references: `&name=` is
 * never a reference there, the five XML names with `;`, and code points that need no
 * replacing; any other `&` makes the page not plain.
 */
function decodedValue(raw: string): string {
  if (!raw.includes('&')) return raw
  return raw.replace(CHARACTER_REFERENCE, (whole: string, body: string, semicolon: string, at: number) => {
    if (body === '') return whole
    if (body.startsWith('#')) {
      const hex = body[1] === 'x' || body[1] === 'X'
      const digits = body.slice(hex ? 2 : 1)
      if (semicolon === '' || digits === '' || (!hex && !/^\d+$/.test(digits))) notPlain()
      const code = Number.parseInt(digits, hex ? 16 : 10)
      // Controls, surrogates and what is past Unicode are replaced by a browser's own table.
      if (!((code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code < 0xd800) || (code >= 0xe000 && code <= 0x10ffff && (code & 0xfffe) !== 0xfffe && !(code >= 0xfdd0 && code <= 0xfdef)))) notPlain()
      return String.fromCodePoint(code)
    }
    if (semicolon === ';') return NAMED.get(body) ?? notPlain()
    // In an attribute, a name followed by `=` is left as it is, whatever it names.
    return raw.charCodeAt(at + whole.length) === 0x3d ? whole : notPlain()
  })
}

/** The start tag at `start` (`<` + name), read to its end; its attributes when the outline holds them. */
function startTag(html: string, start: number): { tag: SourceTag; selfClosing: boolean } {
  let nameEnd = start + 1
  while (nameEnd < html.length) {
    const c = html.charCodeAt(nameEnd)
    if (isHtmlWhitespace(c) || c === SLASH || c === 0x3e) break
    nameEnd++
  }
  const name = html.slice(start + 1, nameEnd).toLowerCase()
  if (!TAG_NAME.test(name)) notPlain()
  const read = ATTRIBUTES_READ.has(name)
  const attributes: SourceAttribute[] = []
  const end = endOfTag(html, nameEnd, (from, to, valueStart, valueEnd) => {
    const attributeName = html.slice(from, to)
    if (!ATTRIBUTE_NAME.test(attributeName)) notPlain()
    const raw = valueStart === null ? '' : html.slice(valueStart, valueEnd)
    const quoted = valueStart !== null && (html.charCodeAt(valueStart - 1) === 0x22 || html.charCodeAt(valueStart - 1) === 0x27)
    // An unquoted value holding what a browser reads otherwise than this reader.
    if (valueStart !== null && !quoted && /["'<=`]/.test(raw)) notPlain()
    if (!read) return
    const lower = attributeName.toLowerCase()
    // A repeated attribute is ignored by browsers: the first counts.
    if (attributes.some((each) => each.name === lower)) return
    attributes.push({ name: lower, value: decodedValue(raw), start: from, end: valueStart === null ? to : quoted ? valueEnd + 1 : valueEnd })
  })
  if (end === -1) notPlain()
  return { tag: { name, start, end, attributes }, selfClosing: html.charCodeAt(end - 2) === SLASH }
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

/** The start tag `name` at `at` (any letter case, then a delimiter), or null when another thing stands there. */
function isTag(html: string, at: number, name: string, end = false): boolean {
  const from = at + (end ? 2 : 1)
  if (html.charCodeAt(at) !== LT || (end && html.charCodeAt(at + 1) !== SLASH)) return false
  if (html.slice(from, from + name.length).toLowerCase() !== name) return false
  const after = html.charCodeAt(from + name.length)
  return isHtmlWhitespace(after) || after === SLASH || after === 0x3e
}

/** Start tags that do not simply begin the body where a plain page has them: a browser reads them its own way. */
const NOT_BODY_START = new Set(['html', 'head', 'body', 'frameset', 'frame', 'template', 'noframes', 'basefont', 'bgsound', 'plaintext'])

/** What stands at `at` in the head or after it: its end, a head element, or where the body begins. */
function headToken(html: string, at: number): 'head-end' | 'body' | 'implied-body' | 'head-element' | 'end' {
  if (at >= html.length) return 'end'
  if (html.charCodeAt(at) !== LT) return 'implied-body'
  if (isTag(html, at, 'head', true)) return 'head-end'
  if (isTag(html, at, 'body')) return 'body'
  const next = html.charCodeAt(at + 1) | 0x20
  // `<` not followed by a letter, `!`, `/` or `?` is text, which begins the body.
  if (next < 0x61 || next > 0x7a) return html.charCodeAt(at + 1) === BANG || html.charCodeAt(at + 1) === SLASH || html.charCodeAt(at + 1) === 0x3f ? notPlain() : 'implied-body'
  let nameEnd = at + 1
  while (nameEnd < html.length && !isHtmlWhitespace(html.charCodeAt(nameEnd)) && html.charCodeAt(nameEnd) !== SLASH && html.charCodeAt(nameEnd) !== 0x3e) nameEnd++
  const name = html.slice(at + 1, nameEnd).toLowerCase()
  if (HEAD_ELEMENTS.has(name)) return 'head-element'
  return TAG_NAME.test(name) && !NOT_BODY_START.has(name) ? 'implied-body' : notPlain()
}

function read(html: string, options: ScanOptions): HtmlOutline {
  const outline = emptyOutline(html)
  const head = new HeadContent(outline)
  let i = skipSpaceAndComments(html, outline.headPlace)
  if (html.slice(i, i + 9).toLowerCase() === '<!doctype') {
    const end = html.indexOf('>', i)
    if (end === -1) notPlain()
    outline.headPlace = end + 1
    i = skipSpaceAndComments(html, end + 1)
  }
  if (isTag(html, i, 'html')) {
    i = startTag(html, i).tag.end
    outline.headPlace = i
    i = skipSpaceAndComments(html, i)
  }
  // A head element with no `<head>` before it opens the head all the same.
  if (isTag(html, i, 'head')) i = startTag(html, i).tag.end
  else if (headToken(html, i) !== 'head-element') notPlain()
  for (;;) {
    i = skipSpaceAndComments(html, i)
    const token = headToken(html, i)
    if (token !== 'head-element') {
      // `</head>`, `<body>`, or what begins the body without them (text, another element) ends the head where it stands.
      if (token === 'end') notPlain()
      head.end(i)
      if (token === 'head-end') {
        i = endOfTag(html, i + '</head'.length)
        if (i === -1) notPlain()
      }
      break
    }
    const { tag, selfClosing } = startTag(html, i)
    const kind = HEAD_ELEMENTS.get(tag.name)!
    i = tag.end
    if (kind === 'void') {
      head.add(tag, false, null)
      continue
    }
    // `<style/>` opens a style all the same; `scanHtml` reads such a one its own way.
    if (selfClosing) notPlain()
    const close = kind === 'script' ? scriptEnd(html, i) : rawTextEnd(html, i, tag.name)
    if (close === -1 || (tag.name === 'noscript' && !PLAIN_NOSCRIPT.test(html.slice(i, close)))) notPlain()
    const end = endOfTag(html, close + 2 + tag.name.length)
    if (end === -1) notPlain()
    head.add(tag, false, null)
    if (tag.name === 'style') head.styleClosed(end)
    i = end
  }
  i = skipSpaceAndComments(html, i)
  const after = headToken(html, i)
  // A page read to its head's end (a streamed response's head): no body yet, and nothing is asked of it.
  if (after === 'end') {
    outline.bodyEnd = i
    return outline
  }
  // Head elements after the head's end go into the head: `linksAfterHead`, which this reader leaves to the full scan.
  if (after === 'head-element' || after === 'head-end') notPlain()
  const reading = options.readBody?.(outline) ?? 'all'
  // The body's end is a reading of the whole body; a link in it, of its tree.
  LINK_START.lastIndex = i
  if (reading === 'all' || LINK_START.test(html)) notPlain()
  return outline
}

/** The outline `scanHtml(html, options)` gives, where the page is plain; else null. */
export function plainHeadOutline(html: string, options: ScanOptions = {}): HtmlOutline | null {
  try {
    return read(html, options)
  } catch (error) {
    if (error instanceof NotPlain) return null
    throw error
  }
}
