/**
 * Puts critical CSS into a page's `<head>` and makes its stylesheets load without blocking
 * render. The only code that touches a user's HTML, so it edits spans and nothing else:
 * every byte outside the edited spans stays as it was.
 */
import { createHash } from 'node:crypto'
import MagicString from 'magic-string'
import { CRITICAL_STYLE_ATTRIBUTE, LOADER_PRELOAD_ATTRIBUTE, attribute, becomesStylesheet, scanHtml, type HtmlOutline, type SourceAttribute, type SourceTag } from './scan.ts'
import { asciiLowercase, asciiTokens, asciiTrim } from './syntax.ts'

/**
 * How full stylesheets load once the critical CSS is inline.
 * - `loader`: a `<link rel="preload" as="style">` where the link was, which a same-origin
 *   script file (`LOADER_SCRIPT`, at `loaderSrc`) turns into the stylesheet in place, with a
 *   `<noscript>` fallback. Neither first paint nor the page's scripts wait for the full
 *   stylesheet, and no inline script or handler: works under `script-src 'self'`.
 * - `body`: a `<link rel="preload" as="style">` where the link was, the stylesheet itself
 *   moved to the end of `<body>`. No script at all, but a parser-inserted stylesheet holds
 *   up every deferred and module script until it loads.
 * - `media`: `media="print"` switched back by `onload`, with a `<noscript>` fallback.
 * - `swap`: `rel="preload"` switched to `stylesheet` by `onload`, with a `<noscript>` fallback.
 * - `none`: links untouched; only the style is inlined.
 */
export type PreloadStrategy = 'loader' | 'body' | 'media' | 'swap' | 'none'

export const PRELOAD_STRATEGIES: readonly PreloadStrategy[] = ['loader', 'body', 'media', 'swap', 'none']
/** CSP-safe and holds up neither paint nor scripts: the strategy when none is chosen. */
export const DEFAULT_PRELOAD: PreloadStrategy = 'loader'
/** The default where no loader file can be served (no `loaderSrc`): CSP-safe, no script. */
export const PRELOAD_WITHOUT_LOADER: PreloadStrategy = 'body'

export interface InlineOptions {
  /** Default `'loader'` when `loaderSrc` is given, else `'body'`. */
  preload?: PreloadStrategy
  /**
   * Where the page loads the loader script from (`LOADER_SCRIPT`, served as JavaScript),
   * as the page's `<script src>` should say it. Needed by the `loader` strategy.
   */
  loaderSrc?: string
  /** CSP nonce for the inserted `<style>`, the preload links and the loader's `<script>`. */
  nonce?: string
}

/** One edit of the input: `input.slice(start, end)` became `text`. */
export interface InlineEdit {
  start: number
  end: number
  text: string
}

export interface InlineResult {
  html: string
  /** False when the output is the input. */
  changed: boolean
  /**
   * CSP hash of the inlined style's text, `sha256-<base64>`, for a `style-src` list (in
   * single quotes there); null when nothing was inlined.
   */
  cspHash: string | null
  /** `href`s of the stylesheets that now load without blocking render. */
  deferred: string[]
  /**
   * `href`s of head stylesheets that still block render, left as they were: managed by the
   * author (`onload`, `blocking="render"`), or moving them would change the cascade or
   * break the page.
   */
  stillBlocking: string[]
  /** The edits made, in input offsets, in order. */
  edits: InlineEdit[]
}

/** A CSP nonce value (base64 or base64url), short enough for an attribute. */
export const NONCE_PATTERN = /^[A-Za-z0-9+/=_-]{1,256}$/
/** `</style` in any letter case would end the element early: the css is untrusted text. */
const STYLE_END = /<\/(style)/gi
/** Media a stylesheet never applies to on screen: such a link does not block render. */
const NON_BLOCKING_MEDIA = new Set(['print', 'none', 'only x', 'not all'])

/**
 * Makes `css` safe inside `<style>`: `</style` becomes `<\/style`, which CSS reads the same.
 * Line breaks become LF and NUL becomes U+FFFD, as a browser reads them: the CSP hash is
 * taken of the text the browser sees.
 */
export function neutraliseCss(css: string): string {
  return css.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD').replace(STYLE_END, '<\\/$1')
}

function cspHashOf(styleText: string): string {
  return `sha256-${createHash('sha256').update(styleText, 'utf8').digest('base64')}`
}

function value(tag: SourceTag, name: string): string | undefined {
  const found = attribute(tag, name)?.value
  return found === undefined ? undefined : asciiLowercase(asciiTrim(found))
}

/** A stylesheet link whose rules apply in some medium: it takes part in the cascade. */
function applies(tag: SourceTag): boolean {
  const rel = asciiTokens(value(tag, 'rel') ?? '')
  if (!rel.includes('stylesheet') || rel.includes('alternate')) return false
  if (!value(tag, 'href')) return false
  if (attribute(tag, 'disabled')) return false
  // A sheet of another type is never applied.
  const type = value(tag, 'type')
  return type === undefined || type === '' || type === 'text/css'
}

