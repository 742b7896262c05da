/**
 * Whether a media query holds at a viewport, without a browser: the static engine's answer
 * to the questions the Chromium engine asks the page with `matchMedia`. The questions are
 * already reduced to what a viewport decides (selectors.ts `viewportMediaTest`), so only
 * widths, heights, aspect ratios, orientation and media types are left to read. What this
 * cannot read (a `calc()`, an unknown feature) counts as holding: a rule kept that was not
 * needed costs bytes, a rule dropped that was needed costs the first screen.
 */
import { parse, toPlainObject, type CssNodePlain, type MediaQueryListPlain, type MediaQueryPlain } from 'css-tree'
import type { Viewport } from '../../contract/api-contract.ts'

/** Three answers: yes, no, and cannot tell (kept). */
type Truth = boolean | null

/** What `em` and `rem` are in a media query: the initial font size, whatever the page sets. */
const INITIAL_FONT_PX = 16
const ABSOLUTE_UNITS: Readonly<Record<string, number>> = { px: 1, em: INITIAL_FONT_PX, rem: INITIAL_FONT_PX, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, q: 96 / 101.6, pt: 96 / 72, pc: 16 }
/** The media types a screen is. */
const SCREEN_TYPES = new Set(['all', 'screen'])

const parsedQueries = new Map<string, MediaQueryPlain[] | null>()
/** Distinct media queries kept parsed: a site has a few hundred. */
const MAX_PARSED = 10_000

/** Whether `media` (a media query list, '' for all) holds at `viewport`; what cannot be read holds. */
export function mediaHolds(media: string, viewport: Viewport): boolean {
  const queries = parsedList(media)
  if (queries === null) return true
  if (queries.length === 0) return true
  return queries.some((query) => queryHolds(query, viewport) !== false)
}

function parsedList(media: string): MediaQueryPlain[] | null {
  let queries = parsedQueries.get(media)
  if (queries === undefined) {
    try {
      queries = (toPlainObject(parse(media, { context: 'mediaQueryList' })) as MediaQueryListPlain).children as MediaQueryPlain[]
    } catch {
      queries = null
    }
    if (parsedQueries.size >= MAX_PARSED) parsedQueries.clear()
    parsedQueries.set(media, queries)
  }
  return queries
}

function queryHolds(query: MediaQueryPlain, viewport: Viewport): Truth {
  const type = query.mediaType === null ? true : SCREEN_TYPES.has(query.mediaType.toLowerCase())
  const condition = query.condition ? conditionHolds(query.condition.children, viewport) : true
  const both = and(type, condition)
  return query.modifier?.toLowerCase() === 'not' ? not(both) : both
}

/** A condition's parts: features and nested conditions joined by `and` / `or`, each maybe after `not`. */
function conditionHolds(children: CssNodePlain[], viewport: Viewport): Truth {
  let result: Truth | undefined
  let joiner: 'and' | 'or' | null = null
  let negate = false
  for (const child of children) {
    if (child.type === 'Identifier') {
      const word = child.name.toLowerCase()
      if (word === 'not') negate = !negate
      else if (word === 'and' || word === 'or') joiner = word
      else return null
      continue
    }
    let value: Truth
    if (child.type === 'Condition') value = conditionHolds(child.children, viewport)
    else if (child.type === 'Feature') value = featureHolds(child.name, child.value, viewport)
    else if (child.type === 'FeatureRange') value = rangeHolds(child, viewport)
    else value = null
    if (negate) value = not(value)
    negate = false
    result = result === undefined ? value : joiner === 'or' ? or(result, value) : and(result, value)
  }
  return result ?? null
}

function featureHolds(name: string, value: CssNodePlain | null, viewport: Viewport): Truth {
  const match = /^(min-|max-)?(?:device-)?(width|height|aspect-ratio|orientation)$/i.exec(name)
  if (!match) return null
  const prefix = match[1]?.toLowerCase() ?? null
  const feature = match[2]!.toLowerCase()
  if (feature === 'orientation') {
    if (value?.type !== 'Identifier') return value === null ? true : null
    return value.name.toLowerCase() === (viewport.height >= viewport.width ? 'portrait' : 'landscape')
  }
  // A feature without a value holds when it is not zero: a viewport's width and height never are.
  if (value === null) return prefix === null ? true : null
  const actual = actualOf(feature, viewport)
  const wanted = feature === 'aspect-ratio' ? ratioOf(value) : lengthOf(value)
  if (wanted === null) return null
  return prefix === 'min-' ? actual >= wanted : prefix === 'max-' ? actual <= wanted : actual === wanted
}

/** `(width >= 40rem)`, `(400px <= width < 1000px)`, `(40rem <= width)`. */
function rangeHolds(range: Extract<CssNodePlain, { type: 'FeatureRange' }>, viewport: Viewport): Truth {
  const named = (node: CssNodePlain | null): string | null => (node?.type === 'Identifier' ? node.name.toLowerCase().replace(/^device-/, '') : null)
  const feature = named(range.left) ?? named(range.middle)
  if (feature !== 'width' && feature !== 'height' && feature !== 'aspect-ratio') return null
  const actual = actualOf(feature, viewport)
  const valueOf = (node: CssNodePlain | null): number | null => (node === null ? null : feature === 'aspect-ratio' ? ratioOf(node) : lengthOf(node))
  const compare = (left: number, op: string | null, right: number): Truth => {
    switch (op) {
      case '<': return left < right
      case '<=': return left <= right
      case '>': return left > right
      case '>=': return left >= right
      case '=': return left === right
      default: return null
    }
  }
  if (named(range.left) !== null) {
    const right = valueOf(range.middle)
    return right === null ? null : compare(actual, range.leftComparison, right)
  }
  const left = valueOf(range.left)
  if (left === null) return null
  const first = compare(left, range.leftComparison, actual)
  if (range.right === null) return first
  const right = valueOf(range.right)
  return right === null ? null : and(first, compare(actual, range.rightComparison, right))
}

function actualOf(feature: string, viewport: Viewport): number {
  return feature === 'width' ? viewport.width : feature === 'height' ? viewport.height : viewport.width / viewport.height
}

function lengthOf(node: CssNodePlain): number | null {
  if (node.type === 'Number' && Number(node.value) === 0) return 0
  if (node.type !== 'Dimension') return null
  const factor = ABSOLUTE_UNITS[node.unit.toLowerCase()]
  return factor === undefined ? null : Number(node.value) * factor
}

function ratioOf(node: CssNodePlain): number | null {
  if (node.type === 'Number') return Number(node.value)
  if (node.type !== 'Ratio') return null
  const left = node.left.type === 'Number' ? Number(node.left.value) : NaN
  const right = node.right?.type === 'Number' ? Number(node.right.value) : 1
  return Number.isFinite(left) && Number.isFinite(right) && right !== 0 ? left / right : null
}

function not(value: Truth): Truth {
  return value === null ? null : !value
}

function and(a: Truth, b: Truth): Truth {
  if (a === false || b === false) return false
  return a === null || b === null ? null : true
}

function or(a: Truth, b: Truth): Truth {
  if (a === true || b === true) return true
  return a === null || b === null ? null : false
}
