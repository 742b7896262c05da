/**
 * The `preload` strategies, each in one place: which blocking links it may rewrite, what it
 * makes of each, and the file it needs beside the pages. The inliner applies them; the
 * build asks here what a strategy needs emitted and whether the links it leaves count.
 */
import { LOADER_FILE, LOADER_SCRIPT } from './loader.ts'
import { applies, attributeValue, blocksRender, type BlockingLinks } from './link-rules.ts'
import { LOADER_MEDIA_ATTRIBUTE, attribute, becomesStylesheet, type HtmlOutline, type SourceAttribute, type SourceTag } from './outline.ts'
import { asciiTokens, asciiTrim, escapeAttribute } from './syntax.ts'

/**
 * How full stylesheets load once the critical CSS is inline.
 * - `loader`: the link stays where it was, a stylesheet, held at `media="print"` until a
 *   same-origin script file (`LOADER_SCRIPT`, at `loaderSrc`) restores its media once it
 *   has loaded, with a `<noscript>` fallback. Neither first paint nor the page's scripts
 *   wait for the full stylesheet, an app that looks for its stylesheet links finds them
 *   however early it starts, and no inline script or handler: works under `script-src 'self'`.
 * - `body`: a `<link rel="preload" as="style">` where the link was, the stylesheet itself
 *   moved to the end of `<body>`. No script at all, but a parser-inserted stylesheet holds
 *   up every deferred and module script until it loads.
 * - `media`: `media="print"` switched back by `onload`, with a `<noscript>` fallback.
 * - `swap`: `rel="preload"` switched to `stylesheet` by `onload`, with a `<noscript>` fallback.
 * - `none`: links untouched; only the style is inlined.
 * The body's own stylesheet links stay where they are: `loader`, `media` and `swap` rewrite
 * them as they do the head's (the parser would otherwise wait at each, showing nothing after
 * it until it loads); `body` and `none` leave them blocking.
 */
export type PreloadStrategy = 'loader' | 'body' | 'media' | 'swap' | 'none'

export const PRELOAD_STRATEGIES: readonly PreloadStrategy[] = ['loader', 'body', 'media', 'swap', 'none']
/** CSP-safe and holds up neither paint nor scripts: the strategy when none is chosen. */
export const DEFAULT_PRELOAD: PreloadStrategy = 'loader'
/** The default where no loader file can be served (no `loaderSrc`): CSP-safe, no script. */
export const PRELOAD_WITHOUT_LOADER: PreloadStrategy = 'body'

/** A file the pages load once a strategy deferred a link in them: the build emits it at its root. */
export interface StrategyAsset {
  /** Its name, relative to the output directory. */
  file: string
  text: string
}

/** What one link becomes. */
export interface LinkEdit {
  /** Replaces the link where it stands. */
  inPlace: string
  /** Goes to the end of the body (`body` strategy). */
  atBodyEnd: string
}

export interface Strategy {
  /**
   * Whether it defers links at all: with `none` the author keeps every link as it is, so
   * the links left blocking are the author's choice, not something to report.
   */
  readonly defers: boolean
  /** The file the pages need beside them (the loader script); null for none. */
  readonly asset: StrategyAsset | null
  /**
   * Whether a link it defers stops being a `rel="stylesheet"` link in its place for a while
   * (`swap`; `body`, until the parser reaches the body's end): code that looks its sheet up
   * by `href` then (a lazily loaded chunk's loader, a framework started from an inline
   * script) finds none and adds another. `swap` defers such links (`lookedUp`) by their
   * media instead; `body` does not move them (see `movableLinks`).
   */
  readonly hidesLinks: boolean
  /**
   * Whether it puts anything at the end of the body for this head (asked where the body
   * begins): otherwise the scan reads the body only for its links, since reading the body is
   * most of the work.
   */
  needsBodyEnd(head: HtmlOutline): boolean
  /** The blocking links of the page it rewrites, in document order (`lookedUp`: the page's code looks the link up by its `href`). */
  rewritable(outline: HtmlOutline, blocking: BlockingLinks, lookedUp: (link: SourceTag) => boolean): SourceTag[]
  /**
   * What a link becomes (`nonce` for CSP nonces, `loaderSrc` where the asset is served,
   * `withAsset`: the asset's script goes after this link, `lookedUp`: the page's code looks
   * this link up by its `href`).
   */
  rewrite(html: string, tag: SourceTag, context: { nonce: string | undefined; loaderSrc: string | undefined; withAsset: boolean; lookedUp: boolean }): LinkEdit
}

