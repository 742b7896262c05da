/**
 * The few tree-building rules of the HTML standard that decide what is in the head and
 * what in the body, applied as a browser with scripting on applies them. Only where an
 * element ends up matters, so no tree is built: the insertion mode, and the open
 * elements that change how the rest is read (templates, raw text, SVG and MathML), are
 * all that is kept.
 */
import type { Cursor } from './cursor.ts'
import { isForeignRoot } from './elements.ts'
import { ForeignContent } from './foreign.ts'
import { InsertionMode } from './insertion-mode.ts'
import { emptyOutline, type HtmlOutline, type ScanOptions, type SourceTag } from './outline.ts'
import { RawText } from './raw-text.ts'
import type { TreeBuilding } from './tokens.ts'

export class TreeBuilder implements TreeBuilding {
  private templateDepth = 0
  /** Start of the outermost open `<template>`: content put after it at the end would be its content. */
  private templateStart = 0
  /**
   * Set where the scan met markup whose tree it does not model (HTML inside SVG, an end tag
   * that closes foreign content from outside, …): it stopped there, and nothing after that
   * point is trusted.
   */
  private confused = false
  private readonly foreign = new ForeignContent()
  private readonly rawText: RawText
  private readonly mode: InsertionMode

  constructor(
    private readonly cursor: Cursor,
    options: ScanOptions,
  ) {
    this.rawText = new RawText(cursor)
    this.mode = new InsertionMode(cursor, options, emptyOutline(cursor.html), this.foreign, () => this.confuse())
  }

  get outline(): HtmlOutline {
    return this.mode.outline
  }

  /** Where an element the input ends inside (raw text, a template) began: what goes at the end goes before it. */
  get openElementStart(): number | null {
    const rawTextStart = this.rawText.open?.start ?? null
    if (this.templateDepth === 0) return rawTextStart
    return rawTextStart === null ? this.templateStart : Math.min(rawTextStart, this.templateStart)
  }

  bodyNamesOnly(): boolean {
    return this.mode.inBody && this.foreign.empty
  }

  inRawText(): boolean {
    return this.rawText.open !== null
  }

  inForeign(): boolean {
    return this.foreign.inForeign()
  }

  /** Inside SVG and MathML a `<font>` with attributes ends the foreign content; elsewhere only the head's tags are read. */
  keepsAttributes(name: string): boolean {
    return this.inForeign() ? name === 'font' : this.templateDepth === 0 && HEAD_ATTRIBUTES_READ.has(name)
  }

  declaration(end: number): void {
    this.mode.declaration(end)
  }

  text(start: number, end: number): void {
    if (this.rawText.open === null && this.templateDepth === 0) this.mode.text(start, end)
  }

  otherStartTag(start: number): void {
    // A template's content is not shown.
    if (this.templateDepth === 0) this.mode.otherStartTag(start)
  }

  startTag(tag: SourceTag, selfClosing: boolean): void {
    const { name } = tag
    if (this.inForeign()) {
      const read = this.foreign.startTag(tag, selfClosing)
      if (read === 'confused') return this.confuse()
      if (read === 'foreign') return
    } else if (!this.foreign.empty) {
      // Markup inside an integration point (<foreignObject>, <mi>, …): HTML this scan does not follow.
      return this.confuse()
    }
    if (!this.rawText.startTag(tag, selfClosing)) return
    // A template's content is a document fragment of its own: only what decides how the
    // rest is read counts there.
    if (name === 'template') {
      if (this.templateDepth === 0) {
        this.mode.templateOpened()
        this.templateStart = tag.start
      }
      this.templateDepth++
      return
    }
    if (this.templateDepth > 0) {
      if (isForeignRoot(name) && !selfClosing) this.foreign.enter(name, tag.start)
      return
    }
    this.mode.startTag(tag, selfClosing, this.rawText.skippedTo)
  }

  endTag(name: string, start: number, end: number): void {
    if (this.rawText.open !== null) {
      if (this.rawText.endTag(name) && name === 'style') this.mode.head.styleClosed(end)
      return
    }
    if (!this.foreign.empty) {
      const read = this.foreign.endTag(name)
      if (read === 'confused') return this.confuse()
      if (read === 'closed') return
    }
    if (name === 'template') {
      if (this.templateDepth > 0) this.templateDepth--
      return
    }
    if (this.templateDepth === 0) this.mode.endTag(name, start)
  }

  /** Completes the outline once the input is read; `end`: where its trusted content ends. */
  finish(end: number): HtmlOutline {
    this.mode.finish(end, this.confused)
    return this.outline
  }

  /** Stops the scan where the outermost foreign content or template that holds the puzzle began. */
  private confuse(): void {
    this.confused = true
    this.cursor.abandonAt(this.templateDepth > 0 ? this.templateStart : (this.foreign.outermostStart ?? this.cursor.lastEnd))
  }
}

/** The tags whose attributes the outline needs: stylesheets and styles, what links resolve against, where the page says it is. */
const HEAD_ATTRIBUTES_READ = new Set(['link', 'style', 'base', 'meta'])
