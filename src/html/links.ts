/**
 * Which of a page's stylesheet links take part in the cascade and which hold up first
 * paint: what every strategy asks before it touches a link.
 */
import { loadsStyles, type HtmlOutline } from './outline.ts'
import { attribute, outlineOf, type SourceTag } from './scan.ts'
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

/** The `href`s of the stylesheets that hold up painting, in the head and the body: none once a page's are deferred. */
export function renderBlockingStylesheets(html: string): string[] {
  const outline = outlineOf(html, 'links')
  return holdingPaint(outline, blockingLinks(outline)).map((link) => asciiTrim(attribute(link, 'href')?.value ?? ''))
}

/** Attributes that only say how a stylesheet is fetched and applied. */
const STYLESHEET_ONLY = new Set(['rel', 'href', 'media', 'type', 'crossorigin', 'integrity', 'nonce', 'referrerpolicy', 'fetchpriority'])

/** A blocking stylesheet link: its `href`, and whether it is nothing but a stylesheet. */
export interface BlockingStylesheet {
  href: string
  /**
   * No attribute beyond those that say how to fetch and apply it. A link with an `id`, a
   * `data-*` mark or a handler may be looked for by the page's own code (React matches its
   * `data-precedence` links when it hydrates), so it must stay a link.
   */
  plain: boolean
}

/** Every render- or parser-blocking stylesheet link, head then body, the ones that hold up only scripts included. */
export function blockingStylesheets(html: string): BlockingStylesheet[] {
  const outline = outlineOf(html, 'links')
  const { head, body } = blockingLinks(outline)
  return [...head, ...body].map((link) => ({
    href: asciiTrim(attribute(link, 'href')?.value ?? ''),
    plain: link.attributes.every((attr) => STYLESHEET_ONLY.has(attr.name)),
  }))
}

/** An href with a scheme (`https:`, `data:`) or a host (`//cdn…`): it names the same file wherever the page is. */
const ABSOLUTE_URL = /^(?:[a-z][a-z\d+.-]*:|\/\/)/i

/**
 * Whether a page finds its own stylesheets relative to where it is (`css/base.css`,
 * `../../assets/x.css`, as MkDocs, TypeDoc and Vite's `base: './'` write them): such a site
 * works at any base path and from `file://`, so what the plugin adds must resolve the same
 * way. Other hosts' sheets (a font CDN) say nothing about it; one root-relative sheet, or a
 * `<base href>`, and the page is read as root-relative. The preloads a run leaves count as
 * the links they were, so a run over its own output decides the same.
 */
export function linksRelatively(html: string): boolean {
  const outline = outlineOf(html, 'nothing')
  if (outline.baseHref !== null) return false
  const own = outline.headLinks
    .filter((link) => loadsStyles(link) || preloadsStyle(link))
    .map((link) => asciiTrim(attribute(link, 'href')?.value ?? ''))
    .filter((href) => href !== '' && !ABSOLUTE_URL.test(href))
  return own.length > 0 && own.every((href) => !href.startsWith('/') && !href.startsWith('\\'))
}

/** `<link rel=preload as=style>`: what the `body` strategy leaves where a stylesheet was. */
function preloadsStyle(tag: SourceTag): boolean {
  return asciiTokens(attributeValue(tag, 'rel') ?? '').includes('preload') && attributeValue(tag, 'as') === 'style'
}
