/**
 * Puts every stylesheet a page applied into one stylesheet, in cascade order: `@import`s
 * replaced by the sheet they load (wrapped in their media, supports and layer), a
 * `<link media>` kept as an `@media` around its sheet, and every `url()` rewritten so it
 * resolves the same once the CSS sits inline in the page.
 */
import { parse, toPlainObject, type AtrulePlain, type CssNodePlain, type StyleSheetPlain } from 'css-tree'
import { generatePlain, rebaseUrls } from '../shared/css-plain.ts'

/** One stylesheet as the page applied it, in document order. */
export interface AppliedSheet {
  /** The text as the browser received it (`<link>`) or as written (`<style>`). */
  text: string
  /** What its relative URLs resolve against: the sheet's own URL, or the document's base URL for a `<style>`. */
  base: string
  /** The owner element's media list; empty for all media. */
  media: string
}

/** The text of a stylesheet an `@import` loads, as the browser received it; `url` is where it ended up after redirects. */
export type ImportedSheet = (url: string) => { text: string; url: string } | undefined

const MAX_IMPORT_DEPTH = 8
const ALL_MEDIA = /^\s*(all)?\s*$/i

/** The page's sheets as one; `incomplete` holds the sheets an `@import` of which the browser did not load (their rules are missing). */
export function combineSheets<Sheet extends AppliedSheet>(sheets: Sheet[], imported: ImportedSheet, pageUrl: string): { sheet: StyleSheetPlain; incomplete: Set<Sheet> } {
  const origin = new URL(pageUrl).origin
  const children: CssNodePlain[] = []
  const incomplete = new Set<Sheet>()
  for (const sheet of sheets) {
    const noted: ImportedSheet = (url) => {
      const found = imported(url)
      if (!found) incomplete.add(sheet)
      return found
    }
    const nodes = sheetNodes(sheet.text, sheet.base, origin, noted, new Set(), 0)
    children.push(...wrap(nodes, { media: ALL_MEDIA.test(sheet.media) ? null : sheet.media }))
  }
  return { sheet: { type: 'StyleSheet', children }, incomplete }
}

function sheetNodes(text: string, base: string, origin: string, imported: ImportedSheet, seen: Set<string>, depth: number): CssNodePlain[] {
  const ast = toPlainObject(parse(text, { parseCustomProperty: false, onParseError: () => {} })) as StyleSheetPlain
  rebaseUrls(ast, base, origin)
  const out: CssNodePlain[] = []
  for (const node of ast.children) {
    if (node.type === 'Atrule' && node.name.toLowerCase() === 'import') {
      out.push(...importNodes(node, base, origin, imported, seen, depth))
    } else if (!(node.type === 'Atrule' && node.name.toLowerCase() === 'charset')) {
      out.push(node)
    }
  }
  return out
}

/** An `@import`, replaced by what it loads; nothing when the browser did not load it. */
function importNodes(node: AtrulePlain, base: string, origin: string, imported: ImportedSheet, seen: Set<string>, depth: number): CssNodePlain[] {
  const parts = node.prelude?.type === 'AtrulePrelude' ? node.prelude.children : []
  const target = parts[0]
  const href = target?.type === 'Url' || target?.type === 'String' ? target.value : null
  if (!href || depth >= MAX_IMPORT_DEPTH) return []
  // rebaseUrls already made it root-relative; the lookup wants it absolute again.
  const url = new URL(href, base).href
  const loaded = imported(url)
  if (!loaded || seen.has(loaded.url)) return []
  const conditions: { media: string | null; supports?: string; layer?: string } = { media: null }
  for (const part of parts.slice(1)) {
    if (part.type === 'MediaQueryList') conditions.media = generatePlain(part)
    else if (part.type === 'Function' && part.name.toLowerCase() === 'supports') conditions.supports = `(${part.children.map(generatePlain).join('')})`
    else if (part.type === 'Function' && part.name.toLowerCase() === 'layer') conditions.layer = part.children.map(generatePlain).join('')
    else if (part.type === 'Identifier' && part.name.toLowerCase() === 'layer') conditions.layer = ''
  }
  const nodes = sheetNodes(loaded.text, loaded.url, origin, imported, new Set([...seen, loaded.url]), depth + 1)
  return wrap(nodes, conditions)
}

function wrap(nodes: CssNodePlain[], conditions: { media: string | null; supports?: string; layer?: string }): CssNodePlain[] {
  let wrapped = nodes
  if (conditions.layer !== undefined) wrapped = [groupRule('layer', conditions.layer, wrapped)]
  if (conditions.supports !== undefined) wrapped = [groupRule('supports', conditions.supports, wrapped)]
  if (conditions.media && !ALL_MEDIA.test(conditions.media)) wrapped = [groupRule('media', conditions.media, wrapped)]
  return wrapped
}

function groupRule(name: string, prelude: string, children: CssNodePlain[]): AtrulePlain {
  return {
    type: 'Atrule',
    name,
    prelude: prelude ? { type: 'Raw', value: prelude } : null,
    block: { type: 'Block', children },
  } as AtrulePlain
}

