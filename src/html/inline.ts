/**
 * Puts critical CSS into a page's `<head>` and makes its stylesheets load without blocking
 * render. The only code that touches a user's HTML, so it edits spans and nothing else:
 * every byte outside the edited spans stays as it was. It reads the page with the full scan
 * (scan.ts), which reads any HTML as a browser does; request time makes again the edits it
 * made on a route's sample (head-plan.ts, head-replay.ts), and carries none of this.
 */
import { createHash } from 'node:crypto'
import { blockingLinks, holdingPaint, type BlockingLinks } from './link-rules.ts'
import { CRITICAL_STYLE_ATTRIBUTE, attribute, stylesheetHrefsOf, type SourceTag } from './outline.ts'
import { scanHtml } from './scan.ts'
import { DEFAULT_PRELOAD, PRELOAD_STRATEGIES, PRELOAD_WITHOUT_LOADER, STRATEGIES, type PreloadStrategy } from './strategies.ts'
import { forRecentTexts } from './recent.ts'
import { asciiTrim, escapeAttribute } from './syntax.ts'
import { NONCE_PATTERN, NONCE_RULE } from './nonce.ts'

export interface InlineOptions {
  /** Default `'loader'` when `loaderSrc` is given, else `'body'`. */
  preload?: PreloadStrategy
  /**
   * Where the page loads the loader script from (`LOADER_SCRIPT`, served as JavaScript),
   * as the page's `<script src>` should say it. Needed by the `loader` strategy.
   */
  loaderSrc?: string
  /** CSP nonce for the inserted `<style>`, the links deferred or preloaded and the loader's `<script>`. */
  nonce?: string
  /**
   * Stylesheets the critical CSS does not cover (the render could not read them), by their
   * `href` as written: their links stay as they are, blocking, since first paint needs them.
   */
  keepBlocking?: (href: string) => boolean
  /**
   * The whole text of a stylesheet to put in its link's place as a `<style>` (its media
   * kept), by the link's `href` as written; null to defer it as the strategy does. Its
   * `url()`s must already resolve from the page. Where every link the strategy would defer
   * is inlined whole, nothing is deferred and `css` is not inserted: the sheets hold it.
   */
  wholeSheet?: (href: string) => string | null
  /**
   * Stylesheets the page's code looks up by `href` once it runs (a lazily loaded chunk's
   * loader, which adds a link when it finds none), by their `href` as written: a strategy
   * that would make them something else for a while (`swap`) defers them by their media.
   */
  lookedUp?: (href: string) => boolean
  /**
   * Font files to preload before the critical CSS (`<link rel="preload" as="font" crossorigin>`),
   * as the CSS names them: the faces its first screen uses, fetched before the CSS is parsed.
   * Replaced by a later run; none where the sheets are inlined whole.
   */
  fontPreloads?: readonly string[]
  /**
   * The stylesheets (`href`s as written, the head's then the body's, in document order) the
   * critical CSS was made from: a page that loads any others, or these in another order, is
   * returned as it is (a server's response where another deploy's or the page's own sheets
   * are linked).
   */
  onlyWithStylesheets?: readonly string[]
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
   * CSP hash of the inlined critical style's text, `sha256-<base64>`, for a `style-src` list
   * (in single quotes there); null when it was not inserted (nothing to inline, or every
   * stylesheet inlined whole: their hashes are in `inlinedWhole`).
   */
  cspHash: string | null
  /** `href`s of the stylesheets that now load without blocking render. */
  deferred: string[]
  /** Stylesheets now inline whole in their link's place (`wholeSheet`), with the CSP hash of each one's text. */
  inlinedWhole: { href: string; cspHash: string }[]
  /**
   * `href`s of stylesheets that still hold up painting, left as they were: managed by the
   * author (`onload`, `blocking="render"`), kept blocking (`keepBlocking`), moving them would
   * change the cascade or break the page, or, with `body` and `none`, in the body before
   * something shown (the parser waits at such a link until it has loaded).
   */
  stillBlocking: string[]
  /** The edits made, in input offsets, in order. */
  edits: InlineEdit[]
}

