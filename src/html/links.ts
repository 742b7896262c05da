/**
 * Which of a page's stylesheet links take part in the cascade and which hold up first
 * paint: what every strategy asks before it touches a link.
 */
import { attribute, scanHtml, type SourceTag } from './scan.ts'
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

/** A stylesheet link that holds up first paint. */
export function blocksRender(tag: SourceTag): boolean {
  if (!applies(tag)) return false
  const media = attributeValue(tag, 'media')
  return media === undefined || !NON_BLOCKING_MEDIA.has(media)
}

/** The `href`s of the head's stylesheets that hold up first paint: none once a page's are deferred. */
export function renderBlockingStylesheets(html: string): string[] {
  return scanHtml(html, { stopAtBody: () => true }).headLinks.filter(blocksRender).map((link) => asciiTrim(attribute(link, 'href')?.value ?? ''))
}
