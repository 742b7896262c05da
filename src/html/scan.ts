/**
 * Finds, with exact source offsets, what the inliner edits in a document: where `<head>`
 * begins and ends, the `<link>`s a browser puts in it, earlier critical-CSS blocks, and
 * where the body ends. htmlparser2's tokenizer gives the offsets (it also knows the raw
 * text of scripts and styles); the few tree-building rules of the HTML standard that decide
 * what is in the head are applied here, as a browser with scripting on applies them.
 */
import { decodeHTMLAttribute } from 'entities'
import { Tokenizer } from 'htmlparser2'

export interface SourceAttribute {
  /** Lowercased. */
  name: string
  /** Entities decoded. */
  value: string
  /** Offsets of the whole attribute (`name="value"`), end exclusive. */
  start: number
  end: number
}

export interface SourceTag {
  /** Lowercased. */
  name: string
  start: number
  /** Exclusive: just after `>`. */
  end: number
  attributes: SourceAttribute[]
}

export interface HtmlOutline {
  /** The explicit `<html>` start tag. */
  html: SourceTag | null
  /** The first explicit `<head>` start tag. */
  head: SourceTag | null
  /**
   * Where the head's content ends: `</head>`, the token that implied its end, or the end
   * of input. Null when the document has no head at all, not even an implied one.
   */
  headEnd: number | null
  /** Where a missing head belongs: after `<html>`, else after the doctype, else the start (after a BOM). */
  headPlace: number
  /**
   * Where the body's content ends: `</body>`, else `</html>`, else the end of input. Null
   * when the scan stopped where the body began (see `ScanOptions.stopAtBody`).
   */
  bodyEnd: number | null
  /**
   * Whether a body start tag or body content comes before `bodyEnd`. Without one, what is
   * put at `bodyEnd` is still parsed as head content, unless a `<body>` precedes it.
   */
  bodyOpened: boolean
  /** The `<link>`s the parser puts in the head, outside `<noscript>` and `<template>`. */
  headLinks: SourceTag[]
  /**
   * Those of `headLinks` after `</head>`: the parser still puts them in the head, but a
   * `<noscript>` there would start the body.
   */
  linksAfterHead: Set<SourceTag>
  /** Earlier `<style data-critical-css>` elements in the head, with the end of their `</style>`. */
  criticalStyles: { tag: SourceTag; end: number }[]
}

export const CRITICAL_STYLE_ATTRIBUTE = 'data-critical-css'

/** Start tags the standard processes "in head" when they come after `</head>`. */
const AFTER_HEAD_CONTENT = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'noframes', 'script', 'style', 'template', 'title'])
/** ...and before it, where a `<noscript>` is head content too. */
const HEAD_CONTENT = new Set([...AFTER_HEAD_CONTENT, 'noscript'])
/** Elements whose content htmlparser2's tokenizer reads as raw text. */
const RAW_TEXT = new Set(['iframe', 'noembed', 'noframes', 'plaintext', 'script', 'style', 'textarea', 'title', 'xmp'])
const HTML_WHITESPACE = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x20])
/** What may follow `</name` for an end tag to end raw text. */
const END_TAG_DELIMITERS = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x2f, 0x3e])

type Mode = 'before-head' | 'in-head' | 'after-head' | 'in-body'

export function isWhitespace(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!HTML_WHITESPACE.has(text.charCodeAt(i))) return false
  return true
}

export function attribute(tag: SourceTag, name: string): SourceAttribute | undefined {
  return tag.attributes.find((a) => a.name === name)
}

/** Names that matter in the body: where raw text or a template begins or ends, and the body's own end. */
const BODY_NAMES = new Set([...RAW_TEXT, 'noscript', 'template', 'body', 'html'])
/** First letter and length of each of them: most body tags (div, p, a, li…) are ruled out without making a string. */
const BODY_NAME_SHAPES = new Set([...BODY_NAMES].map((name) => name.charCodeAt(0) * 32 + name.length))

/** The lowercased tag name if it matters in the body, else ''. */
function bodyTagName(html: string, start: number, end: number): string {
  const length = end - start
  if (length >= 32 || !BODY_NAME_SHAPES.has((html.charCodeAt(start) | 0x20) * 32 + length)) return ''
  const name = html.slice(start, end).toLowerCase()
  return BODY_NAMES.has(name) ? name : ''
}

