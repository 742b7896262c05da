/**
 * Puts a start tag together from the tokenizer's pieces. Attributes are collected, and
 * their entities decoded, only for the few tags whose attributes are read: most of a page
 * is body, and its attributes are never looked at.
 */
import { decodeHTMLAttribute } from 'entities'
import type { SourceTag } from './outline.ts'

export class StartTagReader {
  /** Where the start tag being read began, whatever it is; -1 between tags. */
  start = -1
  private name = ''
  /** The start tag being read, when its attributes matter. */
  private tag: SourceTag | null = null
  private attributeName = ''
  private attributeStart = 0
  private attributeValue = ''

  constructor(private readonly html: string) {}

  /** A fresh tokenizer starts between tags: one cut short by the last is dropped. */
  reset(): void {
    this.tag = null
    this.start = -1
  }

  /** `name` is '' for a tag that does not matter; `keep` collects its attributes. */
  open(start: number, name: string, nameEnd: number, keep: boolean): void {
    this.start = start
    this.name = name
    this.tag = keep ? { name, start, end: nameEnd, attributes: [] } : null
  }

  attributeNamed(start: number, end: number): void {
    if (!this.tag) return
    this.attributeName = this.html.slice(start, end).toLowerCase()
    this.attributeStart = start
    this.attributeValue = ''
  }

  attributeData(start: number, end: number): void {
    if (this.tag) this.attributeValue += this.html.slice(start, end)
  }

  attributeEnd(end: number): void {
    const tag = this.tag
    // A repeated attribute is ignored by browsers; keep the first, as they do.
    if (tag && !tag.attributes.some((a) => a.name === this.attributeName)) {
      const value = this.attributeValue.includes('&') ? decodeHTMLAttribute(this.attributeValue) : this.attributeValue
      tag.attributes.push({ name: this.attributeName, value, start: this.attributeStart, end })
    }
  }

  /** Ends the open tag at `end`: the tag, or null when it does not matter. */
  finish(end: number): SourceTag | null {
    const start = this.start
    this.start = -1
    const kept = this.tag
    this.tag = null
    if (this.name === '') return null
    return kept ? { ...kept, end } : { name: this.name, start, end, attributes: [] }
  }
}
