/**
 * Which of a page's stylesheet links take part in the cascade and which hold up first
 * paint, read off its outline: what every strategy asks before it touches a link.
 */
import { attribute, type HtmlOutline, type SourceTag } from './outline.ts'
import { asciiLowercase, asciiTokens, asciiTrim } from './syntax.ts'

/** Media a stylesheet never applies to on screen: such a link does not block render. */
const NON_BLOCKING_MEDIA = new Set(['print', 'none', 'only x', 'not all'])

/** An attribute's value as a browser compares it: trimmed, ASCII lowercase. */
export function attributeValue(tag: SourceTag, name: string): string | undefined {
  const found = attribute(tag, name)?.value
  return found === undefined ? undefined : asciiLowercase(asciiTrim(found))
}

/** A stylesheet link whose rules apply in some medium: it takes part in the cascade. */
export function applies(tag: SourceTag): boolean {
  const rel = asciiTokens(attributeValue(tag, 'rel') ?? '')
  if (!rel.includes('stylesheet') || rel.includes('alternate')) return false
  if (!attributeValue(tag, 'href')) return false
  if (attribute(tag, 'disabled')) return false
  // A sheet of another type is never applied.
  const type = attributeValue(tag, 'type')
  return type === undefined || type === '' || type === 'text/css'
}

/** A stylesheet link that blocks where it stands: render in the head, the parser in the body. */
export function blocksRender(tag: SourceTag): boolean {
  if (!applies(tag)) return false
  const media = attributeValue(tag, 'media')
  return media === undefined || !NON_BLOCKING_MEDIA.has(media)
}

/** A scanned page's stylesheet links that block, where the parser put them. */
export interface BlockingLinks {
  /** Those that block render. */
  head: SourceTag[]
  /** Those that block the parser: it waits at such a link until it has loaded (Chromium). */
  body: SourceTag[]
}

export function blockingLinks(outline: HtmlOutline): BlockingLinks {
  return { head: outline.headLinks.filter(blocksRender), body: outline.bodyLinks.filter(blocksRender) }
}

/**
 * Those of `blocking` that hold up painting: every one in the head; in the body, those
 * something shown follows. One with nothing shown after it holds up only scripts.
 */
export function holdingPaint(outline: HtmlOutline, blocking: BlockingLinks): SourceTag[] {
  return [...blocking.head, ...blocking.body.filter((link) => outline.bodyLinksBeforeContent.has(link))]
}
