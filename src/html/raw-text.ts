/**
 * Elements whose content is text, not markup (`<style>`, `<script>`, `<textarea>`, …).
 * htmlparser2's tokenizer reads most of them as a browser does; where it would not (a
 * script's `<!--<script>` escapes, a `<noscript>` with scripting on, a raw-text element
 * written `<style/>`), the scan skips to just after the end tag and reads on from there.
 */
import type { Cursor } from './cursor.ts'
import { RAW_TEXT } from './elements.ts'
import type { SourceTag } from './outline.ts'
import { endOfTag, rawTextEnd, scriptEnd } from './syntax.ts'

export class RawText {
  /** The raw-text element the tokenizer is in, and where its start tag began. */
  open: { name: string; start: number } | null = null
  /** Where the raw text of the start tag being handled was skipped to, if it was. */
  skippedTo: number | null = null

  constructor(private readonly cursor: Cursor) {}

  /** False when the tag leaves nothing after it to read (`<plaintext>`). */
  startTag(tag: SourceTag, selfClosing: boolean): boolean {
    const { name } = tag
    this.skippedTo = null
    if (name === 'plaintext') {
      // Nothing ends it, `/>` or not: the rest of the input is its text.
      this.cursor.abandonAt(tag.start)
      return false
    }
    if (name === 'script' || name === 'noscript' || (selfClosing && RAW_TEXT.has(name))) this.skip(tag, selfClosing)
    else if (RAW_TEXT.has(name)) this.open = { name, start: tag.start }
    return true
  }

  /** An end tag inside raw text: true when it ends it, false when it is only text. */
  endTag(name: string): boolean {
    if (name !== this.open?.name) return false
    this.open = null
    return true
  }

  /** Reads on where the tokenizer would find the same end by itself (a script without escapes, a `<noscript>` holding no markup); skips otherwise. */
  private skip(tag: SourceTag, selfClosing: boolean): void {
    const { cursor } = this
    const html = cursor.html
    const close = tag.name === 'script' ? scriptEnd(html, tag.end) : rawTextEnd(html, tag.end, tag.name)
    if (close !== -1 && !selfClosing) {
      const tokenizerSees = tag.name === 'script' ? rawTextEnd(html, tag.end, 'script') : html.indexOf('<', tag.end)
      if (tokenizerSees === close) {
        this.open = { name: tag.name, start: tag.start }
        return
      }
    }
    const end = close === -1 ? -1 : endOfTag(html, close + 2 + tag.name.length)
    // Raw text to the end of input: nothing may go after its start.
    if (end === -1) return cursor.abandonAt(tag.start)
    this.skippedTo = end
    cursor.resume(end)
  }
}
