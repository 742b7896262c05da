/**
 * What the body's tags tell: where stylesheets moved out of the head can go so that the
 * cascade keeps its order, and whether a link put there would be plain HTML that loads.
 */
import { isForeignRoot } from './elements.ts'
import type { ForeignContent } from './foreign.ts'
import { loadsStyles, type HtmlOutline, type SourceTag } from './outline.ts'

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

  constructor(private readonly foreign: ForeignContent) {}

  /** False where the tag makes what follows impossible to tell. */
  startTag(tag: SourceTag, selfClosing: boolean): boolean {
    const { name } = tag
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

  /** Sets where stylesheets go, given where the input's trusted content ends. */
  finish(outline: HtmlOutline, end: number): void {
    // Before the body's first stylesheet (the cascade keeps its order), else at its end;
    // nowhere if that place would not take a working link.
    const place = this.firstStyle ?? this.bodyClose ?? this.htmlClose ?? { at: end, plain: this.plain() }
    if (!place.plain || this.frameset) return
    outline.bodyEnd = place.at
    // A body stylesheet stands in the body; elsewhere, the body must have begun before.
    outline.bodyOpened = place === this.firstStyle || (this.openedAt !== null && this.openedAt < place.at)
  }

  private plain(): boolean {
    return this.foreign.empty && this.selectDepth === 0 && !this.frameset
  }
}
