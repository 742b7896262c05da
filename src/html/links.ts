/**
 * A page's stylesheet links as the build asks about them (which block, which a site links
 * relatively), from its HTML; the rules themselves are link-rules.ts, which the inliner reads
 * off an outline.
 */
import { attributeValue, blockingLinks, holdingPaint } from './link-rules.ts'
import { loadsStyles } from './outline.ts'
import { attribute, outlineOf, type SourceTag } from './scan.ts'
import { asciiTokens, asciiTrim } from './syntax.ts'

export { applies, attributeValue, blockingLinks, blocksRender, holdingPaint, type BlockingLinks } from './link-rules.ts'

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