export interface ScanOptions {
  /**
   * Asked once, where the body begins, with what is known of the head by then: true ends
   * the scan there. Reading the body is most of the work, and only its end is ever needed.
   */
  stopAtBody?: (outline: HtmlOutline) => boolean
}

export function scanHtml(html: string, options: ScanOptions = {}): HtmlOutline {
  return new Scanner(html, options).run()
}

class Scanner {
  private readonly outline: HtmlOutline
  private mode: Mode = 'before-head'
  /** The raw-text element the tokenizer is in, and where its start tag began. */
  private rawText: { name: string; start: number } | null = null
  private templateDepth = 0
  /** Where the token that started the body begins. */
  private bodyOpenedAt: number | null = null
  /** Start of the outermost open `<template>`: content put after it at the end would be its content. */
  private templateStart = 0
  private openCritical: SourceTag | null = null
  private bodyEndFound = false
  private htmlCloseStart: number | null = null
  /** End of the last complete token. */
  private lastEnd = 0
  /** Where input that ends inside a construct (a tag, a comment, raw text) begins: nothing may go after it. */
  private cut = Number.POSITIVE_INFINITY
  /** The start tag being read, when its attributes matter (a link or style in the head). */
  private tag: SourceTag | null = null
  /** Name and start of the start tag being read, whatever it is. */
  private tagName = ''
  private tagStart = -1
  private attributeName = ''
  private attributeStart = 0
  private attributeValue = ''
  /** Offset of the segment the current tokenizer reads. */
  private base = 0
  /** Set to restart the tokenizer there (after a `<noscript>`'s raw text). */
  private resumeAt: number | null = null
  private tokenizer: Tokenizer | null = null
  private lowercase: string | null = null
  /**
   * Set while the tokenizer flushes what the input ended inside of (`</`, `<!-- x`, `&amp`):
   * text put after such a remnant could be swallowed by it.
   */
  private ending = false

  /** The scan ended where the body began. */
  private stopped = false

  constructor(
    private readonly html: string,
    private readonly options: ScanOptions,
  ) {
    this.outline = {
      html: null,
      head: null,
      headEnd: null,
      headPlace: html.charCodeAt(0) === 0xfeff ? 1 : 0,
      bodyEnd: html.length,
      bodyOpened: false,
      headLinks: [],
      linksAfterHead: new Set(),
      criticalStyles: [],
    }
  }

  run(): HtmlOutline {
    const { html, outline } = this
    let from = 0
    while (from < html.length) {
      this.resumeAt = null
      this.readFrom(from)
      if (this.resumeAt === null || this.stopped) break
      from = this.resumeAt
      this.lastEnd = from
    }
    if (this.stopped) {
      outline.bodyEnd = null
      outline.bodyOpened = true
      return outline
    }
    const none = Number.POSITIVE_INFINITY
    const end = Math.min(
      this.lastEnd,
      this.cut,
      this.rawText?.start ?? none,
      this.tagStart >= 0 ? this.tagStart : none,
      this.templateDepth > 0 ? this.templateStart : none,
      html.length,
    )
    if (this.mode === 'in-head') this.endHead(end)
    const bodyEnd = this.bodyEndFound ? (outline.bodyEnd ?? end) : (this.htmlCloseStart ?? end)
    outline.bodyEnd = bodyEnd
    // Content put at the end comes after the token that started the body, or no body has begun.
    outline.bodyOpened = this.bodyOpenedAt !== null && this.bodyOpenedAt < bodyEnd
    return outline
  }

  private readFrom(from: number): void {
    this.base = from
    this.tag = null
    this.tagStart = -1
    // Entities are decoded only in the attributes that are kept: most of a page is body,
    // and its attributes and text are never looked at.
    const tokenizer = new Tokenizer({ decodeEntities: false }, this.callbacks())
    this.tokenizer = tokenizer
    tokenizer.write(from === 0 ? this.html : this.html.slice(from))
    if (this.resumeAt === null && !this.stopped) {
      this.ending = true
      tokenizer.end()
      this.ending = false
    }
  }


