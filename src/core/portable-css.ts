/**
 * The critical CSS of a page that links its stylesheets relatively, with its `url()`s
 * relative too. The renderer names every file of the site by its root path (`/fonts/x.woff2`,
 * `/project/fonts/x.woff2` below a base): right for the address it rendered, wrong once
 * the same folder is served below another path or opened from disk, where the page's own
 * relative links still work. Only the `url()`s are touched, each where it stands, so the
 * rest of the CSS keeps its bytes and a second pass changes nothing.
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
  if (!/url\(|image-set/i.test(css)) return css
  const pagePath = new URL(pageUrl).pathname
  const rewrite = (value: string): string | null => {
    const trimmed = value.trim()
    if (!trimmed.startsWith('/') || trimmed.startsWith('//') || !trimmed.startsWith(prefix)) return null
    return relativeUrl(pagePath, trimmed)
  }
  const edits: { start: number; end: number; text: string }[] = []
  const edit = (node: CssNode, text: string | null): void => {
    if (text !== null && node.loc) edits.push({ start: node.loc.start.offset, end: node.loc.end.offset, text })
  }
  walk(parse(css, { positions: true, parseValue: true, parseCustomProperty: false }), (node) => {
    if (node.type === 'Url') {
      const to = rewrite(node.value)
      edit(node, to === null ? null : `url(${quoted(to)})`)
    } else if (node.type === 'Function' && IMAGE_SET.test(node.name)) {
      node.children.forEach((child) => {
        if (child.type !== 'String') return
        const to = rewrite(child.value)
        edit(child, to === null ? null : JSON.stringify(to))
      })
    } else if (node.type === 'Raw' && node.loc) {
      // A custom property's value is not parsed: its url()s are found in its text.
      const text = css.slice(node.loc.start.offset, node.loc.end.offset)
      const rewritten = text.replace(RAW_URL, (whole, quote: string, href: string) => {
        const to = rewrite(href)
        return to === null ? whole : `url(${quote}${to}${quote})`
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
