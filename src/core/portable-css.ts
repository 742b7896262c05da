/**
 * The critical CSS of a page that links its stylesheets relatively, with its `url()`s
 * relative too. The renderer names every file of the site by its root path (`/fonts/x.woff2`,
 * `/project/fonts/x.woff2` below a base): right for the address it rendered, wrong once
 * the same folder is served below another path or opened from disk, where the page's own
 * relative links still work. And a stylesheet put inline whole, whose relative `url()`s
 * named files from the sheet's own address. Only the `url()`s are touched, each where it
 * stands, so the rest of the CSS keeps its bytes and a second pass changes nothing.
 */
import { string as cssString, tokenize, tokenTypes as T, url as cssUrl } from 'css-tree'
import { forRecentTexts } from '../html/recent.ts'

const IMAGE_SET = /^(-webkit-)?image-set$/i

/** A URL path below the site's prefix, as a path from the page's directory (`../../fonts/x.woff2`). */
export function relativeUrl(pagePath: string, target: string): string {
  const [path = '', rest = ''] = splitSuffix(target)
  const from = pagePath.slice(0, pagePath.lastIndexOf('/') + 1).split('/').slice(1, -1)
  const to = path.split('/').slice(1)
  let common = 0
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++
  let relative = '../'.repeat(from.length - common) + to.slice(common).join('/')
  if (relative === '') relative = './'
  // `a:b/x` would read as a URL with the scheme `a:`.
  else if (/^[^/]*:/.test(relative)) relative = `./${relative}`
  return relative + rest
}

function splitSuffix(url: string): [string, string] {
  const at = url.search(/[?#]/)
  return at === -1 ? [url, ''] : [url.slice(0, at), url.slice(at)]
}

/**
 * `css` with each root path below `prefix` (`/`, `/project/`) relative to the page at
 * `pageUrl`. Other hosts, `data:`, fragments, relative URLs and root paths outside the
 * prefix (a sheet that names `/x` itself) stay as they are.
 */
export function relativeCss(css: string, pageUrl: string, prefix: string): string {
  const pagePath = new URL(pageUrl).pathname
  return rewriteUrls(css, (value) => {
    if (!value.startsWith('/') || value.startsWith('//') || !value.startsWith(prefix)) return null
    return relativeUrl(pagePath, value)
  })
}

/**
 * A stylesheet's text as a `<style>` of a page on the same origin reads it: each relative
 * URL, which the sheet resolved from its own address (`sheetUrl`), becomes the root path it
 * names there, as the renderer writes them. Root paths, other hosts, `data:` and fragments
 * (which name the document's own elements) stay. Null when the sheet `@import`s: an import
 * is a request of its own, which inlining the sheet would not save.
 */
export function rootPathCss(css: string, sheetUrl: URL): string | null {
  if (/@import/i.test(css)) return null
  return rewriteUrls(css, (value) => {
    if (value === '' || value.startsWith('/') || value.startsWith('#') || /^[a-z][a-z\d+.-]*:/i.test(value)) return null
    const url = new URL(value, sheetUrl)
    return url.origin === sheetUrl.origin ? `${url.pathname}${url.search}${url.hash}` : url.href
  })
}

/** A URL in CSS: where it stands, what it names, and whether it is a `url()` or an `image-set()` string. */
interface UrlSpan {
  start: number
  end: number
  value: string
  kind: 'url' | 'string'
}

/**
 * `css` with each URL `rewrite` gives a new value for replaced where it stands (`url()`,
 * and the strings of `image-set()`), so the rest keeps its bytes.
 */
function rewriteUrls(css: string, rewrite: (value: string) => string | null): string {
  if (!/url\(|image-set/i.test(css)) return css
  const spans = recentUrlSpans(css)
  let out = ''
  let at = 0
  for (const { start, end, value, kind } of spans) {
    const rewritten = rewrite(value)
    if (rewritten === null) continue
    out += css.slice(at, start) + (kind === 'url' ? `url(${quoted(rewritten)})` : JSON.stringify(rewritten))
    at = end
  }
  return at === 0 ? css : out + css.slice(at)
}

/**
 * The URLs of `css`, in source order, read from its tokens rather than a parse: a url() is a
 * url() wherever it stands (a custom property's value included), and a page's critical CSS
 * is read in a fraction of a parse's time.
 */
function urlSpans(css: string): UrlSpan[] {
  const spans: UrlSpan[] = []
  /** Open `(`s and functions, innermost last; `image` marks an image-set() whose own strings are URLs. */
  const open: { image: boolean }[] = []
  /** A `url(` function token waiting for its string, then for its `)`. */
  let urlFunction: { start: number; value: string | null } | null = null
  tokenize(css, (type, start, end) => {
    if (urlFunction !== null) {
      if (type === T.WhiteSpace || type === T.Comment) return
      if (type === T.String && urlFunction.value === null) {
        urlFunction.value = cssString.decode(css.slice(start, end))
        return
      }
      const done = urlFunction
      urlFunction = null
      if (type === T.RightParenthesis && done.value !== null) {
        open.pop()
        spans.push({ start: done.start, end, value: done.value.trim(), kind: 'url' })
        return
      }
    }
    switch (type) {
      case T.Url:
        spans.push({ start, end, value: cssUrl.decode(css.slice(start, end)).trim(), kind: 'url' })
        return
      case T.Function: {
        const name = css.slice(start, end - 1)
        open.push({ image: IMAGE_SET.test(name) })
        if (/^url$/i.test(name)) urlFunction = { start, value: null }
        return
      }
      case T.LeftParenthesis:
      case T.LeftSquareBracket:
      case T.LeftCurlyBracket:
        open.push({ image: false })
        return
      case T.RightParenthesis:
      case T.RightSquareBracket:
      case T.RightCurlyBracket:
        open.pop()
        return
      case T.String:
        if (open.at(-1)?.image) spans.push({ start, end, value: cssString.decode(css.slice(start, end)).trim(), kind: 'string' })
    }
  })
  return spans
}

/** The pages of one template mostly share their critical CSS: its URLs are read once. */
const recentUrlSpans = forRecentTexts(urlSpans)

/** A URL as `url()` takes it: bare unless it holds what would end or break the token. */
function quoted(url: string): string {
  return /[\s"'()\\]/.test(url) ? JSON.stringify(url) : url
}