/** `</style` in any letter case would end the element early: the css is untrusted text. */
const STYLE_END = /<\/(style)/gi
/** A preload says its font's type when the URL does: a browser without WOFF2 then skips the fetch. */
const WOFF2 = /\.woff2(?:[?#]|$)/i

/**
 * Makes `css` safe inside `<style>`: `</style` becomes `<\/style`, which CSS reads the same.
 * Line breaks become LF and NUL becomes U+FFFD, as a browser reads them: the CSP hash is
 * taken of the text the browser sees.
 */
export function neutraliseCss(css: string): string {
  return css.replace(/\r\n?/g, '\n').replace(/\0/g, '\uFFFD').replace(STYLE_END, '<\\/$1')
}

/** A style's CSP hash; a server's routes repeat a few texts on every request, so the last few are kept. */
const cspHashOf = forRecentTexts((styleText) => `sha256-${createHash('sha256').update(styleText, 'utf8').digest('base64')}`)

interface CheckedInput {
  strategy: PreloadStrategy
  nonce: string | undefined
  loaderSrc: string | undefined
  keepBlocking: (href: string) => boolean
  wholeSheet: (href: string) => string | null
  lookedUp: (href: string) => boolean
  fontPreloads: readonly string[]
  /** `onlyWithStylesheets`; null: any page. */
  only: readonly string[] | null
}

/** Whether `value` can stand in the loader's `<script src>` as it is: a URL with no space, quote or angle bracket. */
export function isLoaderSrc(value: unknown): value is string {
  return typeof value === 'string' && asciiTrim(value) !== '' && !/[\s<>"'`]/.test(value)
}

function checkInput(html: unknown, css: unknown, options: InlineOptions): CheckedInput {
  if (typeof html !== 'string') throw new TypeError(`inlineCriticalCss(html, css): html must be a string, got ${html === null ? 'null' : typeof html}.`)
  if (typeof css !== 'string') throw new TypeError(`inlineCriticalCss(html, css): css must be a string, got ${css === null ? 'null' : typeof css}.`)
  if (options === null || typeof options !== 'object') throw new TypeError('inlineCriticalCss(html, css, options): options must be an object.')
  const loaderSrc = options.loaderSrc
  if (loaderSrc !== undefined && !isLoaderSrc(loaderSrc)) {
    throw new TypeError(`The \`loaderSrc\` option must be a URL with no space, quote or angle bracket; got ${JSON.stringify(loaderSrc)}.`)
  }
  const strategy = options.preload ?? (loaderSrc !== undefined ? DEFAULT_PRELOAD : PRELOAD_WITHOUT_LOADER)
  if (!PRELOAD_STRATEGIES.includes(strategy)) {
    throw new TypeError(`The \`preload\` option must be one of ${PRELOAD_STRATEGIES.map((s) => `'${s}'`).join(', ')}; got ${JSON.stringify(strategy)}.`)
  }
  const nonce = options.nonce
  if (nonce !== undefined && (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce))) {
    throw new TypeError(`The \`nonce\` option ${NONCE_RULE}.`)
  }
  if (STRATEGIES[strategy].asset !== null && loaderSrc === undefined) {
    throw new TypeError("The `loader` strategy needs the `loaderSrc` option: the URL the page loads the loader script from (serve `LOADER_SCRIPT` there), or choose `preload: 'body'`, which needs no script.")
  }
  if (options.keepBlocking !== undefined && typeof options.keepBlocking !== 'function') throw new TypeError('The `keepBlocking` option must be a function of a stylesheet link’s href.')
  if (options.wholeSheet !== undefined && typeof options.wholeSheet !== 'function') throw new TypeError('The `wholeSheet` option must be a function of a stylesheet link’s href.')
  if (options.lookedUp !== undefined && typeof options.lookedUp !== 'function') throw new TypeError('The `lookedUp` option must be a function of a stylesheet link’s href.')
  const only = options.onlyWithStylesheets
  if (only !== undefined && (!Array.isArray(only) || only.some((href) => typeof href !== 'string'))) throw new TypeError('The `onlyWithStylesheets` option must be an array of stylesheet hrefs.')
  const fontPreloads = options.fontPreloads ?? []
  if (!Array.isArray(fontPreloads) || fontPreloads.some((url) => typeof url !== 'string' || url === '')) throw new TypeError('The `fontPreloads` option must be an array of font URLs.')
  return { strategy, nonce, loaderSrc, keepBlocking: options.keepBlocking ?? (() => false), wholeSheet: options.wholeSheet ?? (() => null), lookedUp: options.lookedUp ?? (() => false), fontPreloads, only: only ?? null }
}

/** A stylesheet inline whole where its link was: the link's media (and nonce) kept, so it applies as the link did. */
function wholeStyle(link: SourceTag, text: string, nonce: string | undefined): string {
  const media = asciiTrim(attribute(link, 'media')?.value ?? '')
  return `<style${media ? ` media="${escapeAttribute(media)}"` : ''}${nonce ? ` nonce="${nonce}"` : ''}>${text}</style>`
}

/**
 * The rewritten link the strategy's script goes after: the last in the head, so that it finds
 * every one there however early it runs, else the first in the body. The script finds the
 * body's later links itself once the document is parsed.
 */
function assetPlace(rewritten: SourceTag[], blocking: BlockingLinks): SourceTag | undefined {
  const head = new Set(blocking.head)
  return rewritten.findLast((link) => head.has(link)) ?? rewritten.find((link) => !head.has(link))
}

/**
 * `html` with `edits` (sorted, none inside another) made: every byte outside them as it was.
 * One string built from slices of the input, no edit structure kept per character range.
 */
function applied(html: string, edits: readonly InlineEdit[]): string {
  let output = ''
  let at = 0
  for (const edit of edits) {
    if (edit.start < at) throw new Error(`inliner: edits overlap at offset ${edit.start}`)
    output += html.slice(at, edit.start) + edit.text
    at = edit.end
  }
  return at === 0 && edits.length === 0 ? html : output + html.slice(at)
}

/**
 * Inlines `css` into `html`. Pure: returns the new document and what changed. Running it
 * again on its output replaces the inlined block and leaves converted links alone. Empty
 * css changes nothing.
 */
export function inlineCriticalCss(html: string, css: string, options: InlineOptions = {}): InlineResult {
  const { strategy, nonce, loaderSrc, keepBlocking, wholeSheet, lookedUp, fontPreloads, only } = checkInput(html, css, options)
  const unchanged: InlineResult = { html, changed: false, cspHash: null, deferred: [], inlinedWhole: [], stillBlocking: [], edits: [] }
  if (asciiTrim(css) === '') return unchanged

  const rules = STRATEGIES[strategy]
  const outline = scanHtml(html, { readBody: (head) => (rules.needsBodyEnd(head) ? 'all' : 'links') })
  if (only !== null) {
    const linked = stylesheetHrefsOf(outline)
    if (linked.length !== only.length || linked.some((href, index) => href !== only[index])) return unchanged
  }
  const styleText = neutraliseCss(css)
  const preloads = fontPreloads.map((url) => `<link rel="preload" as="font"${WOFF2.test(url) ? ' type="font/woff2"' : ''} href="${escapeAttribute(url)}" crossorigin ${CRITICAL_STYLE_ATTRIBUTE}>`).join('')
  const style = `${preloads}<style ${CRITICAL_STYLE_ATTRIBUTE}${nonce ? ` nonce="${nonce}"` : ''}>${styleText}</style>`
  const edits: InlineEdit[] = []
  const blocking = blockingLinks(outline)
  const href = (link: SourceTag): string => attribute(link, 'href')?.value ?? ''

  // A link kept blocking is one the strategy may not touch: to `body` it is a fixed point of the cascade.
  const touchable = (link: SourceTag): boolean => !keepBlocking(asciiTrim(href(link)))
  const looksUp = (link: SourceTag): boolean => lookedUp(asciiTrim(href(link)))
  const rewritable = rules.rewritable(outline, { head: blocking.head.filter(touchable), body: blocking.body.filter(touchable) }, looksUp)
  const whole = new Map<SourceTag, string>()
  for (const link of rewritable) {
    const text = wholeSheet(asciiTrim(href(link)))
    if (text !== null) whole.set(link, neutraliseCss(text))
  }
  const rewritten = rewritable.filter((link) => !whole.has(link))
  // With nothing left to load later, the critical CSS would repeat what the page holds whole.
  const withStyle = rewritten.length > 0 || whole.size === 0

  // An earlier run's font preloads go: this run's, if any, come with its style.
  for (const link of outline.criticalPreloads) edits.push({ start: link.start, end: link.end, text: '' })
  const [previous, ...extra] = outline.criticalStyles
  if (!withStyle) {
    for (const block of outline.criticalStyles) edits.push({ start: block.tag.start, end: block.end, text: '' })
  } else if (previous) {
    edits.push({ start: previous.tag.start, end: previous.end, text: style })
    for (const block of extra) edits.push({ start: block.tag.start, end: block.end, text: '' })
  } else if (blocking.head[0]) {
    edits.push({ start: blocking.head[0].start, end: blocking.head[0].start, text: style })
  } else if (outline.headEnd !== null) {
    edits.push({ start: outline.headEnd, end: outline.headEnd, text: style })
  } else {
    edits.push({ start: outline.headPlace, end: outline.headPlace, text: `<head>${style}</head>` })
  }

  for (const [link, text] of whole) edits.push({ start: link.start, end: link.end, text: wholeStyle(link, text, nonce) })
  const withAsset = assetPlace(rewritten, blocking)
  let atBodyEnd = ''
  for (const link of rewritten) {
    const edit = rules.rewrite(html, link, { nonce, loaderSrc, withAsset: link === withAsset, lookedUp: looksUp(link) })
    edits.push({ start: link.start, end: link.end, text: edit.inPlace })
    atBodyEnd += edit.atBodyEnd
  }
  if (atBodyEnd && outline.bodyEnd !== null) {
    // Put where no body has begun, the stylesheets would be parsed into the head again.
    edits.push({ start: outline.bodyEnd, end: outline.bodyEnd, text: outline.bodyOpened ? atBodyEnd : `<body>${atBodyEnd}` })
  }

  // Insertions before replacements at the same offset: the style goes before the link it precedes.
  edits.sort((a, b) => a.start - b.start || a.end - b.end)
  const result = applied(html, edits)
  const handled = new Set(rewritable)
  return {
    html: result,
    changed: result !== html,
    cspHash: withStyle ? cspHashOf(styleText) : null,
    deferred: rewritten.map(href),
    inlinedWhole: [...whole].map(([link, text]) => ({ href: href(link), cspHash: cspHashOf(text) })),
    stillBlocking: holdingPaint(outline, blocking)
      .filter((link) => !handled.has(link))
      .map(href),
    edits,
  }
}
