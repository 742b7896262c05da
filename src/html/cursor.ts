/**
 * How far the scan has read, and how far it may be trusted. The tokenizer and the
 * tree-building rules both move it: either may find that the tokenizer would misread
 * what follows, and have the scan read on elsewhere with a fresh one.
 */
import type { Tokenizer } from 'htmlparser2'

export class Cursor {
  /** End of the last complete token. */
  lastEnd = 0
  /** Where input that ends inside a construct (a tag, a comment, raw text) begins: nothing may go after it. */
  cut = Number.POSITIVE_INFINITY
  /** Set to read on from there with a fresh tokenizer (after raw text it does not know, say). */
  resumeAt: number | null = null
  /** The scan ended where the body began. */
  stopped = false
  /** The tokenizer reading now: pausing it is how a callback ends its segment early. */
  tokenizer: Tokenizer | null = null

  constructor(readonly html: string) {}

  /** Stops this tokenizer; the scan reads on from `at` with a fresh one. */
  resume(at: number): void {
    this.resumeAt = at
    this.tokenizer?.pause()
  }

  /** Ends the scan for good: the caller has what it asked for. */
  stop(): void {
    this.stopped = true
    this.tokenizer?.pause()
  }

  cutAt(at: number): void {
    this.cut = Math.min(this.cut, at)
  }

  /** Nothing from `at` on can be read reliably: nothing may go after it, and reading ends. */
  abandonAt(at: number): void {
    this.cutAt(at)
    this.resume(this.html.length)
  }

  /**
   * What the input ended inside of (an unterminated comment or tag, `</`, `&amp`) starts
   * after the last complete token: what goes at the end goes before it.
   */
  remnant(): void {
    this.cutAt(this.lastEnd)
  }
}
