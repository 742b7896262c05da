/**
 * What of a page a cache key of its critical CSS should see: the document without its
 * `<script>` elements and without the `<link>`s that load no stylesheet. Frameworks stamp
 * build ids and render times into exactly those (Nuxt's payload script and `?_b=` preload,
 * SvelteKit's version), which would make every rebuild a miss; scripts and preloads do not
 * count in the key anyway, like the other resources the page loads.
 */
import { Parser } from 'htmlparser2'
import { asciiLowercase, asciiTokens } from './syntax.ts'

export function renderKeyText(html: string): string {
  const cuts: [number, number][] = []
  let scriptStart: number | null = null
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'script') scriptStart ??= parser.startIndex
        else if (name === 'link' && !asciiTokens(asciiLowercase(attributes.rel ?? '')).includes('stylesheet')) cuts.push([parser.startIndex, parser.endIndex + 1])
      },
      onclosetag(name) {
        if (name !== 'script' || scriptStart === null) return
        cuts.push([scriptStart, parser.endIndex + 1])
        scriptStart = null
      },
    },
    { decodeEntities: false },
  )
  parser.end(html)
  if (scriptStart !== null) cuts.push([scriptStart, html.length])
  let text = ''
  let at = 0
  for (const [start, end] of cuts.sort((a, b) => a[0] - b[0])) {
    if (start < at) continue
    text += html.slice(at, start)
    at = end
  }
  return text + html.slice(at)
}
