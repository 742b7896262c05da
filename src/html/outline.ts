/**
 * What a scan reports: source locations, never a tree, so that the inliner can edit the
 * document where it stands and leave every other byte alone.
 */
import { asciiLowercase, asciiTokens, asciiTrim } from './syntax.ts'

export interface SourceAttribute {
  /** Lowercased. */
  name: string
  /** Entities decoded. */
  value: string
  /** Offsets of the whole attribute (`name="value"`), end exclusive. */
  start: number
  end: number
}

export interface SourceTag {
  /** Lowercased. */
  name: string
  start: number
  /** Exclusive: just after `>`. */
  end: number
  attributes: SourceAttribute[]
}

export interface HtmlOutline {
  /**
   * Where the head's content ends: `</head>`, the token that implied its end, or the end
   * of input. Null when the document has no head at all, not even an implied one.
   */
  headEnd: number | null
  /** Where a missing head belongs: after `<html>`, else after the doctype, else the start (after a BOM). */
  headPlace: number
  /** The `<link>`s the parser puts in the head, outside `<noscript>` and `<template>`. */
  headLinks: SourceTag[]
  /**
   * Those of `headLinks` after `</head>`: the parser still puts them in the head, but a
   * `<noscript>` there would start the body.
   */
  linksAfterHead: Set<SourceTag>
  /**
   * The `<link>`s the parser puts in the body (after `</body>` too), outside `<noscript>`,
   * `<template>`, comments and SVG or MathML, as far as the scan read (`ScanOptions.readBody`).
   */
  bodyLinks: SourceTag[]
  /**
   * Those of `bodyLinks` that something shown follows (text, an element that is not a
   * script, style or link). Chromium's parser waits at a body stylesheet until it has
   * loaded, so nothing after one is painted before then; one with nothing shown after it
   * holds up no painting (the `body` strategy's moved links).
   */
  bodyLinksBeforeContent: Set<SourceTag>
  /** The head's own `<style>` elements (not critical-CSS blocks): they take part in the cascade. */
  headStyles: SourceTag[]
  /** The head's first `<base>` with an `href`: the page's links resolve against it, not against the page's address. */
  baseHref: string | null
  /** The head's Open Graph address (`<meta property="og:url" content>`): where the page says it is deployed, beside `rel=canonical` links. */
  openGraphUrl: string | null
  /** Earlier `<style data-critical-css>` elements in the head, with the end of their `</style>`. */
  criticalStyles: { tag: SourceTag; end: number }[]
  /** Font preloads an earlier run put in the head (`<link rel="preload" as="font" data-critical-css>`): a new run replaces them. */
  criticalPreloads: SourceTag[]
  /**
   * Where stylesheets moved out of the head go: before the body's first stylesheet or
   * `<style>` (so the cascade keeps its order), else before `</body>`, else `</html>`,
   * else the end of input. Null when the scan did not read the whole body, or when no
   * such place is plain HTML body content (inside `<svg>`, `<math>`, `<select>`, or a
   * `<frameset>` document), where a link would not load.
   */
  bodyEnd: number | null
  /**
   * Whether the body has begun before `bodyEnd`. Without that, what is put at `bodyEnd`
   * would be parsed into the head, unless a `<body>` precedes it.
   */
  bodyOpened: boolean
}

/**
 * How much of the body a scan reads. Reading the body is most of the work.
 * - `nothing`: the scan ends where the body begins.
 * - `links`: `bodyLinks` and which of them something shown follows: the scan ends once no
 *   `<link` is left in the source (at once for most pages) and no link waits for content.
 * - `all`: also where the body ends (`bodyEnd`, `bodyOpened`).
 */
export type BodyReading = 'nothing' | 'links' | 'all'

export interface ScanOptions {
  /** Asked once, where the body begins, with what is known of the head by then. Default `all`. */
  readBody?: (head: HtmlOutline) => BodyReading
}

export const CRITICAL_STYLE_ATTRIBUTE = 'data-critical-css'
/**
 * Marks the stylesheets the `loader` strategy deferred: `media="print"` until the loader
 * gives them back the media this attribute holds (none when it is empty).
 */
export const LOADER_MEDIA_ATTRIBUTE = 'data-critical-css-media'
/**
 * Marked the `<link rel=preload as=style>`s that earlier versions' loader script turned into
 * stylesheets. Dropped because an app's start-up could run before that script and, finding
 * no stylesheet link, append its own (issue 33). Pages processed then keep them and their
 * own copy of that script: a run over them leaves them as they are.
 */
export const LOADER_PRELOAD_ATTRIBUTE = 'data-critical-css-preload'

export function attribute(tag: SourceTag, name: string): SourceAttribute | undefined {
  return tag.attributes.find((a) => a.name === name)
}

/** A page's own async stylesheet (`rel=preload as=style onload=…`, the swap pattern): it joins the cascade where it stands. */
export function isSwapPreload(tag: SourceTag): boolean {
  const rel = asciiTokens(asciiLowercase(attribute(tag, 'rel')?.value ?? ''))
  return rel.includes('preload') && asciiLowercase(asciiTrim(attribute(tag, 'as')?.value ?? '')) === 'style' && attribute(tag, 'onload') !== undefined
}

/** A preload an earlier version's `loader` script turns into a stylesheet, after it (see `LOADER_PRELOAD_ATTRIBUTE`). */
export function isLoaderPreload(tag: SourceTag): boolean {
  return attribute(tag, LOADER_PRELOAD_ATTRIBUTE) !== undefined && asciiTokens(asciiLowercase(attribute(tag, 'rel')?.value ?? '')).includes('preload')
}

/** A preload that joins the cascade where it stands once loaded (swap's `onload`, an earlier loader's script). */
export function becomesStylesheet(tag: SourceTag): boolean {
  return isSwapPreload(tag) || isLoaderPreload(tag)
}

/** A link that is, or will become, a stylesheet where it stands (the loader's deferred links are ones already). */
export function loadsStyles(tag: SourceTag): boolean {
  return asciiTokens(asciiLowercase(attribute(tag, 'rel')?.value ?? '')).includes('stylesheet') || becomesStylesheet(tag)
}

/** `stylesheetHrefs` of a page's outline read at least to its last stylesheet link. */
export function stylesheetHrefsOf(outline: HtmlOutline): string[] {
  const hrefs: string[] = []
  for (const link of [...outline.headLinks, ...outline.bodyLinks]) {
    const href = attribute(link, 'href')?.value
    if (href !== undefined && loadsStyles(link)) hrefs.push(asciiTrim(href))
  }
  return hrefs
}

/** The outline of a page before anything of it is read. */
export function emptyOutline(html: string): HtmlOutline {
  return {
    headEnd: null,
    headPlace: html.charCodeAt(0) === 0xfeff ? 1 : 0,
    headLinks: [],
    linksAfterHead: new Set(),
    bodyLinks: [],
    bodyLinksBeforeContent: new Set(),
    headStyles: [],
    baseHref: null,
    openGraphUrl: null,
    criticalStyles: [],
    criticalPreloads: [],
    bodyEnd: null,
    bodyOpened: false,
  }
}
