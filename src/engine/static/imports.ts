/**
 * The `@import`s of a stylesheet, read from css-tree's tokens without parsing the sheet: the
 * static engine fetches them before the sheets are parsed (sheets.ts replaces each `@import`
 * by the text it is given). Only those at the top level, before any rule, count, as in a browser.
 */
import { string, tokenize, tokenTypes, url as urlToken } from 'css-tree'

/** Sheets read before, by their text: a site's pages link the same few. */
const known = new Map<string, string[]>()
/** Characters of sheet text the map above holds at most. */
const MAX_KNOWN_CHARS = 32 * 1024 * 1024
let knownChars = 0

/** The URLs `text`'s `@import`s load, resolved against `base` (the sheet's own URL). */
export function importsOf(text: string, base: string): string[] {
  let hrefs = known.get(text)
  if (hrefs === undefined) {
    hrefs = importHrefs(text)
    if (knownChars + text.length > MAX_KNOWN_CHARS) {
      known.clear()
      knownChars = 0
    }
    if (text.length <= MAX_KNOWN_CHARS) {
      known.set(text, hrefs)
      knownChars += text.length
    }
  }
  return hrefs.flatMap((href) => (URL.canParse(href, base) ? [new URL(href, base).href] : []))
}

function importHrefs(text: string): string[] {
  const hrefs: string[] = []
  // What the scan expects next: an at-rule at the top level, the address after `@import`, or the end of the statement.
  let state: 'top' | 'address' | 'inUrl' | 'statement' | 'done' = 'top'
  tokenize(text, (type, start, end) => {
    if (state === 'done' || type === tokenTypes.WhiteSpace || type === tokenTypes.Comment || type === tokenTypes.CDO || type === tokenTypes.CDC) return
    const token = text.slice(start, end)
    switch (state) {
      case 'top':
        if (type !== tokenTypes.AtKeyword) state = 'done'
        else if (token.toLowerCase() === '@import') state = 'address'
        // @charset and @layer statements may come before the imports; anything else ends them.
        else if (token.toLowerCase() === '@charset' || token.toLowerCase() === '@layer') state = 'statement'
        else state = 'done'
        return
      case 'address':
        if (type === tokenTypes.String) hrefs.push(string.decode(token))
        else if (type === tokenTypes.Url) hrefs.push(urlToken.decode(token))
        else if (type === tokenTypes.Function && token.toLowerCase() === 'url(') return void (state = 'inUrl')
        state = 'statement'
        return
      case 'inUrl':
        if (type === tokenTypes.String) hrefs.push(string.decode(token))
        state = 'statement'
        return
      case 'statement':
        // A block where a statement's end was due (`@layer x {`) ends the imports too.
        if (type === tokenTypes.LeftCurlyBracket) state = 'done'
        else if (type === tokenTypes.Semicolon) state = 'top'
        return
    }
  })
  return hrefs
}