  private callbacks(): ConstructorParameters<typeof Tokenizer>[1] {
    const html = this.html
    const at = (index: number): number => this.base + index
    return {
      onopentagname: (start, endIndex) => {
        this.tagStart = at(start) - 1
        this.tagName = this.mode === 'in-body' ? bodyTagName(html, at(start), at(endIndex)) : html.slice(at(start), at(endIndex)).toLowerCase()
        const keep = this.mode !== 'in-body' && this.templateDepth === 0 && (this.tagName === 'link' || this.tagName === 'style')
        this.tag = keep ? { name: this.tagName, start: this.tagStart, end: at(endIndex), attributes: [] } : null
      },
      onattribname: (start, endIndex) => {
        if (!this.tag) return
        this.attributeName = html.slice(at(start), at(endIndex)).toLowerCase()
        this.attributeStart = at(start)
        this.attributeValue = ''
      },
      onattribdata: (start, endIndex) => {
        if (this.tag) this.attributeValue += html.slice(at(start), at(endIndex))
      },
      onattribentity: () => {},
      onattribend: (_quote, endIndex) => {
        const tag = this.tag
        // A repeated attribute is ignored by browsers; keep the first, as they do.
        if (tag && !tag.attributes.some((a) => a.name === this.attributeName)) {
          const value = this.attributeValue.includes('&') ? decodeHTMLAttribute(this.attributeValue) : this.attributeValue
          tag.attributes.push({ name: this.attributeName, value, start: this.attributeStart, end: at(endIndex) })
        }
      },
      onopentagend: (endIndex) => this.finishTag(at(endIndex), false),
      onselfclosingtag: (endIndex) => this.finishTag(at(endIndex), true),
      onclosetag: (start, endIndex) => {
        // The tokenizer skips anything between the name and '>' of an end tag.
        const close = html.indexOf('>', at(endIndex))
        const end = close === -1 ? html.length : close + 1
        const name = this.mode === 'in-body' && this.rawText === null ? bodyTagName(html, at(start), at(endIndex)) : html.slice(at(start), at(endIndex)).toLowerCase()
        this.endTag(name, at(start) - 2, end)
        this.lastEnd = end
      },
      ontext: (start, endIndex) => {
        if (this.ending) return this.remnant()
        if (this.mode !== 'in-body' && this.rawText === null && this.templateDepth === 0) this.text(at(start), html.slice(at(start), at(endIndex)))
        this.lastEnd = at(endIndex)
      },
      ontextentity: () => {},
      ondeclaration: (_start, endIndex) => {
        this.lastEnd = at(endIndex) + 1
        if (this.mode === 'before-head' && this.outline.html === null) this.outline.headPlace = this.lastEnd
      },
      oncomment: (_start, endIndex) => this.comment(at(endIndex) + 1),
      oncdata: (_start, endIndex) => this.comment(at(endIndex) + 1),
      onprocessinginstruction: (_start, endIndex) => this.comment(at(endIndex) + 1),
      onend: () => {},
    }
  }

  private comment(end: number): void {
    if (this.ending) this.remnant()
    else this.lastEnd = end
  }

  /**
   * What the input ended inside of (an unterminated comment or tag, `</`, `&amp`) starts
   * after the last complete token: what goes at the end goes before it.
   */
  private remnant(): void {
    this.cut = Math.min(this.cut, this.lastEnd)
  }

  private endHead(at: number): void {
    if (this.outline.headEnd === null) this.outline.headEnd = at
  }

  /**
   * Content that belongs to the body: ends the head (or stands where none was). `opens`:
   * it starts the body, as a start tag or text does; `</body>` and `</html>` do not.
   */
  private bodyContent(at: number, opens = true): void {
    if (this.mode === 'in-head') this.endHead(at)
    this.mode = 'in-body'
    if (!opens || this.bodyOpenedAt !== null) return
    this.bodyOpenedAt = at
    if (this.options.stopAtBody?.(this.outline)) {
      this.stopped = true
      this.tokenizer?.pause()
    }
  }

  /** A start tag the parser puts in the head. */
  private inHead(tag: SourceTag): void {
    if (tag.name === 'link') {
      this.outline.headLinks.push(tag)
      if (this.mode === 'after-head') this.outline.linksAfterHead.add(tag)
    } else if (tag.name === 'style' && attribute(tag, CRITICAL_STYLE_ATTRIBUTE)) this.openCritical = tag
  }

  private finishTag(endIndex: number, selfClosing: boolean): void {
    const start = this.tagStart
    if (start < 0) return
    this.tagStart = -1
    this.lastEnd = endIndex + 1
    // A body tag that does not matter: nothing to make.
    if (this.tagName === '') return
    const tag: SourceTag = this.tag ? { ...this.tag, end: endIndex + 1 } : { name: this.tagName, start, end: endIndex + 1, attributes: [] }
    this.tag = null
    this.startTag(tag, selfClosing)
  }