/**
 * A blocking link a strategy may rewrite: none that another loader or the author manages
 * (its own `onload`, `blocking="render"`). Other handlers stay on the element they were
 * written on, which every in-place strategy keeps.
 */
function convertible(tag: SourceTag): boolean {
  if (attribute(tag, 'onload')) return false
  return !asciiTokens(attributeValue(tag, 'blocking') ?? '').includes('render')
}

/**
 * Links rewritten where they stand: the cascade's order is never at stake. After </head> a
 * <noscript> fallback would start the body; in the body it is body content like the link.
 */
function inPlaceLinks(outline: HtmlOutline, { head, body }: BlockingLinks): SourceTag[] {
  return [...head.filter((link) => convertible(link) && !outline.linksAfterHead.has(link)), ...body.filter(convertible)]
}

/**
 * `body` moves stylesheets past whatever follows them in the head, so only links that
 * nothing but other moved links follow are moved: a `<style>` or a link left in place after
 * one keeps the cascade's order by keeping it blocking. A link the page's code looks up stays
 * in place, blocking: code that runs before the parser reaches the body's end (a framework
 * started from an inline script) would find none and add another, and deferring it in place
 * takes a script or an event handler, which the CSPs `body` is chosen for refuse.
 */
function movableLinks(outline: HtmlOutline, { head }: BlockingLinks, lookedUp: (link: SourceTag) => boolean): SourceTag[] {
  if (outline.bodyEnd === null) return []
  const movable = new Set(head.filter((link) => convertible(link) && !lookedUp(link)))
  const fixed = [...outline.headStyles, ...outline.headLinks.filter((link) => (applies(link) || becomesStylesheet(link)) && !movable.has(link))]
  const lastFixed = Math.max(-1, ...fixed.map((tag) => tag.start))
  return [...movable].filter((link) => link.start > lastFixed)
}

function jsString(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")
}

function nonceAttribute(tag: SourceTag, nonce: string | undefined): string[] {
  return nonce && !attribute(tag, 'nonce') ? [`nonce="${nonce}"`] : []
}

/**
 * An attribute as written, safe to put another after: an empty unquoted value (`id=`)
 * would take the next attribute for its value, so it becomes `id=""`.
 */
function attributeSource(html: string, attr: SourceAttribute): string {
  const source = asciiTrim(html.slice(attr.start, attr.end))
  return attr.value === '' && source.endsWith('=') ? `${source}""` : source
}

/**
 * A link rebuilt from the original's attribute source text, in its order: attributes
 * `changes` names are replaced where they stood (null drops them, absent ones are added),
 * those `drop` matches are left out, then `add` follows.
 */
function rebuildLink(html: string, tag: SourceTag, changes: Record<string, string | null>, add: string[], drop: (name: string) => boolean = () => false): string {
  const parts: string[] = []
  const changed = new Set<string>()
  for (const attr of tag.attributes) {
    if (attr.name in changes) {
      changed.add(attr.name)
      const replacement = changes[attr.name]
      if (replacement) parts.push(replacement)
    } else if (!drop(attr.name)) {
      parts.push(attributeSource(html, attr))
    }
  }
  for (const [name, replacement] of Object.entries(changes)) if (!changed.has(name) && replacement) parts.push(replacement)
  return `<link ${[...parts, ...add].join(' ')}>`
}

/**
 * `async`: it runs as soon as it arrives, holding up neither the parser nor the page's own
 * scripts. What the page sees does not depend on whether it runs before them: the
 * stylesheet links are in the document from the start.
 */
function loaderScriptTag(src: string, nonce: string | undefined): string {
  return `<script src="${escapeAttribute(src)}" async${nonce ? ` nonce="${nonce}"` : ''}></script>`
}

/** Where the loader finds the media a deferred link had: its value as written, empty for none. */
function mediaMark(tag: SourceTag): string {
  const media = attribute(tag, 'media')?.value ?? ''
  return media === '' ? LOADER_MEDIA_ATTRIBUTE : `${LOADER_MEDIA_ATTRIBUTE}="${escapeAttribute(media)}"`
}

const AS_PRELOAD = { rel: 'rel="preload" as="style"', as: null }

/**
 * The original link, for browsers without scripts. With scripts on, the parser reads a
 * `<noscript>` as text up to the first `</noscript`: a link whose attribute holds that text
 * (`title='</noscript><link …>'`) would end it early and let the rest out as markup, another
 * stylesheet among it. Such a link is written again from its attributes, `<` as `&lt;`,
 * which a browser without scripts reads back as the same values.
 */