/** A stylesheet link that holds up first paint. */
function blocksRender(tag: SourceTag): boolean {
  if (!applies(tag)) return false
  const media = value(tag, 'media')
  return media === undefined || !NON_BLOCKING_MEDIA.has(media)
}

/** The `href`s of the head's stylesheets that hold up first paint: none once a page's are deferred. */
export function renderBlockingStylesheets(html: string): string[] {
  return scanHtml(html, { stopAtBody: () => true }).headLinks.filter(blocksRender).map((link) => asciiTrim(attribute(link, 'href')?.value ?? ''))
}

/**
 * A blocking link this inliner may rewrite: none that another loader or the author manages.
 * The loader's script copies attributes, and an inline handler it set would be refused by
 * the very CSP the strategy is for: a link with any handler stays as written.
 */
function convertible(tag: SourceTag, strategy: PreloadStrategy): boolean {
  if (attribute(tag, 'onload')) return false
  if (strategy === 'loader' && tag.attributes.some((attr) => attr.name.startsWith('on'))) return false
  return !asciiTokens(value(tag, 'blocking') ?? '').includes('render')
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
}

/** `async`: it runs as soon as it arrives, holding up neither the parser nor the page's own scripts. */
function loaderScriptTag(src: string, nonce: string | undefined): string {
  return `<script src="${escapeAttribute(src)}" async${nonce ? ` nonce="${nonce}"` : ''}></script>`
}

