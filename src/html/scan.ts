/**
 * Finds, with exact source offsets, what the inliner edits in a document: where `<head>`
 * begins and ends, the stylesheets a browser puts in it, earlier critical-CSS blocks, and
 * where stylesheets can go at the end of the body. htmlparser2's tokenizer gives the
 * offsets; `syntax.ts` covers where browsers read the source differently; the few
 * tree-building rules of the HTML standard that decide what is in the head and the body
 * are applied here, as a browser with scripting on applies them.
 */
import { decodeHTMLAttribute } from 'entities'
import { Tokenizer } from 'htmlparser2'
import { asciiLowercase, asciiTokens, asciiTrim, endOfTag, isHtmlWhitespace, rawTextEnd, scriptEnd } from './syntax.ts'


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
  /**
   * Where the head's content ends: `</head>`, the token that implied its end, or the end
   * of input. Null when the document has no head at all, not even an implied one.
   */
  headEnd: number | null
  /** Where a missing head belongs: after `<html>`, else after the doctype, else the start (after a BOM). */
  headPlace: number
  /** The `<link>`s the parser puts in the head, outside `<noscript>` and `<template>`. */
  headLinks: SourceTag[]
  /**
   * Those of `headLinks` after `</head>`: the parser still puts them in the head, but a
   * `<noscript>` there would start the body.
   */
  linksAfterHead: Set<SourceTag>
  /** The head's own `<style>` elements (not critical-CSS blocks): they take part in the cascade. */
  headStyles: SourceTag[]
  /** Earlier `<style data-critical-css>` elements in the head, with the end of their `</style>`. */
  criticalStyles: { tag: SourceTag; end: number }[]
  /**
   * Where stylesheets moved out of the head go: before the body's first stylesheet or
   * `<style>` (so the cascade keeps its order), else before `</body>`, else `</html>`,
   * else the end of input. Null when the scan stopped where the body began, or when no
   * such place is plain HTML body content (inside `<svg>`, `<math>`, `<select>`, or a
   * `<frameset>` document), where a link would not load.
   */
  bodyEnd: number | null
  /**
   * Whether the body has begun before `bodyEnd`. Without that, what is put at `bodyEnd`
   * would be parsed into the head, unless a `<body>` precedes it.
   */
  bodyOpened: boolean
}

export const CRITICAL_STYLE_ATTRIBUTE = 'data-critical-css'

/** Start tags the standard processes "in head" when they come after `</head>`. */
const AFTER_HEAD_CONTENT = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'noframes', 'script', 'style', 'template', 'title'])
/** ...and before it, where a `<noscript>` is head content too. */
const HEAD_CONTENT = new Set([...AFTER_HEAD_CONTENT, 'noscript'])
/** Elements whose raw text htmlparser2's tokenizer reads correctly (scripts are read by `scriptEnd`). */
const RAW_TEXT = new Set(['iframe', 'noembed', 'noframes', 'plaintext', 'style', 'textarea', 'title', 'xmp'])
const FOREIGN = new Set(['svg', 'math'])
/** Elements of SVG and MathML whose content is HTML again (the standard's integration points). */
const INTEGRATION_POINTS: Readonly<Record<'svg' | 'math', Set<string>>> = {
  svg: new Set(['foreignobject', 'desc', 'title']),
  math: new Set(['mi', 'mo', 'mn', 'ms', 'mtext']),
}
/** HTML start tags that end SVG or MathML content where they appear. */
const BREAKOUT = new Set([
  'b', 'big', 'blockquote', 'body', 'br', 'center', 'code', 'dd', 'div', 'dl', 'dt', 'em', 'embed', 'font', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'head',
  'hr', 'i', 'img', 'li', 'listing', 'menu', 'meta', 'nobr', 'ol', 'p', 'pre', 'ruby', 's', 'small', 'span', 'strong', 'strike', 'sub', 'sup', 'table',
  'tt', 'u', 'ul', 'var',
])
/** Names that matter in the body. */
const BODY_NAMES = new Set([...RAW_TEXT, ...FOREIGN, 'script', 'noscript', 'template', 'body', 'html', 'link', 'select', 'frameset'])
/** First letter and length of each of them: most body tags (div, p, a, li…) are ruled out without making a string. */
const BODY_NAME_SHAPES = new Set([...BODY_NAMES].map((name) => name.charCodeAt(0) * 32 + name.length))
/** `<![CDATA[` */
const CDATA_OPEN_LENGTH = 9