function noscriptFallback(html: string, tag: SourceTag): string {
  const source = html.slice(tag.start, tag.end)
  if (!NOSCRIPT_END.test(source)) return `<noscript>${source}</noscript>`
  const attributes = tag.attributes.map((attr) => `${attr.name}="${escapeAttribute(attr.value).replace(/</g, '&lt;')}"`)
  return `<noscript><link ${attributes.join(' ')}></noscript>`
}
const NOSCRIPT_END = /<\/noscript/i

/**
 * How urgently a deferred sheet is fetched, unless the author chose (issue 35). Chromium
 * fetches a stylesheet held at a media that does not match at its lowest priority (VeryLow,
 * held back while the head loads): `high` brings it to High. It fetches a style preload at
 * VeryHigh, the priority of a render-blocking sheet, which Lighthouse's simulated throttling
 * (and so PageSpeed Insights) counts as blocking first paint: `low` brings it to High. So
 * every deferred sheet is fetched at High, at once, and is seen as what it is. Measured with
 * Lighthouse 12.8.2 (`npm run bench:fcp`).
 */
function fetchPriority(tag: SourceTag, value: 'high' | 'low'): string[] {
  return attribute(tag, 'fetchpriority') ? [] : [`fetchpriority="${value}"`]
}
const bodyUntouched = (): boolean => false

/** `media`'s link: a stylesheet in its place, held at `media="print"` until it has loaded. */
function heldByMedia(html: string, tag: SourceTag): LinkEdit {
  const media = asciiTrim(attribute(tag, 'media')?.value ?? '') || 'all'
  const link = rebuildLink(html, tag, { media: 'media="print"' }, [...fetchPriority(tag, 'high'), `onload="${escapeAttribute(`this.media='${jsString(media)}'`)}"`])
  return { inPlace: `${link}${noscriptFallback(html, tag)}`, atBodyEnd: '' }
}

export const STRATEGIES: Readonly<Record<PreloadStrategy, Strategy>> = {
  loader: {
    defers: true,
    asset: { file: LOADER_FILE, text: LOADER_SCRIPT },
    hidesLinks: false,
    needsBodyEnd: bodyUntouched,
    rewritable: inPlaceLinks,
    rewrite(html, tag, { nonce, loaderSrc, withAsset }) {
      // The element stays the page's stylesheet, every attribute with it: only its media
      // waits in the mark (one mark: a stray one of the input's is replaced).
      const held = { media: 'media="print"', [LOADER_MEDIA_ATTRIBUTE]: mediaMark(tag) }
      const link = rebuildLink(html, tag, held, [...fetchPriority(tag, 'high'), ...nonceAttribute(tag, nonce)])
      const script = withAsset ? loaderScriptTag(loaderSrc!, nonce) : ''
      return { inPlace: `${link}${noscriptFallback(html, tag)}${script}`, atBodyEnd: '' }
    },
  },
  body: {
    defers: true,
    asset: null,
    hidesLinks: true,
    needsBodyEnd: (head) => head.headLinks.some((link) => blocksRender(link) && convertible(link)),
    rewritable: movableLinks,
    rewrite(html, tag, { nonce }) {
      // The preload fetches early with the stylesheet's own integrity and crossorigin. The
      // id stays with the stylesheet, which is the element scripts look for, and so do its
      // event handlers, which must not run twice.
      const preload = rebuildLink(html, tag, { ...AS_PRELOAD, id: null }, [...fetchPriority(tag, 'low'), ...nonceAttribute(tag, nonce)], (name) => name.startsWith('on'))
      return { inPlace: preload, atBodyEnd: html.slice(tag.start, tag.end) }
    },
  },
  media: {
    defers: true,
    asset: null,
    hidesLinks: false,
    needsBodyEnd: bodyUntouched,
    rewritable: inPlaceLinks,
    rewrite: heldByMedia,
  },
  swap: {
    defers: true,
    asset: null,
    hidesLinks: true,
    needsBodyEnd: bodyUntouched,
    rewritable: inPlaceLinks,
    rewrite(html, tag, context) {
      if (context.lookedUp) return heldByMedia(html, tag)
      const link = rebuildLink(html, tag, AS_PRELOAD, [...fetchPriority(tag, 'low'), `onload="this.rel='stylesheet'"`])
      return { inPlace: `${link}${noscriptFallback(html, tag)}`, atBodyEnd: '' }
    },
  },
  none: {
    defers: false,
    asset: null,
    hidesLinks: false,
    needsBodyEnd: bodyUntouched,
    rewritable: () => [],
    rewrite: (html, tag) => ({ inPlace: html.slice(tag.start, tag.end), atBodyEnd: '' }),
  },
}