  private startTag(tag: SourceTag, selfClosing: boolean): void {
    const { name } = tag
    // The tokenizer takes `<style/>` for an empty element; browsers ignore the slash.
    if (RAW_TEXT.has(name) && selfClosing && this.templateDepth === 0) this.skipRawText(tag)
    else if (RAW_TEXT.has(name)) this.rawText = { name, start: tag.start }
    // A template's content is a document fragment of its own: nothing in it counts.
    if (name === 'template') {
      if (this.templateDepth === 0) {
        if (this.mode === 'before-head') this.mode = 'in-head'
        this.templateStart = tag.start
      }
      this.templateDepth++
      return
    }
    if (this.templateDepth > 0) return
    if (name === 'noscript') this.skipRawText(tag)
    switch (this.mode) {
      case 'before-head':
        if (name === 'html') {
          this.outline.html ??= tag
          this.outline.headPlace = tag.end
        } else if (name === 'head') {
          this.outline.head = tag
          this.mode = 'in-head'
        } else if (HEAD_CONTENT.has(name)) {
          this.mode = 'in-head'
          this.inHead(tag)
        } else {
          this.bodyContent(tag.start)
        }
        return
      case 'in-head':
      case 'after-head':
        if (name === 'head' || name === 'html') return
        if ((this.mode === 'in-head' ? HEAD_CONTENT : AFTER_HEAD_CONTENT).has(name)) this.inHead(tag)
        else this.bodyContent(tag.start)
        return
      case 'in-body':
        return
    }
  }

  /**
   * Raw text the tokenizer would read as markup (a `<noscript>`, which holds raw text when
   * scripting is on, or a raw-text element written `<style/>`) runs to its end tag: read on
   * from there with a fresh tokenizer.
   */
  private skipRawText(tag: SourceTag): void {
    this.lowercase ??= this.html.toLowerCase()
    const endTag = `</${tag.name}`
    let search = tag.end
    for (;;) {
      const close = this.lowercase.indexOf(endTag, search)
      const after = close + endTag.length
      if (close === -1 || after >= this.html.length) {
        // Raw text to the end of input.
        this.cut = Math.min(this.cut, tag.start)
        this.resumeAt = this.html.length
        break
      }
      if (END_TAG_DELIMITERS.has(this.html.charCodeAt(after))) {
        const gt = this.html.indexOf('>', after)
        if (gt === -1) {
          this.cut = Math.min(this.cut, tag.start)
          this.resumeAt = this.html.length
        } else {
          this.resumeAt = gt + 1
        }
        break
      }
      search = after
    }
    this.tokenizer?.pause()
  }

  private endTag(name: string, start: number, end: number): void {
    if (this.rawText !== null) {
      if (name !== this.rawText.name) return
      this.rawText = null
      if (name === 'style' && this.openCritical) {
        this.outline.criticalStyles.push({ tag: this.openCritical, end })
        this.openCritical = null
      }
      return
    }
    if (name === 'template') {
      if (this.templateDepth > 0) this.templateDepth--
      return
    }
    if (this.templateDepth > 0) return
    if (this.mode !== 'in-body') {
      // Before any head, `</head>` makes an empty one and closes it.
      if (name === 'head' && (this.mode === 'in-head' || this.mode === 'before-head')) {
        this.endHead(start)
        this.mode = 'after-head'
        return
      }
      // The standard reprocesses these "in body" after closing whatever came before; `</br>` becomes a <br>.
      if (name === 'body' || name === 'html' || name === 'br') this.bodyContent(start, name === 'br')
      else return
    }
    if (name === 'body' && !this.bodyEndFound) {
      this.outline.bodyEnd = start
      this.bodyEndFound = true
    } else if (name === 'html' && this.htmlCloseStart === null) {
      this.htmlCloseStart = start
    }
  }

  private text(start: number, content: string): void {
    if (this.rawText !== null || this.templateDepth > 0 || this.mode === 'in-body') return
    let first = start
    // A byte-order mark is not content.
    if (first === 0 && content.charCodeAt(0) === 0xfeff) first = 1
    const offset = first - start
    for (let i = offset; i < content.length && HTML_WHITESPACE.has(content.charCodeAt(i)); i++) first++
    if (first - start === content.length) return
    this.bodyContent(first)
  }
}