type Mode = 'before-head' | 'in-head' | 'after-head' | 'in-body'

/** The lowercased tag name if it matters in the body, else ''. */
function bodyTagName(html: string, start: number, end: number): string {
  const length = end - start
  if (length >= 32 || !BODY_NAME_SHAPES.has((html.charCodeAt(start) | 0x20) * 32 + length)) return ''
  const name = html.slice(start, end).toLowerCase()
  return BODY_NAMES.has(name) ? name : ''
}

export function attribute(tag: SourceTag, name: string): SourceAttribute | undefined {
  return tag.attributes.find((a) => a.name === name)
}

/** A page's own async stylesheet (`rel=preload as=style onload=…`, the swap pattern): it joins the cascade where it stands. */
export function isSwapPreload(tag: SourceTag): boolean {
  const rel = asciiTokens(asciiLowercase(attribute(tag, 'rel')?.value ?? ''))
  return rel.includes('preload') && asciiLowercase(asciiTrim(attribute(tag, 'as')?.value ?? '')) === 'style' && attribute(tag, 'onload') !== undefined
}

/** A link that is, or will become, a stylesheet where it stands. */
function loadsStyles(tag: SourceTag): boolean {
  return asciiTokens(asciiLowercase(attribute(tag, 'rel')?.value ?? '')).includes('stylesheet') || isSwapPreload(tag)
}