function jsString(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")
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

interface LinkEdit {
  /** Replaces the link where it stands. */
  inPlace: string
  /** Goes to the end of the body (`body` strategy). */
  atBodyEnd: string
}

function rewriteLink(html: string, tag: SourceTag, strategy: Exclude<PreloadStrategy, 'none'>, nonce: string | undefined): LinkEdit {
  const original = html.slice(tag.start, tag.end)
  switch (strategy) {
    case 'loader': {
      // Every attribute stays on the preload (integrity, crossorigin, media, id): the
      // script gives them to the stylesheet it makes.
      const add = [LOADER_PRELOAD_ATTRIBUTE, ...(nonce && !attribute(tag, 'nonce') ? [`nonce="${nonce}"`] : [])]
      const preload = rebuildLink(html, tag, { rel: 'rel="preload" as="style"', as: null }, add)
      return { inPlace: `${preload}<noscript>${original}</noscript>`, atBodyEnd: '' }
    }
    case 'body': {
      // The preload fetches early with the stylesheet's own integrity and crossorigin. The
      // id stays with the stylesheet, which is the element scripts look for, and so do its
      // event handlers, which must not run twice.
      const add = nonce && !attribute(tag, 'nonce') ? [`nonce="${nonce}"`] : []
      const preload = rebuildLink(html, tag, { rel: 'rel="preload" as="style"', as: null, id: null }, add, (name) => name.startsWith('on'))
      return { inPlace: preload, atBodyEnd: original }
    }
    case 'media': {
      const media = asciiTrim(attribute(tag, 'media')?.value ?? '') || 'all'
      const link = rebuildLink(html, tag, { media: 'media="print"' }, [`onload="${escapeAttribute(`this.media='${jsString(media)}'`)}"`])
      return { inPlace: `${link}<noscript>${original}</noscript>`, atBodyEnd: '' }
    }
    case 'swap': {
      const link = rebuildLink(html, tag, { rel: 'rel="preload" as="style"', as: null }, [`onload="this.rel='stylesheet'"`])
      return { inPlace: `${link}<noscript>${original}</noscript>`, atBodyEnd: '' }
    }
  }
}

/**
 * The blocking links the strategy may rewrite. `body` moves stylesheets past whatever
 * follows them in the head, so only links that nothing but other moved links follow are
 * moved: a `<style>` or a link left in place after one keeps the cascade's order by keeping
 * it blocking. `media` and `swap` keep each link where it is, so order is never at stake.
 */
function rewritable(outline: HtmlOutline, blocking: SourceTag[], strategy: Exclude<PreloadStrategy, 'none'>): SourceTag[] {
  if (strategy !== 'body') {
    // After </head> a <noscript> fallback would start the body.
    return blocking.filter((link) => convertible(link, strategy) && !outline.linksAfterHead.has(link))
  }
  if (outline.bodyEnd === null) return []
  const movable = new Set(blocking.filter((link) => convertible(link, strategy)))
  const fixed = [...outline.headStyles, ...outline.headLinks.filter((link) => (applies(link) || becomesStylesheet(link)) && !movable.has(link))]
  const lastFixed = Math.max(-1, ...fixed.map((tag) => tag.start))
  return [...movable].filter((link) => link.start > lastFixed)
}

interface CheckedInput {
  strategy: PreloadStrategy
  nonce: string | undefined
  loaderSrc: string | undefined
}

function checkInput(html: unknown, css: unknown, options: InlineOptions): CheckedInput {
  if (typeof html !== 'string') throw new TypeError(`inlineCriticalCss(html, css): html must be a string, got ${html === null ? 'null' : typeof html}.`)
  if (typeof css !== 'string') throw new TypeError(`inlineCriticalCss(html, css): css must be a string, got ${css === null ? 'null' : typeof css}.`)
  if (options === null || typeof options !== 'object') throw new TypeError('inlineCriticalCss(html, css, options): options must be an object.')
  const loaderSrc = options.loaderSrc
  if (loaderSrc !== undefined && (typeof loaderSrc !== 'string' || asciiTrim(loaderSrc) === '' || /[\s<>"'`]/.test(loaderSrc))) {
    throw new TypeError(`The \`loaderSrc\` option must be a URL with no space, quote or angle bracket; got ${JSON.stringify(loaderSrc)}.`)
  }
  const strategy = options.preload ?? (loaderSrc !== undefined ? DEFAULT_PRELOAD : PRELOAD_WITHOUT_LOADER)
  if (!PRELOAD_STRATEGIES.includes(strategy)) {
    throw new TypeError(`The \`preload\` option must be one of ${PRELOAD_STRATEGIES.map((s) => `'${s}'`).join(', ')}; got ${JSON.stringify(strategy)}.`)
  }
  const nonce = options.nonce
  if (nonce !== undefined && (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce))) {
    throw new TypeError('The `nonce` option must be 1–256 characters of A–Z, a–z, 0–9, +, /, =, _ or - (a base64 value).')
  }
  if (strategy === 'loader' && loaderSrc === undefined) {
    throw new TypeError("The `loader` strategy needs the `loaderSrc` option: the URL the page loads the loader script from (serve `LOADER_SCRIPT` there), or choose `preload: 'body'`, which needs no script.")
  }
  return { strategy, nonce, loaderSrc }
}

/**
 * Inlines `css` into `html`. Pure: returns the new document and what changed. Running it
 * again on its output replaces the inlined block and leaves converted links alone. Empty
 * css changes nothing.
 */
export function inlineCriticalCss(html: string, css: string, options: InlineOptions = {}): InlineResult {
  const { strategy, nonce, loaderSrc } = checkInput(html, css, options)
  if (asciiTrim(css) === '') return { html, changed: false, cspHash: null, deferred: [], stillBlocking: [], edits: [] }

  // Only the body strategy puts anything at the end of the body: otherwise the scan ends where the body begins.
  const outline = scanHtml(html, { stopAtBody: (head) => strategy !== 'body' || !head.headLinks.some((link) => blocksRender(link) && convertible(link, strategy)) })
  const styleText = neutraliseCss(css)
  const style = `<style ${CRITICAL_STYLE_ATTRIBUTE}${nonce ? ` nonce="${nonce}"` : ''}>${styleText}</style>`
  const edits: InlineEdit[] = []
  const blocking = outline.headLinks.filter(blocksRender)

  const [previous, ...extra] = outline.criticalStyles
  if (previous) {
    edits.push({ start: previous.tag.start, end: previous.end, text: style })
    for (const block of extra) edits.push({ start: block.tag.start, end: block.end, text: '' })
  } else if (blocking[0]) {
    edits.push({ start: blocking[0].start, end: blocking[0].start, text: style })
  } else if (outline.headEnd !== null) {
    edits.push({ start: outline.headEnd, end: outline.headEnd, text: style })
  } else {
    edits.push({ start: outline.headPlace, end: outline.headPlace, text: `<head>${style}</head>` })
  }

  const rewritten = strategy === 'none' ? [] : rewritable(outline, blocking, strategy)
  let atBodyEnd = ''
  for (const [index, link] of rewritten.entries()) {
    const edit = rewriteLink(html, link, strategy as Exclude<PreloadStrategy, 'none'>, nonce)
    // After the last preload it converts: every one is in the document when the script runs.
    const script = strategy === 'loader' && index === rewritten.length - 1 ? loaderScriptTag(loaderSrc!, nonce) : ''
    edits.push({ start: link.start, end: link.end, text: edit.inPlace + script })
    atBodyEnd += edit.atBodyEnd
  }
  if (atBodyEnd && outline.bodyEnd !== null) {
    // Put where no body has begun, the stylesheets would be parsed into the head again.
    edits.push({ start: outline.bodyEnd, end: outline.bodyEnd, text: outline.bodyOpened ? atBodyEnd : `<body>${atBodyEnd}` })
  }

  // Insertions before replacements at the same offset: the style goes before the link it precedes.
  edits.sort((a, b) => a.start - b.start || a.end - b.end)
  const output = new MagicString(html)
  for (const edit of edits) {
    if (edit.start === edit.end) output.appendLeft(edit.start, edit.text)
    else if (edit.text === '') output.remove(edit.start, edit.end)
    else output.overwrite(edit.start, edit.end, edit.text)
  }
  const result = output.toString()
  const href = (link: SourceTag): string => attribute(link, 'href')?.value ?? ''
  const kept = new Set(rewritten)
  return {
    html: result,
    changed: result !== html,
    cspHash: cspHashOf(styleText),
    deferred: rewritten.map(href),
    stillBlocking: strategy === 'none' ? blocking.map(href) : blocking.filter((link) => !kept.has(link)).map(href),
    edits,
  }
}
