/**
 * The page edits the bench needs: the page's stylesheets in document order, the same page
 * with its stylesheets swapped for one `<style>` of critical CSS, and url() rebasing of a
 * stylesheet's text as `critical` does before it hands the CSS to penthouse.
 */
import { parse, walk } from 'css-tree'
import { rebaseUrl } from '../../src/shared/css-plain.ts'
import { Parser } from 'htmlparser2'

export type StylesheetRef = { kind: 'link'; href: string } | { kind: 'style'; css: string }

interface Scan {
  sheets: StylesheetRef[]
  /** [start, end) of every `<link rel=stylesheet>` and `<style>` element. */
  ranges: [number, number][]
  /** Offset of `</head>`; else of `<body>`; else just after `<head>`, `<html>` or the doctype; else 0. */
  headEnd: number
  styles: string[]
}

function isStylesheetLink(attributes: Record<string, string>): boolean {
  const rel = (attributes.rel ?? '').toLowerCase().split(/\s+/)
  return rel.includes('stylesheet') && !rel.includes('alternate') && attributes.href !== undefined
}

function scan(html: string, pageUrl: string): Scan {
  const result: Scan = { sheets: [], ranges: [], headEnd: -1, styles: [] }
  let styleStart = -1
  let styleText = ''
  let fallback = 0
  const parser: Parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'link' && isStylesheetLink(attributes)) {
          result.sheets.push({ kind: 'link', href: new URL(attributes.href!, pageUrl).href })
          result.ranges.push([parser.startIndex, parser.endIndex + 1])
        } else if (name === 'style') {
          styleStart = parser.startIndex
          styleText = ''
        } else if (name === 'body' && result.headEnd < 0) {
          result.headEnd = parser.startIndex
        } else if (name === 'head' || name === 'html') {
          fallback = Math.max(fallback, parser.endIndex + 1)
        }
      },
      onprocessinginstruction(name) {
        if (name.toLowerCase() === '!doctype') fallback = Math.max(fallback, parser.endIndex + 1)
      },
      ontext(text) {
        if (styleStart >= 0) styleText += text
      },
      onclosetag(name, implied) {
        if (name === 'style' && styleStart >= 0) {
          result.sheets.push({ kind: 'style', css: styleText })
          result.styles.push(styleText)
          result.ranges.push([styleStart, implied ? parser.startIndex : parser.endIndex + 1])
          styleStart = -1
        } else if (name === 'head' && !implied && result.headEnd < 0) {
          result.headEnd = parser.startIndex
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  )
  parser.end(html)
  if (result.headEnd < 0) result.headEnd = fallback
  return result
}

/** The page's stylesheets as a browser applies them: links (absolute URLs) and `<style>` blocks, in document order. */
export function stylesheetsOf(html: string, pageUrl: string): StylesheetRef[] {
  return scan(html, pageUrl).sheets
}

/** The text of every `<style>` element in the page, in document order. */
export function styleContents(html: string): string[] {
  return scan(html, 'http://localhost/').styles
}

function styleElement(css: string, marker: string): string {
  return `<style ${marker}>${css.replace(/<\/(style)/gi, '<\\/$1')}</style>`
}

/** Adds a `<style>` at the end of the head, leaving everything else as it is. */
export function withStyle(html: string, css: string, marker = 'data-bench'): string {
  const { headEnd } = scan(html, 'http://localhost/')
  return html.slice(0, headEnd) + styleElement(css, marker) + html.slice(headEnd)
}

/** The page with every stylesheet link and `<style>` removed and one `<style>` of `criticalCss` at the end of the head. */
export function criticalOnly(html: string, criticalCss: string): string {
  const { ranges, headEnd } = scan(html, 'http://localhost/')
  let out = ''
  let at = 0
  let inserted = false
  for (const [start, end] of [...ranges, [headEnd, headEnd] as [number, number]].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    if (start < at) continue
    out += html.slice(at, start)
    if (start === headEnd && !inserted) {
      out += styleElement(criticalCss, 'data-critical-bench')
      inserted = true
    }
    at = Math.max(at, end)
  }
  return out + html.slice(at)
}

const ABSOLUTE_URL = /^(?:[a-z][a-z\d+.-]*:\/\/|\/\/)/i
const PLAIN_URL = /^[^\s"'()\\]+$/

/**
 * `critical`'s rebasing: every relative url() of a stylesheet resolved against the
 * stylesheet's own URL and written root-relative (`url(../img/a.png)` in `/css/s.css` →
 * `url(/img/a.png)`), so the CSS means the same wherever it is inlined. data: URLs,
 * fragments and absolute URLs are left as written.
 */
export function rebaseUrls(css: string, sheetUrl: string): string {
  const edits: { start: number; end: number; text: string }[] = []
  const base = new URL(sheetUrl)
  walk(parse(css, { positions: true, parseValue: true, parseCustomProperty: true }), {
    visit: 'Url',
    enter(node) {
      // Absolute URLs stay as written; the rest resolve as the engine rebases them.
      if (!node.loc || ABSOLUTE_URL.test(node.value.trim())) return
      const path = rebaseUrl(node.value, sheetUrl, base.origin)
      if (path === node.value) return
      edits.push({ start: node.loc.start.offset, end: node.loc.end.offset, text: PLAIN_URL.test(path) ? `url(${path})` : `url(${JSON.stringify(path)})` })
    },
  })
  let out = ''
  let at = 0
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    out += css.slice(at, edit.start) + edit.text
    at = edit.end
  }
  return out + css.slice(at)
}
