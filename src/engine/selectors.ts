/**
 * What the page is asked about a rule: its selectors with user-action states, a custom
 * element's `:defined` state and pseudo-elements reduced to the element they style
 * (`a.nav:hover::after` → `a.nav`, `user-badge:not(:defined)` → `user-badge`), and media
 * queries reduced to what a viewport decides.
 */
import type { CssNodePlain, SelectorPlain } from 'css-tree'
import { generatePlain } from '../shared/css-plain.ts'

/** States a page is not in when it first paints; the element itself is. */
const DYNAMIC_PSEUDO_CLASSES = new Set([
  'hover', 'focus', 'focus-visible', 'focus-within', 'active', 'visited', 'target', 'target-within',
  'current', 'past', 'future', 'playing', 'paused', 'user-invalid', 'user-valid', 'autofill',
  'popover-open', 'modal', 'fullscreen', 'picture-in-picture', 'open', 'closed',
])
/** Pseudo-elements nothing shows at first paint: they need a selection, a spelling check or a modal dialog. */
const UNPAINTED_PSEUDO_ELEMENTS = new Set(['selection', '-moz-selection', 'spelling-error', 'grammar-error', 'target-text', 'highlight', 'backdrop'])
/** Pseudo-elements that CSS 2 wrote with one colon. */
const LEGACY_PSEUDO_ELEMENTS = new Set(['before', 'after', 'first-line', 'first-letter'])

export interface ReducedSelector {
  /** What the page runs `querySelectorAll` with. */
  text: string
  /** What the subject element must have: `t:tag`, `i:id`, `c:class` (escaped names left out). */
  subject: string[]
}

/**
 * The selector the page is asked about; 'keep' when the rule cannot be tested that way
 * (nesting `&`), 'drop' when what it styles never shows at first paint (`::selection`).
 */
export function reduceSelector(selector: SelectorPlain): ReducedSelector | 'keep' | 'drop' {
  const compounds: CssNodePlain[][] = [[]]
  const combinators: CssNodePlain[] = []
  for (const node of selector.children) {
    // css-tree's types predate the nesting selector's node.
    if ((node.type as string) === 'NestingSelector') return 'keep'
    if (node.type === 'PseudoElementSelector' && UNPAINTED_PSEUDO_ELEMENTS.has(node.name.toLowerCase())) return 'drop'
    if (node.type === 'Combinator') {
      combinators.push(node)
      compounds.push([])
      continue
    }
    if (isReducible(node)) continue
    compounds[compounds.length - 1]!.push(node)
  }
  const children: CssNodePlain[] = []
  compounds.forEach((compound, index) => {
    if (index > 0) children.push(combinators[index - 1]!)
    // A compound left empty (`:hover`, `::selection`) still stands for an element.
    children.push(...(compound.length > 0 ? compound : [{ type: 'TypeSelector', name: '*' } as CssNodePlain]))
  })
  return { text: generatePlain({ type: 'Selector', children } as CssNodePlain), subject: subjectTokens(compounds[compounds.length - 1]!) }
}

function subjectTokens(compound: CssNodePlain[]): string[] {
  const tokens: string[] = []
  for (const node of compound) {
    if (node.type === 'TypeSelector' && node.name !== '*' && !node.name.includes('|')) tokens.push(`t:${node.name.toLowerCase()}`)
    else if (node.type === 'IdSelector' && !node.name.includes('\\')) tokens.push(`i:${node.name}`)
    else if (node.type === 'ClassSelector' && !node.name.includes('\\')) tokens.push(`c:${node.name}`)
  }
  return tokens
}

function isReducible(node: CssNodePlain): boolean {
  if (node.type === 'PseudoElementSelector') return true
  if (node.type !== 'PseudoClassSelector') return false
  const name = node.name.toLowerCase()
  // A custom element is undefined until its script runs, which may be after the first paint: the page is read after, so both states count.
  if (name === 'defined' || (name === 'not' && generatePlain(node).toLowerCase() === ':not(:defined)')) return true
  return DYNAMIC_PSEUDO_CLASSES.has(name) || LEGACY_PSEUDO_ELEMENTS.has(name) || name.startsWith('-')
}

/** Media features a viewport decides; any other (`prefers-*`, `hover`, resolution) may match some visitor. */
const VIEWPORT_FEATURE = /^(min-|max-)?(device-)?(width|height|aspect-ratio|orientation)$/i
const LEAF_CONDITION = /(\bnot\s+)?\(([^()]*)\)/gi
const LEAF_FEATURE = /^\s*[a-z-]+\s*(:|$)/i
const FEATURE_NAME = /[a-z-]+/gi
const ALWAYS = '(min-width:0px)'

/**
 * The media query the page evaluates for one viewport: features that do not depend on the
 * viewport become always-true, so `(prefers-color-scheme: dark) and (min-width: 768px)` is
 * kept for a wide viewport whatever the headless browser prefers. Media types stay
 * (`print` never matches a screen).
 */
export function viewportMediaTest(media: string): string {
  return media.replace(LEAF_CONDITION, (whole, _not: string | undefined, inner: string) => {
    const names = inner.match(FEATURE_NAME) ?? []
    if (names.some((name) => VIEWPORT_FEATURE.test(name))) return whole
    // Only a plain `(feature: value)` leaf is replaced (with its `not`): `calc(…)` inside a value is not a feature.
    return LEAF_FEATURE.test(inner) ? ALWAYS : whole
  })
}
