/**
 * Drives htmlparser2's tokenizer over the source and hands the tokens, with their
 * offsets, to the tree-building rules. Where the tokenizer would read the source
 * differently from a browser (an end tag's quoted attributes, a bogus `<![CDATA[`
 * comment), it is stopped and a fresh one reads on from where a browser would.
 */
import { Tokenizer } from 'htmlparser2'
import type { Cursor } from './cursor.ts'
import { bodyTagName } from './elements.ts'
import type { SourceTag } from './outline.ts'
import { StartTagReader } from './start-tag.ts'
import { endOfTag } from './syntax.ts'

type Callbacks = ConstructorParameters<typeof Tokenizer>[1]

/** `<![CDATA[` */
const CDATA_OPEN_LENGTH = 9

/** The tree-building rules, as the tokenizer needs them: they decide how names are read, too. */
export interface TreeBuilding {
  /** In the body outside SVG and MathML, where only a few tag names matter. */
  bodyNamesOnly(): boolean
  inRawText(): boolean
  inForeign(): boolean
  /** Whether the attributes of the start tag so named are read. */
  keepsAttributes(name: string): boolean
  startTag(tag: SourceTag, selfClosing: boolean): void
  /** A start tag whose name does not matter (`bodyNamesOnly`): in the body, something shown. */
  otherStartTag(start: number): void
  endTag(name: string, start: number, end: number): void
  text(start: number, end: number): void
  declaration(end: number): void
}

export class TokenReader {
  /** Offset of the segment the current tokenizer reads. */
  private base = 0
  /**
   * Set while the tokenizer flushes what the input ended inside of (`</`, `<!-- x`, `&amp`):
   * text put after such a remnant could be swallowed by it.
   */
  private ending = false
  private readonly startTag: StartTagReader
  /** One set of callbacks for every segment: they read the segment's offset from `base`. */
  private readonly callbacks: Callbacks

  constructor(
    private readonly cursor: Cursor,
    private readonly tree: TreeBuilding,
  ) {
    this.startTag = new StartTagReader(cursor.html)
    this.callbacks = this.handlers()
  }

  /** Where a start tag the input ends inside begins, if it does. */
  get openTagStart(): number | null {
    return this.startTag.start >= 0 ? this.startTag.start : null
  }

  read(): void {
    const { cursor } = this
    let from = 0
    while (from < cursor.html.length) {
      cursor.resumeAt = null
      this.readFrom(from)
      if (cursor.resumeAt === null || cursor.stopped) break
      from = cursor.resumeAt
      cursor.lastEnd = from
    }
  }

  private readFrom(from: number): void {
    const { cursor } = this
    this.base = from
    this.startTag.reset()
    // Entities are decoded only in the attributes that are kept: most of a page is body,
    // and its attributes and text are never looked at.
    const tokenizer = new Tokenizer({ decodeEntities: false }, this.callbacks)
    cursor.tokenizer = tokenizer
    tokenizer.write(from === 0 ? cursor.html : cursor.html.slice(from))
    if (cursor.resumeAt === null && !cursor.stopped) {
      this.ending = true
      tokenizer.end()
      this.ending = false
    }
  }

  private handlers(): Callbacks {
    const { cursor, tree, startTag } = this
    const html = cursor.html
    const at = (index: number): number => this.base + index
    return {
      onopentagname: (start, endIndex) => {
        // In foreign content every name matters: each opens or closes an element of it.
        const name = tree.bodyNamesOnly() ? bodyTagName(html, at(start), at(endIndex)) : html.slice(at(start), at(endIndex)).toLowerCase()
        startTag.open(at(start) - 1, name, at(endIndex), tree.keepsAttributes(name))
      },
      onattribname: (start, endIndex) => startTag.attributeNamed(at(start), at(endIndex)),
      onattribdata: (start, endIndex) => startTag.attributeData(at(start), at(endIndex)),
      onattribentity: () => {},
      onattribend: (_quote, endIndex) => startTag.attributeEnd(at(endIndex)),
      onopentagend: (endIndex) => this.finishTag(at(endIndex), false),
      onselfclosingtag: (endIndex) => this.finishTag(at(endIndex), true),
      onclosetag: (start, endIndex) => this.closeTag(at(start), at(endIndex)),
      ontext: (start, endIndex) => {
        if (this.ending) return cursor.remnant()
        tree.text(at(start), at(endIndex))
        cursor.lastEnd = at(endIndex)
      },
      ontextentity: () => {},
      ondeclaration: (_start, endIndex) => {
        cursor.lastEnd = at(endIndex) + 1
        tree.declaration(cursor.lastEnd)
      },
      oncomment: (start, endIndex) => this.comment(at(endIndex) + 1, at(start)),
      oncdata: (start, endIndex) => this.cdata(at(start), at(endIndex) + 1),
      onprocessinginstruction: (_start, endIndex) => this.comment(at(endIndex) + 1),
      onend: () => {},
      isInForeignContext: () => tree.inForeign(),
    }
  }

  private finishTag(endIndex: number, selfClosing: boolean): void {
    const start = this.startTag.start
    if (start < 0) return
    const tag = this.startTag.finish(endIndex + 1)
    this.cursor.lastEnd = endIndex + 1
    if (tag) this.tree.startTag(tag, selfClosing)
    else this.tree.otherStartTag(start)
  }

  private closeTag(nameStart: number, nameEnd: number): void {
    const { cursor } = this
    const html = cursor.html
    const name = this.tree.bodyNamesOnly() && !this.tree.inRawText() ? bodyTagName(html, nameStart, nameEnd) : html.slice(nameStart, nameEnd).toLowerCase()
    // The tokenizer ends an end tag at its first '>'; browsers skip quoted attribute values.
    const seen = html.indexOf('>', nameEnd) + 1 || html.length
    const end = endOfTag(html, nameEnd)
    if (end === -1) return cursor.abandonAt(nameStart - 2)
    this.tree.endTag(name, nameStart - 2, end)
    cursor.lastEnd = end
    if (end !== seen && !cursor.stopped) cursor.resume(end)
  }

  private comment(end: number, start = -1): void {
    const { cursor } = this
    if (!this.ending) {
      cursor.lastEnd = end
      return
    }
    // An unterminated `<![CDATA[` outside SVG and MathML is, to a browser, a comment that
    // ends at the first '>': read on from there.
    const gt = start >= 0 && !this.tree.inForeign() && cursor.html.startsWith('[CDATA[', start) ? cursor.html.indexOf('>', start) : -1
    if (gt === -1) return cursor.remnant()
    cursor.lastEnd = gt + 1
    cursor.resume(gt + 1)
  }

  /** Outside SVG and MathML, browsers read `<![CDATA[` as a comment that ends at the first `>`. */
  private cdata(contentStart: number, end: number): void {
    const { cursor } = this
    if (this.ending) return cursor.remnant()
    const bogusEnd = cursor.html.indexOf('>', contentStart - CDATA_OPEN_LENGTH + 2) + 1
    if (!this.tree.inForeign() && bogusEnd > 0 && bogusEnd < end) {
      cursor.lastEnd = bogusEnd
      cursor.resume(bogusEnd)
      return
    }
    cursor.lastEnd = end
  }
}
