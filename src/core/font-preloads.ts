/**
 * The font files a page's critical CSS paints its first screen with, to preload (the
 * `preloadFonts` option): without a preload the browser finds a face only once the inlined
 * CSS is parsed and an element uses it, a round trip after the page's own bytes.
 */
import { parse, walk, type CssNode } from 'css-tree'

/** Preloads past these compete with the page's own first requests. */
export const MAX_FONT_PRELOADS = 4

/**
 * Per `@font-face` of `css`, in order, the file a browser that reads WOFF2 fetches: the
 * first `url()` of its `src` marked `format("woff2")` or named `.woff2`, else its first
 * `url()`. `data:` URLs are in the CSS already; a face without a URL (`local()`) has none.
 */
export function criticalFonts(css: string): string[] {
  const urls: string[] = []
  let tree: CssNode
  try {
    tree = parse(css, { parseValue: true, parseRulePrelude: false })
  } catch {
    return urls
  }
  walk(tree, {
    visit: 'Atrule',
    enter(node) {
      if (node.name.toLowerCase() !== 'font-face' || !node.block) return
      // The last `src` is the one that counts.
      let candidates: { url: string; woff2: boolean }[] = []
      node.block.children.forEach((child) => {
        if (child.type !== 'Declaration' || child.property.toLowerCase() !== 'src' || child.value.type !== 'Value') return
        candidates = []
        child.value.children.forEach((part) => {
          if (part.type === 'Url') candidates.push({ url: part.value, woff2: /\.woff2(?:[?#]|$)/i.test(part.value) })
          else if (part.type === 'Function' && part.name.toLowerCase() === 'format' && candidates.length > 0) {
            const said = part.children.first
            if (said && (said.type === 'String' || said.type === 'Identifier') && /^woff2$/i.test(said.type === 'String' ? said.value : said.name)) candidates[candidates.length - 1]!.woff2 = true
          }
        })
      })
      const chosen = candidates.find((candidate) => candidate.woff2) ?? candidates[0]
      if (chosen && !/^data:/i.test(chosen.url) && !urls.includes(chosen.url)) urls.push(chosen.url)
    },
  })
  return urls.slice(0, MAX_FONT_PRELOADS)
}
