/**
 * What the body's tags tell: its stylesheet links and whether anything shown follows them,
 * where stylesheets moved out of the head can go so that the cascade keeps its order, and
 * whether a link put there would be plain HTML that loads.
 */
import type { Cursor } from './cursor.ts'
import { isForeignRoot, showsNothing } from './elements.ts'
import type { ForeignContent } from './foreign.ts'
import { loadsStyles, type HtmlOutline, type SourceTag } from './outline.ts'
import { isHtmlWhitespace, lastLinkStart } from './syntax.ts'

interface Place {
  at: number
  /** A link put there would be plain body content, and load. */
  plain: boolean
}

export class BodyContent {
  /** Where the token that started the body begins. */
  openedAt: number | null = null
  /** Open `<select>` elements in the body, and whether this is a frameset document. */
  private selectDepth = 0
  private frameset = false
  /** The body's first stylesheet or `<style>`. */
  private firstStyle: Place | null = null
  private bodyClose: Place | null = null
  private htmlClose: Place | null = null
  /** `outline.bodyLinks` from this index on: links nothing shown has followed yet. */
  private awaiting = 0
  /** Set when only the links are read: where the last `<link` in the source begins. Past it, with no link awaiting content, the scan is done. */
  private lastLink: number | null = null

  constructor(
    private readonly outline: HtmlOutline,
    private readonly foreign: ForeignContent,
    private readonly cursor: Cursor,
  ) {}

  /** Reads on only as far as links are left to find (`from`: where the body begins). */
  readLinksOnly(from: number): void {
    this.lastLink = lastLinkStart(this.cursor.html, from)
    if (this.lastLink === -1) this.cursor.stop()
  }

  /** False where the tag makes what follows impossible to tell. */
  startTag(tag: SourceTag, selfClosing: boolean): boolean {
    const { name } = tag
    if (showsNothing(name)) this.doneAfter(tag.start)
    else this.content(tag.start)
    if (isForeignRoot(name)) {
      // Inside a <select>, browsers differ on what SVG becomes.
      if (this.selectDepth > 0) return false
      if (!selfClosing) this.foreign.enter(name, tag.start)
      return true
    }
    // `<select/>` opens a select all the same: browsers ignore the slash.
    if (name === 'select') this.selectDepth++
    else if (name === 'frameset') this.frameset = true
    else if (name === 'style' || (name === 'link' && loadsStyles(tag))) {
      this.firstStyle ??= { at: tag.start, plain: this.plain() }
    }
    // In a frameset document, browsers drop what follows the frameset.
    if (name === 'link' && !this.frameset) this.outline.bodyLinks.push(tag)
    return true
  }

  endTag(name: string, start: number): void {
    if (name === 'select') {
      if (this.selectDepth > 0) this.selectDepth--
    } else if (name === 'body' && this.bodyClose === null) {
      this.bodyClose = { at: start, plain: this.plain() }
    } else if (name === 'html' && this.htmlClose === null) {
      this.htmlClose = { at: start, plain: this.plain() }
    }
  }

  /** Text in the body: shown unless it is all whitespace. */
  text(start: number, end: number): void {
    // Most text needs no look while no link awaits content.
    if (this.awaiting === this.outline.bodyLinks.length) return this.doneAfter(start)
    const html = this.cursor.html
    for (let i = start; i < end; i++) if (!isHtmlWhitespace(html.charCodeAt(i))) return this.content(i)
  }

  /** Something shown begins at `at`: every link before it holds it up while loading. */
  content(at: number): void {
    const { bodyLinks, bodyLinksBeforeContent } = this.outline
    while (this.awaiting < bodyLinks.length) bodyLinksBeforeContent.add(bodyLinks[this.awaiting++]!)
    this.doneAfter(at)
  }

  /** Sets where stylesheets go, given where the input's trusted content ends. */
  finish(end: number): void {
    // Before the body's first stylesheet (the cascade keeps its order), else at its end;
    // nowhere if that place would not take a working link.
    const place = this.firstStyle ?? this.bodyClose ?? this.htmlClose ?? { at: end, plain: this.plain() }
    if (!place.plain || this.frameset) return
    this.outline.bodyEnd = place.at
    // A body stylesheet stands in the body; elsewhere, the body must have begun before.
    this.outline.bodyOpened = place === this.firstStyle || (this.openedAt !== null && this.openedAt < place.at)
  }

  /** Reading only the links, the scan is done at `at` past the last `<link` once no link awaits content. */
  private doneAfter(at: number): void {
    if (this.lastLink !== null && at > this.lastLink && this.awaiting === this.outline.bodyLinks.length) this.cursor.stop()
  }

  private plain(): boolean {
    return this.foreign.empty && this.selectDepth === 0 && !this.frameset
  }
}
