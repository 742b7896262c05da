/**
 * Whether Nuxt inlined styles in place of links (`features.inlineStyles`), read from the
 * pages Nitro prerendered, before any edit of ours: the Nuxt module's hint depends on it.
 */
import { readFile } from 'node:fs/promises'
import { join, posix } from 'node:path'

const HEAD = /^[\s\S]*?<\/head\s*>/i
const STYLE = /<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi
const LINK = /<link\b[^>]*>/gi

/** An attribute of a start tag as Nuxt writes them (`name="value"`, `name=value`, or bare). */
function attributeOf(tag: string, name: string): string | undefined {
  const found = new RegExp(`\\s${name}(?:\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+)))?(?=[\\s/>])`, 'i').exec(tag)
  if (found === null) return undefined
  return (found[1] ?? found[2] ?? found[3] ?? '').replaceAll('&amp;', '&').trim()
}

/**
 * How many of the pages Nuxt prerendered hold a `<style>` in their head whose CSS is in no
 * stylesheet the page links: styles Nuxt inlined in place of a link, that critical CSS would
 * have deferred. Nuxt 3 does that by default with every style; Nuxt 4 by default inlines only
 * components' styles and links them too, which leaves the links to defer. Pages are read as
 * Nuxt writes them (its own markup, before any edit of ours), so a plain scan of the head does.
 */
export async function pagesWithInlinedStyles(folder: string, pages: readonly string[], baseURL: string): Promise<number> {
  const sheets = new Map<string, Promise<string | null>>()
  const sheet = (href: string, page: string): Promise<string | null> => {
    let file: string
    try {
      const path = decodeURIComponent(new URL(href, `http://nuxt.invalid${posix.join(baseURL, page)}`).pathname)
      // Below the base as Nuxt links it, or below a CDN (`app.cdnURL`) by the same path.
      file = path.startsWith(baseURL) ? path.slice(baseURL.length) : path.slice(1)
    } catch {
      return Promise.resolve(null)
    }
    let text = sheets.get(file)
    if (text === undefined) {
      text = readFile(join(folder, file), 'utf8').catch(() => null)
      sheets.set(file, text)
    }
    return text
  }
  let count = 0
  for (const page of pages) {
    const html = await readFile(join(folder, page), 'utf8').catch(() => null)
    const head = html === null ? null : HEAD.exec(html)?.[0]
    if (head === undefined || head === null) continue
    const styles = [...head.matchAll(STYLE)].filter(([tag]) => !/^<style\b[^>]*\sdata-critical-css\b/i.test(tag)).map(([, css]) => css!.trim()).filter((css) => css !== '')
    if (styles.length === 0) continue
    const linked: string[] = []
    for (const [tag] of head.matchAll(LINK)) {
      const rel = attributeOf(tag, 'rel')?.toLowerCase().split(/\s+/) ?? []
      const href = attributeOf(tag, 'href')
      if (!rel.includes('stylesheet') || !href) continue
      const text = await sheet(href, page)
      if (text !== null) linked.push(text)
    }
    if (styles.some((css) => !linked.some((text) => text.includes(css)))) count++
  }
  return count
}
