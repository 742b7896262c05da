/**
 * The critical CSS of a page that links its stylesheets relatively, with its `url()`s
 * relative too. The renderer names every file of the site by its root path (`/fonts/x.woff2`,
 * `/project/fonts/x.woff2` below a base): right for the address it rendered, wrong once
 * the same folder is served below another path or opened from disk, where the page's own
 * relative links still work. And a stylesheet put inline whole, whose relative `url()`s
 * named files from the sheet's own address. Only the `url()`s are touched, each where it
 * stands, so the rest of the CSS keeps its bytes and a second pass changes nothing.
 */
import { parse, walk, type CssNode } from 'css-tree'

const IMAGE_SET = /^(-webkit-)?image-set$/i
const RAW_URL = /url\(\s*(['"]?)([^'")\s]+)\1\s*\)/gi

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

/**
 * `css` with each URL `rewrite` gives a new value for replaced where it stands (`url()`,
 * `image-set()` strings, and those in custom properties, whose values are not parsed), so
 * the rest keeps its bytes.
 */
function rewriteUrls(css: string, rewrite: (value: string) => string | null): string {
  if (!/url\(|image-set/i.test(css)) return css
  const to = (value: string): string | null => rewrite(value.trim())
  const edits: { start: number; end: number; text: string }[] = []
  const edit = (node: CssNode, text: string | null): void => {
    if (text !== null && node.loc) edits.push({ start: node.loc.start.offset, end: node.loc.end.offset, text })
  }
  walk(parse(css, { positions: true, parseValue: true, parseCustomProperty: false }), (node) => {
    if (node.type === 'Url') {
      const value = to(node.value)
      edit(node, value === null ? null : `url(${quoted(value)})`)
    } else if (node.type === 'Function' && IMAGE_SET.test(node.name)) {
      node.children.forEach((child) => {
        if (child.type !== 'String') return
        const value = to(child.value)
        edit(child, value === null ? null : JSON.stringify(value))
      })
    } else if (node.type === 'Raw' && node.loc) {
      // A custom property's value is not parsed: its url()s are found in its text.
      const text = css.slice(node.loc.start.offset, node.loc.end.offset)
      const rewritten = text.replace(RAW_URL, (whole, quote: string, href: string) => {
        const value = to(href)
        return value === null ? whole : `url(${quote}${value}${quote})`
      })
      if (rewritten !== text) edit(node, rewritten)
    }
  })
  if (edits.length === 0) return css
  let out = ''
  let at = 0
  for (const { start, end, text } of edits.sort((a, b) => a.start - b.start)) {
    out += css.slice(at, start) + text
    at = end
  }
  return out + css.slice(at)
}

/** A URL as `url()` takes it: bare unless it holds what would end or break the token. */
function quoted(url: string): string {
  return /[\s"'()\\]/.test(url) ? JSON.stringify(url) : url
}
