/**
 * The open SVG and MathML elements, and HTML integration points in them: where the
 * tokenizer must read markup as foreign content, and where a link would not be an HTML
 * link. Where the standard's rules get beyond what this follows, it answers 'confused'
 * and the scan stops trusting what comes next.
 */
import { BREAKOUT, INTEGRATION_POINTS } from './elements.ts'
import { attribute, type SourceTag } from './outline.ts'

type Namespace = 'svg' | 'math' | 'html'

export type ForeignStartTag =
  /** It ended the foreign content (a breakout tag) and is HTML itself. */
  | 'html'
  /** An element of the foreign content. */
  | 'foreign'
  | 'confused'

export type ForeignEndTag =
  /** It closed an element of the foreign content. */
  | 'closed'
  /** An HTML end tag, to handle as such. */
  | 'html'
  | 'confused'

export class ForeignContent {
  private readonly frames: { name: string; ns: Namespace; start: number }[] = []

  get empty(): boolean {
    return this.frames.length === 0
  }

  /** Start of the outermost `<svg>` or `<math>`: where what it holds begins. */
  get outermostStart(): number | undefined {
    return this.frames[0]?.start
  }

  /** Inside SVG or MathML proper, not in an integration point's HTML. */
  inForeign(): boolean {
    const frames = this.frames
    return frames.length > 0 && frames[frames.length - 1]!.ns !== 'html'
  }

  enter(name: 'svg' | 'math', start: number): void {
    this.frames.push({ name, ns: name, start })
  }

  /** A start tag inside SVG or MathML. */
  startTag(tag: SourceTag, selfClosing: boolean): ForeignStartTag {
    const { name } = tag
    const breakout = BREAKOUT.has(name) && (name !== 'font' || ['color', 'face', 'size'].some((a) => attribute(tag, a)))
    if (breakout) {
      while (this.inForeign()) this.frames.pop()
      // Else back in an integration point's HTML, which this scan does not follow.
      return this.frames.length === 0 ? 'html' : 'confused'
    }
    if (name === 'annotation-xml') return 'confused'
    if (!selfClosing) {
      const top = this.frames[this.frames.length - 1]!
      const ns = top.ns !== 'html' && INTEGRATION_POINTS[top.ns].has(name) ? 'html' : top.ns
      this.frames.push({ name, ns, start: tag.start })
    }
    return 'foreign'
  }

  /** An end tag in or around foreign content. */
  endTag(name: string): ForeignEndTag {
    const frames = this.frames
    const top = frames[frames.length - 1]!
    if (top.ns === 'html') {
      if (name !== top.name) return 'confused'
      frames.pop()
      return 'closed'
    }
    for (let i = frames.length - 1; i >= 0 && frames[i]!.ns !== 'html'; i--) {
      if (frames[i]!.name === name) {
        frames.length = i
        return 'closed'
      }
    }
    // </br> and </p> end foreign content as their start tags do; any other HTML end tag may
    // close it from outside, which this scan cannot tell.
    if (name !== 'br' && name !== 'p') return 'confused'
    while (this.inForeign()) frames.pop()
    return frames.length === 0 ? 'html' : 'confused'
  }
}
