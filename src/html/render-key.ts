/**
 * What of a page a cache key of its critical CSS should see: the document with each
 * `<script>` reduced to the file it loads (a new bundle is a new key: scripts can change
 * what is above the fold) and without the `<link>`s that load no stylesheet. Frameworks
 * stamp build ids and render times into exactly what goes (Nuxt's payload script and
 * `?_b=` preload, SvelteKit's version), which would make every rebuild a miss.
 */
import { Parser } from 'htmlparser2'
import { asciiLowercase, asciiTokens } from './syntax.ts'

export function renderKeyText(html: string): string {
  /** Spans to replace: [start, end, what stands there instead]. */
  const cuts: [number, number, string][] = []
  let scriptStart: number | null = null
  let scriptSrc: string | null = null
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'script') {
          if (scriptStart === null) {
            scriptStart = parser.startIndex
            scriptSrc = attributes.src ?? null
          }
        } else if (name === 'link' && !asciiTokens(asciiLowercase(attributes.rel ?? '')).includes('stylesheet')) cuts.push([parser.startIndex, parser.endIndex + 1, ''])
      },
      onclosetag(name) {
        if (name !== 'script' || scriptStart === null) return
        cuts.push([scriptStart, parser.endIndex + 1, scriptSrc === null ? '' : `<script src=${JSON.stringify(scriptSrc)}>`])
        scriptStart = null
      },
    },
    { decodeEntities: false },
  )
  parser.end(html)
  if (scriptStart !== null) cuts.push([scriptStart, html.length, scriptSrc === null ? '' : `<script src=${JSON.stringify(scriptSrc)}>`])
  let text = ''
  let at = 0
  for (const [start, end, instead] of cuts.sort((a, b) => a[0] - b[0])) {
    if (start < at) continue
    text += html.slice(at, start) + instead
    at = end
  }
  return text + html.slice(at)
}
