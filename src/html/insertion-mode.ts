/**
 * Which part of the document the parser is in (before the head, in it, after it, or in
 * the body), as the standard's insertion modes track it: that alone decides whether a
 * link is in the head, and where the head ends and the body begins.
 */
import { BodyContent } from './body.ts'
import type { Cursor } from './cursor.ts'
import { AFTER_HEAD_CONTENT, HEAD_CONTENT } from './elements.ts'
import type { ForeignContent } from './foreign.ts'
import { HeadContent } from './head.ts'
import type { HtmlOutline, ScanOptions, SourceTag } from './outline.ts'
import { isHtmlWhitespace } from './syntax.ts'

type Mode = 'before-head' | 'in-head' | 'after-head' | 'in-body'

export class InsertionMode {
  private mode: Mode = 'before-head'
  /** An explicit `<html>` start tag came: a missing head goes after it, not after the doctype. */
  private sawHtml = false
  readonly head: HeadContent
  private readonly body: BodyContent

  /** `confuse`: for body markup whose tree the scan does not model. */
  constructor(
    private readonly cursor: Cursor,
    private readonly options: ScanOptions,
    readonly outline: HtmlOutline,
    foreign: ForeignContent,
    private readonly confuse: () => void,
  ) {
    this.head = new HeadContent(outline)
    this.body = new BodyContent(outline, foreign, cursor)
  }

  get inBody(): boolean {
    return this.mode === 'in-body'
  }

  /** A `<template>` before the head opens it, as head content does. */
  templateOpened(): void {
    if (this.mode === 'before-head') this.mode = 'in-head'
  }

  /** A start tag that matters only as something shown (most of the body's). */
  otherStartTag(start: number): void {
    if (this.mode === 'in-body') this.body.content(start)
  }

  declaration(end: number): void {
    if (this.mode === 'before-head' && !this.sawHtml) this.outline.headPlace = end
  }

  /** Text outside raw text and templates: anything but whitespace starts the body. */
  text(start: number, end: number): void {
    if (this.mode === 'in-body') return this.body.text(start, end)
    const content = this.cursor.html.slice(start, end)
    let first = start
    // A byte-order mark is not content.
    if (first === 0 && content.charCodeAt(0) === 0xfeff) first = 1
    for (let i = first - start; i < content.length && isHtmlWhitespace(content.charCodeAt(i)); i++) first++
    if (first - start === content.length) return
    this.bodyContent(first)
  }

  /** `skippedTo`: where the tag's raw text was skipped to, if it was. */
  startTag(tag: SourceTag, selfClosing: boolean, skippedTo: number | null): void {
    const { name } = tag
    switch (this.mode) {
      case 'before-head':
        if (name === 'html') {
          this.sawHtml = true
          this.outline.headPlace = tag.end
        } else if (name === 'head') {
          this.mode = 'in-head'
        } else if (HEAD_CONTENT.has(name)) {
          this.mode = 'in-head'
          this.head.add(tag, false, skippedTo)
        } else {
          this.enterBody(tag, selfClosing)
        }
        return
      case 'in-head':
      case 'after-head':
        if (name === 'head' || name === 'html') return
        if ((this.mode === 'in-head' ? HEAD_CONTENT : AFTER_HEAD_CONTENT).has(name)) this.head.add(tag, this.mode === 'after-head', skippedTo)
        else this.enterBody(tag, selfClosing)
        return
      case 'in-body':
        this.inBodyTag(tag, selfClosing)
        return
    }
  }

  endTag(name: string, start: number): void {
    if (this.mode !== 'in-body') {
      // Before any head, `</head>` makes an empty one and closes it.
      if (name === 'head' && (this.mode === 'in-head' || this.mode === 'before-head')) {
        this.head.end(start)
        this.mode = 'after-head'
        return
      }
      // The standard reprocesses these "in body" after closing whatever came before; `</br>` becomes a <br>.
      if (name === 'body' || name === 'html' || name === 'br') this.bodyContent(start, name === 'br')
      else return
    }
    this.body.endTag(name, start)
  }

  /** Completes the outline; `end`: where the input's trusted content ends. */
  finish(end: number, confused: boolean): void {
    if (this.mode === 'in-head') this.head.end(end)
    // Past a confusing point anything may follow, even a <frameset> that drops the body.
    if (!confused) this.body.finish(end)
  }

  /** A start tag that begins the body. */
  private enterBody(tag: SourceTag, selfClosing: boolean): void {
    this.bodyContent(tag.start)
    this.inBodyTag(tag, selfClosing)
  }

  private inBodyTag(tag: SourceTag, selfClosing: boolean): void {
    if (this.cursor.stopped) return
    if (!this.body.startTag(tag, selfClosing)) this.confuse()
  }

  /**
   * Content that belongs to the body: ends the head (or stands where none was). `opens`:
   * it starts the body, as a start tag or text does; `</body>` and `</html>` do not.
   */
  private bodyContent(at: number, opens = true): void {
    if (this.mode === 'in-head') this.head.end(at)
    this.mode = 'in-body'
    if (!opens || this.body.openedAt !== null) return
    this.body.openedAt = at
    const reading = this.options.readBody?.(this.outline) ?? 'all'
    if (reading === 'nothing') this.cursor.stop()
    else if (reading === 'links') this.body.readLinksOnly(at)
  }
}
