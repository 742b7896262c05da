/**
 * What of a page a cache key of its critical CSS should see: the document with each
 * `<script>` reduced to the file it loads (a new bundle is a new key: scripts can change
 * what is above the fold) and without the `<link>`s that load no stylesheet. Frameworks
 * stamp build ids and render times into exactly what goes (Nuxt's payload script and
 * `?_b=` preload, SvelteKit's version), which would make every rebuild a miss.
 *
 * Read tag by tag as a browser's tokenizer reads them (comments, quoted attribute values and
 * raw text are skipped whole, so a `<script` inside them is not one), jumping over text to the
 * next `<`: a warm build computes this for every page, and most of a page is text and tags
 * that do not matter here.
 */
import { RAW_TEXT } from './elements.ts'
import { asciiLowercase, asciiTokens, endOfTag, rawTextEnd, scriptEnd, tagNameEnd } from './syntax.ts'

const BANG = 0x21
const SLASH = 0x2f
const GT = 0x3e
const QUESTION = 0x3f

/** Names whose tags this reads beyond their end: the two it edits and those holding raw text. */
const READ_NAMES: ReadonlySet<string> = new Set(['script', 'link', 'noscript', ...RAW_TEXT])
/** First letter and length of each: most tags (div, a, li…) are passed over without making a string of their name. */
const READ_SHAPES: ReadonlySet<number> = new Set([...READ_NAMES].map((name) => name.charCodeAt(0) * 32 + name.length))

function isAsciiAlpha(code: number): boolean {
  return (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a
}


/** The first value of each attribute `wanted` names (lowercase), raw as the source has it. */
function attributesOf(html: string, from: number, wanted: readonly string[]): { end: number; values: Map<string, string> } {
  const values = new Map<string, string>()
  const end = endOfTag(html, from, (start, stop, valueStart, valueEnd) => {
    const name = asciiLowercase(html.slice(start, stop))
    if (wanted.includes(name) && !values.has(name)) values.set(name, valueStart === null ? '' : html.slice(valueStart, valueEnd))
  })
  return { end, values }
}

/** Where a comment starting at `at` (`<!--`) ends (`-->` or `--!>`), or -1 when the input ends inside it. */
function commentEnd(html: string, at: number): number {
  // `<!-->` and `<!--->` are whole (empty) comments.
  if (html.charCodeAt(at + 4) === GT) return at + 5
  if (html.startsWith('->', at + 4)) return at + 6
  for (let dashes = html.indexOf('--', at + 4); dashes !== -1; dashes = html.indexOf('--', dashes + 1)) {
    const after = html.charCodeAt(dashes + 2)
    if (after === GT) return dashes + 3
    if (after === BANG && html.charCodeAt(dashes + 3) === GT) return dashes + 4
  }
  return -1
}

export function renderKeyText(html: string): string {
  let text = ''
  renderKeyParts(html, (part) => (text += part))
  return text
}

/** `renderKeyText` in pieces, in order, for a hash to take without the whole text being made. */
export function renderKeyParts(html: string, onPart: (part: string) => void): void {
  /** Spans to replace, in source order: [start, end, what stands there instead]. */
  const cuts: [number, number, string][] = []
  let i = html.indexOf('<')
  while (i !== -1) {
    const next = html.charCodeAt(i + 1)
    let after: number
    if (next === BANG && html.startsWith('--', i + 2)) after = commentEnd(html, i)
    else if (next === BANG || next === QUESTION || (next === SLASH && !isAsciiAlpha(html.charCodeAt(i + 2)))) {
      // Doctypes, bogus comments, `</>`: they end at the first `>`.
      after = html.indexOf('>', i + 1) + 1 || -1
    } else if (next === SLASH) after = endOfTag(html, tagNameEnd(html, i + 2))
    else if (isAsciiAlpha(next)) after = startTag(html, i, cuts)
    else after = i + 1
    if (after === -1) break
    i = html.indexOf('<', after)
  }
  let at = 0
  for (const [start, end, instead] of cuts) {
    if (start > at) onPart(html.slice(at, start))
    if (instead !== '') onPart(instead)
    at = end
  }
  if (at < html.length) onPart(at === 0 ? html : html.slice(at))
}

/** Reads the start tag at `at` and, for a raw-text element, its text; returns where reading goes on (-1: nowhere). */
function startTag(html: string, at: number, cuts: [number, number, string][]): number {
  const stop = tagNameEnd(html, at + 1)
  const length = stop - at - 1
  if (length >= 32 || !READ_SHAPES.has((html.charCodeAt(at + 1) | 0x20) * 32 + length)) return endOfTag(html, stop)
  const name = asciiLowercase(html.slice(at + 1, stop))
  if (name === 'script') {
    const { end, values } = attributesOf(html, stop, ['src'])
    const src = values.get('src')
    const instead = src === undefined ? '' : `<script src=${JSON.stringify(src)}>`
    // A script the input ends inside goes to the end.
    const close = end === -1 ? -1 : scriptEnd(html, end)
    const closed = close === -1 ? -1 : endOfTag(html, close + '</script'.length)
    cuts.push([at, closed === -1 ? html.length : closed, instead])
    return closed
  }
  if (name === 'link') {
    const { end, values } = attributesOf(html, stop, ['rel'])
    if (end !== -1 && !asciiTokens(asciiLowercase(values.get('rel') ?? '')).includes('stylesheet')) cuts.push([at, end, ''])
    return end
  }
  const end = endOfTag(html, stop)
  // With scripting on, as the engine renders, a `<noscript>` holds text.
  if (end === -1 || !READ_NAMES.has(name)) return end
  if (name === 'plaintext') return -1
  const close = rawTextEnd(html, end, name)
  return close === -1 ? -1 : endOfTag(html, close + 2 + name.length)
}