/** The `href`s of the stylesheets a page's head loads, in document order, entities decoded. */
export function stylesheetHrefs(html: string): string[] {
  const hrefs: string[] = []
  for (const link of scanHtml(html, { stopAtBody: () => true }).headLinks) {
    const href = attribute(link, 'href')?.value
    if (href !== undefined && loadsStyles(link)) hrefs.push(asciiTrim(href))
  }
  return hrefs
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
  /** An explicit `<html>` start tag came: a missing head goes after it, not after the doctype. */
  private sawHtml = false
  /** The raw-text element the tokenizer is in, and where its start tag began. */
  private rawText: { name: string; start: number } | null = null
  private templateDepth = 0
  /** Start of the outermost open `<template>`: content put after it at the end would be its content. */
  private templateStart = 0
  /**
   * The open SVG and MathML elements of the body, and HTML integration points in them:
   * where the tokenizer must read markup as foreign content, and where a link would not be
   * an HTML link.
   */
  private foreign: { name: string; ns: 'svg' | 'math' | 'html'; start: number }[] = []
  /**
   * Set where the scan met markup whose tree it does not model (HTML inside SVG, an end tag
   * that closes foreign content from outside, …): it stopped there, and nothing after that
   * point is trusted.
   */
  private confused = false
  /** Open `<select>` elements in the body, and whether this is a frameset document. */
  private selectDepth = 0
  private frameset = false
  /** Where the token that started the body begins. */
  private bodyOpenedAt: number | null = null
  /** The body's first stylesheet or `<style>`, and whether a link put there would be plain body content. */
  private firstBodyStyle: { at: number; plain: boolean } | null = null
  private openCritical: SourceTag | null = null
  private bodyClose: { at: number; plain: boolean } | null = null
  private htmlClose: { at: number; plain: boolean } | null = null
  /** End of the last complete token. */
  private lastEnd = 0
  /** Where input that ends inside a construct (a tag, a comment, raw text) begins: nothing may go after it. */
  private cut = Number.POSITIVE_INFINITY
  /** The start tag being read, when its attributes matter (a link or style). */
  private tag: SourceTag | null = null
  /** Name and start of the start tag being read, whatever it is. */
  private tagName = ''
  private tagStart = -1
  private attributeName = ''
  private attributeStart = 0
  private attributeValue = ''
  /** Offset of the segment the current tokenizer reads. */
  private base = 0
  /** Set to read on from there with a fresh tokenizer (after raw text it does not know, say). */
  private resumeAt: number | null = null
  private tokenizer: Tokenizer | null = null
  /** One set of callbacks for every segment: they read the segment's offset from `base`. */
  private readonly handlers: ConstructorParameters<typeof Tokenizer>[1]
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
      headEnd: null,
      headPlace: html.charCodeAt(0) === 0xfeff ? 1 : 0,
      headLinks: [],
      linksAfterHead: new Set(),
      headStyles: [],
      criticalStyles: [],
      bodyEnd: null,
      bodyOpened: false,
    }
    this.handlers = this.callbacks()
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
    if (this.stopped) return outline
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
    // Past a confusing point anything may follow, even a <frameset> that drops the body.
    if (this.confused) return outline
    // Before the body's first stylesheet (the cascade keeps its order), else at its end;
    // nowhere if that place would not take a working link.
    const place = this.firstBodyStyle ?? this.bodyClose ?? this.htmlClose ?? { at: end, plain: this.plainBody() }
    if (!place.plain || this.frameset) return outline
    outline.bodyEnd = place.at
    // A body stylesheet stands in the body; elsewhere, the body must have begun before.
    outline.bodyOpened = place === this.firstBodyStyle || (this.bodyOpenedAt !== null && this.bodyOpenedAt < place.at)
    return outline
  }

  private plainBody(): boolean {
    return this.foreign.length === 0 && this.selectDepth === 0 && !this.frameset
  }

  private inForeign(): boolean {
    const frames = this.foreign
    return frames.length > 0 && frames[frames.length - 1]!.ns !== 'html'
  }

  private readFrom(from: number): void {
    this.base = from
    this.tag = null
    this.tagStart = -1
    // Entities are decoded only in the attributes that are kept: most of a page is body,
    // and its attributes and text are never looked at.
    const tokenizer = new Tokenizer({ decodeEntities: false }, this.handlers)
    this.tokenizer = tokenizer
    tokenizer.write(from === 0 ? this.html : this.html.slice(from))
    if (this.resumeAt === null && !this.stopped) {
      this.ending = true
      tokenizer.end()
      this.ending = false
    }
  }

  /** Stops this tokenizer; `run` reads on from `at` with a fresh one. */
  private resume(at: number): void {
    this.resumeAt = at
    this.tokenizer?.pause()
  }

  private callbacks(): ConstructorParameters<typeof Tokenizer>[1] {
    const html = this.html
    const at = (index: number): number => this.base + index
    return {
      onopentagname: (start, endIndex) => {
        this.tagStart = at(start) - 1
        // In foreign content every name matters: each opens or closes an element of it.
        this.tagName = this.mode === 'in-body' && this.foreign.length === 0 ? bodyTagName(html, at(start), at(endIndex)) : html.slice(at(start), at(endIndex)).toLowerCase()
        const keep = this.inForeign() ? this.tagName === 'font' : this.templateDepth === 0 && (this.tagName === 'link' || this.tagName === 'style')
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
      onclosetag: (start, endIndex) => this.closeTag(at(start), at(endIndex)),
      ontext: (start, endIndex) => {
        if (this.ending) return this.remnant()
        if (this.mode !== 'in-body' && this.rawText === null && this.templateDepth === 0) this.text(at(start), html.slice(at(start), at(endIndex)))
        this.lastEnd = at(endIndex)
      },
      ontextentity: () => {},
      ondeclaration: (_start, endIndex) => {
        this.lastEnd = at(endIndex) + 1
        if (this.mode === 'before-head' && !this.sawHtml) this.outline.headPlace = this.lastEnd
      },
      oncomment: (start, endIndex) => this.comment(at(endIndex) + 1, at(start)),
      oncdata: (start, endIndex) => this.cdata(at(start), at(endIndex) + 1),
      onprocessinginstruction: (_start, endIndex) => this.comment(at(endIndex) + 1),
      onend: () => {},
      isInForeignContext: () => this.inForeign(),
    }
  }

  private comment(end: number, start = -1): void {
    if (!this.ending) {
      this.lastEnd = end
      return
    }
    // An unterminated `<![CDATA[` outside SVG and MathML is, to a browser, a comment that
    // ends at the first '>': read on from there.
    const gt = start >= 0 && !this.inForeign() && this.html.startsWith('[CDATA[', start) ? this.html.indexOf('>', start) : -1
    if (gt === -1) return this.remnant()
    this.lastEnd = gt + 1
    this.resume(gt + 1)
  }

  /** Outside SVG and MathML, browsers read `<![CDATA[` as a comment that ends at the first `>`. */
  private cdata(contentStart: number, end: number): void {
    if (this.ending) return this.remnant()
    const bogusEnd = this.html.indexOf('>', contentStart - CDATA_OPEN_LENGTH + 2) + 1
    if (!this.inForeign() && bogusEnd > 0 && bogusEnd < end) {
      this.lastEnd = bogusEnd
      this.resume(bogusEnd)
      return
    }
    this.lastEnd = end
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
    } else if (tag.name === 'style') {
      if (!attribute(tag, CRITICAL_STYLE_ATTRIBUTE)) this.outline.headStyles.push(tag)
      // Written `<style data-critical-css/>`, its raw text was skipped to its end already.
      else if (this.skippedTo !== null) this.outline.criticalStyles.push({ tag, end: this.skippedTo })
      else this.openCritical = tag
    }
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
    this.skippedTo = null
    if (this.inForeign()) {
      // An element of the foreign content, unless a breakout tag ends it and is HTML itself.
      if (!this.foreignStartTag(tag, selfClosing)) return
    } else if (this.foreign.length > 0) {
      // Markup inside an integration point (<foreignObject>, <mi>, …): HTML this scan does not follow.
      return this.confuse()
    }
    if (name === 'plaintext') {
      // Nothing ends it, `/>` or not: the rest of the input is its text.
      this.cut = Math.min(this.cut, tag.start)
      this.resume(this.html.length)
      return
    }
    // Raw text the tokenizer reads as markup: a script (its `<!--<script>` escapes), a
    // `<noscript>` (raw text with scripting on), a raw-text element written `<style/>`.
    if (name === 'script' || name === 'noscript' || (selfClosing && RAW_TEXT.has(name))) this.skipRawText(tag, selfClosing)
    else if (RAW_TEXT.has(name)) this.rawText = { name, start: tag.start }
    // A template's content is a document fragment of its own: only what decides how the
    // rest is read counts there.
    if (name === 'template') {
      if (this.templateDepth === 0) {
        if (this.mode === 'before-head') this.mode = 'in-head'
        this.templateStart = tag.start
      }
      this.templateDepth++
      return
    }
    if (this.templateDepth > 0) {
      if (FOREIGN.has(name) && !selfClosing) this.foreign.push({ name, ns: name as 'svg' | 'math', start: tag.start })
      return
    }
    switch (this.mode) {
      case 'before-head':
        if (name === 'html') {
          this.sawHtml = true
          this.outline.headPlace = tag.end
        } else if (name === 'head') {
          this.mode = 'in-head'
        } else if (HEAD_CONTENT.has(name)) {
          this.mode = 'in-head'
          this.inHead(tag)
        } else {
          this.enterBody(tag, selfClosing)
        }
        return
      case 'in-head':
      case 'after-head':
        if (name === 'head' || name === 'html') return
        if ((this.mode === 'in-head' ? HEAD_CONTENT : AFTER_HEAD_CONTENT).has(name)) this.inHead(tag)
        else this.enterBody(tag, selfClosing)
        return
      case 'in-body':
        this.inBody(tag, selfClosing)
        return
    }
  }

  /**
   * A start tag inside SVG or MathML. True when it ends the foreign content (a breakout
   * tag) and is HTML itself; false when it is an element of the foreign content.
   */
  private foreignStartTag(tag: SourceTag, selfClosing: boolean): boolean {
    const { name } = tag
    const breakout = BREAKOUT.has(name) && (name !== 'font' || ['color', 'face', 'size'].some((a) => attribute(tag, a)))
    if (breakout) {
      while (this.inForeign()) this.foreign.pop()
      if (this.foreign.length === 0) return true
      // Back in an integration point's HTML, which this scan does not follow.
      this.confuse()
      return false
    }
    if (name === 'annotation-xml') {
      this.confuse()
      return false
    }
    if (!selfClosing) {
      const top = this.foreign[this.foreign.length - 1]!
      const ns = top.ns !== 'html' && INTEGRATION_POINTS[top.ns].has(name) ? 'html' : top.ns
      this.foreign.push({ name, ns, start: tag.start })
    }
    return false
  }

  /** Stops the scan where the outermost foreign content or template that holds the puzzle began. */
  private confuse(): void {
    const anchor = this.templateDepth > 0 ? this.templateStart : (this.foreign[0]?.start ?? this.lastEnd)
    this.cut = Math.min(this.cut, anchor)
    this.confused = true
    this.resume(this.html.length)
  }

  /** A start tag that begins the body. */
  private enterBody(tag: SourceTag, selfClosing: boolean): void {
    this.bodyContent(tag.start)
    this.inBody(tag, selfClosing)
  }

  /** What the body's start tags tell: its first stylesheet, and whether a link put at its end would load. */
  private inBody(tag: SourceTag, selfClosing: boolean): void {
    if (this.stopped) return
    const { name } = tag
    if (FOREIGN.has(name)) {
      // Inside a <select>, browsers differ on what SVG becomes.
      if (this.selectDepth > 0) return this.confuse()
      if (!selfClosing) this.foreign.push({ name, ns: name as 'svg' | 'math', start: tag.start })
      return
    }
    // `<select/>` opens a select all the same: browsers ignore the slash.
    if (name === 'select') this.selectDepth++
    else if (name === 'frameset') this.frameset = true
    else if (name === 'style' || (name === 'link' && loadsStyles(tag))) {
      this.firstBodyStyle ??= { at: tag.start, plain: this.plainBody() }
    }
  }

  /**
   * Raw text the tokenizer may misread. Where it would find the same end by itself (a
   * script without `<!--<script>` escapes, a `<noscript>` holding no markup), it reads on;
   * otherwise the scan skips to just after the end tag and reads on from there.
   */
  private skipRawText(tag: SourceTag, selfClosing: boolean): void {
    const html = this.html
    const close = tag.name === 'script' ? scriptEnd(html, tag.end) : rawTextEnd(html, tag.end, tag.name)
    if (close !== -1 && !selfClosing) {
      const tokenizerSees = tag.name === 'script' ? rawTextEnd(html, tag.end, 'script') : html.indexOf('<', tag.end)
      if (tokenizerSees === close) {
        this.rawText = { name: tag.name, start: tag.start }
        return
      }
    }
    const end = close === -1 ? -1 : endOfTag(html, close + 2 + tag.name.length)
    if (end === -1) {
      // Raw text to the end of input: nothing may go after its start.
      this.cut = Math.min(this.cut, tag.start)
      this.resume(this.html.length)
    } else {
      this.skippedTo = end
      this.resume(end)
    }
  }

  /** Where the raw text of the start tag being handled was skipped to, if it was. */
  private skippedTo: number | null = null

  private closeTag(nameStart: number, nameEnd: number): void {
    const html = this.html
    const name =
      this.mode === 'in-body' && this.rawText === null && this.foreign.length === 0 ? bodyTagName(html, nameStart, nameEnd) : html.slice(nameStart, nameEnd).toLowerCase()
    // The tokenizer ends an end tag at its first '>'; browsers skip quoted attribute values.
    const seen = html.indexOf('>', nameEnd) + 1 || html.length
    const end = endOfTag(html, nameEnd)
    if (end === -1) {
      this.cut = Math.min(this.cut, nameStart - 2)
      this.resume(html.length)
      return
    }
    this.endTag(name, nameStart - 2, end)
    this.lastEnd = end
    if (end !== seen && !this.stopped) this.resume(end)
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
    if (this.foreign.length > 0 && this.foreignEndTag(name)) return
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
    if (name === 'select') {
      if (this.selectDepth > 0) this.selectDepth--
    } else if (name === 'body' && this.bodyClose === null) {
      this.bodyClose = { at: start, plain: this.plainBody() }
    } else if (name === 'html' && this.htmlClose === null) {
      this.htmlClose = { at: start, plain: this.plainBody() }
    }
  }

  /**
   * An end tag in or around foreign content: true when it closed an element of it (or left
   * the scan confused); false when it is an HTML end tag to handle as such.
   */
  private foreignEndTag(name: string): boolean {
    const frames = this.foreign
    const top = frames[frames.length - 1]!
    if (top.ns === 'html') {
      if (name === top.name) frames.pop()
      else this.confuse()
      return true
    }
    for (let i = frames.length - 1; i >= 0 && frames[i]!.ns !== 'html'; i--) {
      if (frames[i]!.name === name) {
        frames.length = i
        return true
      }
    }
    // </br> and </p> end foreign content as their start tags do; any other HTML end tag may
    // close it from outside, which this scan cannot tell.
    if (name !== 'br' && name !== 'p') {
      this.confuse()
      return true
    }
    while (this.inForeign()) frames.pop()
    if (frames.length === 0) return false
    this.confuse()
    return true
  }

  private text(start: number, content: string): void {
    let first = start
    // A byte-order mark is not content.
    if (first === 0 && content.charCodeAt(0) === 0xfeff) first = 1
    for (let i = first - start; i < content.length && isHtmlWhitespace(content.charCodeAt(i)); i++) first++
    if (first - start === content.length) return
    this.bodyContent(first)
  }
}
