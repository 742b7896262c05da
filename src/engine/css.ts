/**
 * From the page's combined stylesheet to its critical CSS. The page answers, per viewport,
 * which reduced selectors match an element above the fold and which media queries match;
 * this module keeps the rules that answer yes (in their original cascade order), then keeps
 * only the custom properties, `@font-face`s, `@keyframes` and `@property`s those rules use.
 * A page with cascade layers gets their whole order first: the critical style stays in the
 * page and comes before its sheets, so a layer it left out would otherwise be ordered last.
 */
import { parse, toPlainObject, type AtrulePlain, type CssNodePlain, type DeclarationPlain, type RulePlain, type SelectorListPlain, type StyleSheetPlain } from 'css-tree'
import type { Selection } from '../contract/api-contract.ts'
import { reduceSelector, viewportMediaTest } from './selectors.ts'
import { GROUP_RULES, generatePlain } from '../shared/css-plain.ts'

/** What the page is asked, once per viewport. */
export interface Questions {
  /** Reduced selectors: does one match an element whose box starts above the fold? */
  selectors: string[]
  /** Per selector, what its subject element must have (see ReducedSelector). */
  subjects: string[][]
  /** Media queries (viewport features only): does it match this viewport? */
  media: string[]
}

/** The page's answers for one viewport, index for index. */
export interface Answers {
  selectors: boolean[]
  media: boolean[]
  /** The page's `style` attributes, joined: they may use custom properties, fonts and animations too. */
  inlineStyles: string
}

/**
 * A job's say over the critical set (EngineInput.selection), made once per job and applied
 * when its CSS is written, so the parse of a site's sheets, shared by jobs, never holds it.
 */
export interface Choice {
  /** Selectors as css-tree writes them: a rule's selector of the same text is kept wherever its rule may apply. */
  keep: ReadonlySet<string>
  /** Likewise, never kept (before `keep`, should a selector be in both). */
  drop: ReadonlySet<string>
  /** False: no `@font-face` at all. */
  fontFaces: boolean
  /** False: no `@keyframes` at all. */
  keyframes: boolean
}

/** What the answers alone decide. */
export const NO_CHOICE: Choice = { keep: new Set(), drop: new Set(), fontFaces: true, keyframes: true }

/** A job's selection as the CSS applies it: `keep` and `drop` each read as a selector list and written as the sheet's selectors are. */
export function choiceOf(selection: Selection | undefined): Choice {
  if (!selection) return NO_CHOICE
  return { keep: selectorTexts(selection.keep), drop: selectorTexts(selection.drop), fontFaces: selection.fontFaces !== false, keyframes: selection.keyframes !== false }
}

function selectorTexts(list: readonly string[] | undefined): Set<string> {
  const texts = new Set<string>()
  for (const text of list ?? []) {
    try {
      const parsed = toPlainObject(parse(text, { context: 'selectorList' })) as SelectorListPlain
      for (const selector of parsed.children) texts.add(generatePlain(selector))
    } catch {
      // Not a selector css-tree can read: none of the sheet's selectors is written so either.
    }
  }
  return texts
}

/** Kept out of critical CSS: they change nothing on the first paint (as penthouse's defaults). */
const UNPAINTED_PROPERTY = /transition|^cursor$|^pointer-events$|tap-highlight-color$|user-select$/i
/** At-rules that never belong in critical CSS (`@import`s are already replaced by what they load). */
const DROPPED_RULES = new Set(['import', 'charset', 'page', 'viewport', '-ms-viewport'])
const VAR_REFERENCE = /var\(\s*(--[^,\s)]+)/g
const IDENTIFIER = /-?[_a-zA-Z][-\w]*/g
const QUOTES = /^["']|["']$/g
const DARK_SCHEME = /prefers-color-scheme\s*:\s*dark/i
/** The selector index of a selector that never applies at first paint. */
const NEVER = -1

export class CriticalCss {
  readonly questions: Questions = { selectors: [], subjects: [], media: [] }
  readonly #sheet: StyleSheetPlain
  readonly #ruleSelectors = new Map<RulePlain, (number | null)[]>()
  readonly #mediaIndex = new Map<AtrulePlain, number>()
  /** Each rule's selectors as written (for `keep` and `drop`), made the first time a job asks. */
  readonly #selectorTexts = new WeakMap<RulePlain, string[]>()
  /** The page's named cascade layers in the order they first appear: the order its full CSS gives them. */
  readonly #layers: string[]
  /** Whether the page's CSS has rules for visitors who prefer a dark colour scheme: its first screen is read in both. */
  readonly darkScheme: boolean

  constructor(sheet: StyleSheetPlain) {
    this.#sheet = sheet
    this.#layers = layerOrder(sheet.children, '', new Set())
    let dark = false
    const selectorIndex = new Map<string, number>()
    const mediaIndex = new Map<string, number>()
    const index = (map: Map<string, number>, list: string[], key: string): number => {
      let found = map.get(key)
      if (found === undefined) {
        found = list.push(key) - 1
        map.set(key, found)
      }
      return found
    }
    const visit = (nodes: CssNodePlain[]): void => {
      for (const node of nodes) {
        if (node.type === 'Rule' && node.prelude.type === 'SelectorList') {
          this.#ruleSelectors.set(
            node,
            node.prelude.children.map((selector) => {
              const reduced = selector.type === 'Selector' ? reduceSelector(selector) : 'keep'
              if (reduced === 'keep') return null
              if (reduced === 'drop') return NEVER
              const at = index(selectorIndex, this.questions.selectors, reduced.text)
              this.questions.subjects[at] = reduced.subject
              return at
            }),
          )
        } else if (node.type === 'Atrule' && node.block && GROUP_RULES.has(node.name.toLowerCase())) {
          if (node.name.toLowerCase() === 'media' && node.prelude) {
            const media = generatePlain(node.prelude)
            dark ||= DARK_SCHEME.test(media)
            this.#mediaIndex.set(node, index(mediaIndex, this.questions.media, viewportMediaTest(media)))
          }
          visit(node.block.children)
        }
      }
    }
    visit(sheet.children)
    this.darkScheme = dark
  }

  /** The critical CSS for the union of the viewports answered, with the job's `choice` applied, minified. */
  css(answers: Answers[], choice: Choice = NO_CHOICE): string {
    const kept = this.#keepRules(this.#sheet.children, answers.map(() => true), answers, true, choice)
    const inlineStyles = answers.map((answer) => answer.inlineStyles).join(';')
    const order: CssNodePlain[] = this.#layers.length > 0 ? [{ type: 'Atrule', name: 'layer', prelude: { type: 'Raw', value: this.#layers.join(',') }, block: null } as AtrulePlain] : []
    return generatePlain({ type: 'StyleSheet', children: [...order, ...pruneUnused(kept, inlineStyles, choice)] } as CssNodePlain)
  }

  /** `ordered`: the nodes' layer statements say nothing the full order put first does not. */
  #keepRules(nodes: CssNodePlain[], active: boolean[], answers: Answers[], ordered: boolean, choice: Choice): CssNodePlain[] {
    const out: CssNodePlain[] = []
    for (const node of nodes) {
      if (node.type === 'Rule') {
        const rule = this.#keepRule(node, active, answers, choice)
        if (rule) out.push(rule)
      } else if (node.type === 'Atrule') {
        const name = node.name.toLowerCase()
        if (DROPPED_RULES.has(name)) continue
        if (ordered && name === 'layer' && !node.block && this.#layers.length > 0) continue
        if (!node.block || !GROUP_RULES.has(name)) {
          out.push(node)
          continue
        }
        const media = this.#mediaIndex.get(node)
        const inside = media === undefined ? active : active.map((on, viewport) => on && answers[viewport]!.media[media] === true)
        if (!inside.includes(true)) continue
        const children = this.#keepRules(node.block.children, inside, answers, ordered && name === 'layer' && node.prelude !== null, choice)
        if (children.length > 0) out.push({ ...node, block: { ...node.block, children } })
      }
    }
    return out
  }

  #keepRule(rule: RulePlain, active: boolean[], answers: Answers[], choice: Choice): RulePlain | null {
    const indexes = this.#ruleSelectors.get(rule)
    if (!indexes || rule.prelude.type !== 'SelectorList') return null
    const texts = choice.keep.size > 0 || choice.drop.size > 0 ? this.#textsOf(rule) : null
    const selectors = rule.prelude.children.filter((_, position) => {
      const text = texts?.[position]
      if (text !== undefined && choice.drop.has(text)) return false
      // As if its element were above the fold: kept wherever its rule may apply (its media queries still do).
      if (text !== undefined && choice.keep.has(text)) return true
      const asked = indexes[position]
      // A selector the page cannot be asked about (nesting) is kept wherever its rule may apply.
      if (asked === null || asked === undefined) return true
      if (asked === NEVER) return false
      return active.some((on, viewport) => on && answers[viewport]!.selectors[asked] === true)
    })
    if (selectors.length === 0) return null
    // A custom property is judged by its use (pruneUnused), not its name: `--menu-transition-height` may be a height.
    const declarations = rule.block.children.filter((child) => !(child.type === 'Declaration' && !child.property.startsWith('--') && UNPAINTED_PROPERTY.test(child.property)))
    if (declarations.length === 0) return null
    return { ...rule, prelude: { ...rule.prelude, children: selectors }, block: { ...rule.block, children: declarations } }
  }

  #textsOf(rule: RulePlain): string[] {
    let texts = this.#selectorTexts.get(rule)
    if (texts === undefined) {
      texts = rule.prelude.type === 'SelectorList' ? rule.prelude.children.map((selector) => generatePlain(selector)) : []
      this.#selectorTexts.set(rule, texts)
    }
    return texts
  }
}

/**
 * The named layers `nodes` declare (statements, blocks, `@import … layer()` as the block it
 * became), as full dotted names in first-appearance order. A layer first named inside a
 * condition (`@media`, `@supports`) joins the order only where that holds, and an anonymous
 * layer's sublayers cannot be named from outside it: both are left where they are.
 */
function layerOrder(nodes: CssNodePlain[], prefix: string, into: Set<string>): string[] {
  for (const node of nodes) {
    if (node.type !== 'Atrule' || node.name.toLowerCase() !== 'layer' || !node.prelude) continue
    const names = generatePlain(node.prelude)
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)
    for (const name of names) {
      // `@layer a.b` also declares `a`, first.
      const parts = name.split('.')
      for (let end = 1; end <= parts.length; end++) into.add(prefix + parts.slice(0, end).join('.'))
    }
    if (node.block && names.length === 1) layerOrder(node.block.children, `${prefix}${names[0]}.`, into)
  }
  return [...into]
}

/** Drops custom properties, font faces, keyframes and registered properties nothing kept uses; every font face or keyframes the choice turned off. */
function pruneUnused(nodes: CssNodePlain[], inlineStyles: string, choice: Choice): CssNodePlain[] {
  const usage = new Usage(inlineStyles, choice.keyframes)
  usage.scan(nodes)
  return filterUnused(nodes, usage, choice)
}

class Usage {
  readonly variables = new Set<string>()
  readonly families = new Set<string>()
  readonly animations = new Set<string>()
  readonly #customValues = new Map<string, string[]>()
  readonly #keyframes = new Map<string, DeclarationPlain[]>()
  readonly #plain: string[] = []
  readonly #fonts: string[] = []
  readonly #animationValues: string[] = []

  /** `keyframes` false: none is kept, so the variables they use are not used either. */
  constructor(
    readonly inlineStyles: string,
    readonly keyframes: boolean,
  ) {}

  scan(nodes: CssNodePlain[]): void {
    this.#collect(nodes)
    this.#plain.push(this.inlineStyles)
    for (const text of this.#plain) this.#useVariables(text)
    // Keyframes a kept rule animates with may use variables too; one more round covers them.
    this.#resolveFontsAndAnimations()
    if (this.keyframes) for (const name of this.animations) for (const declaration of this.#keyframes.get(name) ?? []) this.#useVariables(valueText(declaration))
    this.#resolveFontsAndAnimations()
  }

  #collect(nodes: CssNodePlain[]): void {
    for (const node of nodes) {
      if (node.type === 'Rule') {
        for (const child of node.block.children) {
          if (child.type !== 'Declaration') {
            if (child.type === 'Raw') this.#plain.push(child.value)
            continue
          }
          const text = valueText(child)
          if (child.property.startsWith('--')) {
            const values = this.#customValues.get(child.property) ?? []
            values.push(text)
            this.#customValues.set(child.property, values)
            continue
          }
          this.#plain.push(text)
          const property = child.property.toLowerCase()
          if (property === 'font' || property === 'font-family') this.#fonts.push(text)
          if (property === 'animation' || property === 'animation-name') this.#animationValues.push(text)
        }
      } else if (node.type === 'Atrule' && node.block) {
        const name = node.name.toLowerCase()
        if (name.endsWith('keyframes')) {
          const declarations: DeclarationPlain[] = []
          collectDeclarations(node.block.children, declarations)
          const key = keyframesName(node)
          this.#keyframes.set(key, [...(this.#keyframes.get(key) ?? []), ...declarations])
        } else if (GROUP_RULES.has(name)) {
          this.#collect(node.block.children)
        }
      }
    }
  }

  #useVariables(text: string): void {
    for (const match of text.matchAll(VAR_REFERENCE)) {
      const name = match[1]!
      if (this.variables.has(name)) continue
      this.variables.add(name)
      for (const value of this.#customValues.get(name) ?? []) this.#useVariables(value)
    }
  }

  #resolveFontsAndAnimations(): void {
    const loose = [this.inlineStyles, ...[...this.variables].flatMap((name) => this.#customValues.get(name) ?? [])]
    for (const text of [...this.#fonts, ...loose]) for (const family of familyNames(text)) this.families.add(family)
    for (const text of [...this.#animationValues, ...loose]) for (const match of text.matchAll(IDENTIFIER)) this.animations.add(match[0])
  }
}

function filterUnused(nodes: CssNodePlain[], usage: Usage, choice: Choice): CssNodePlain[] {
  const out: CssNodePlain[] = []
  for (const node of nodes) {
    if (node.type === 'Rule') {
      const children = node.block.children.filter((child) => child.type !== 'Declaration' || !child.property.startsWith('--') || usage.variables.has(child.property))
      if (children.length > 0) out.push({ ...node, block: { ...node.block, children } })
      continue
    }
    if (node.type !== 'Atrule') {
      out.push(node)
      continue
    }
    const name = node.name.toLowerCase()
    if (name === 'font-face') {
      if (choice.fontFaces && fontFaceFamilies(node).some((family) => usage.families.has(family))) out.push(node)
    } else if (name.endsWith('keyframes')) {
      if (choice.keyframes && usage.animations.has(keyframesName(node))) out.push(node)
    } else if (name === 'property') {
      if (node.prelude && usage.variables.has(generatePlain(node.prelude).trim())) out.push(node)
    } else if (node.block && GROUP_RULES.has(name)) {
      const children = filterUnused(node.block.children, usage, choice)
      if (children.length > 0) out.push({ ...node, block: { ...node.block, children } })
    } else {
      out.push(node)
    }
  }
  return out
}

function collectDeclarations(nodes: CssNodePlain[], into: DeclarationPlain[]): void {
  for (const node of nodes) {
    if (node.type === 'Declaration') into.push(node)
    else if (node.type === 'Rule' || node.type === 'Block') collectDeclarations(node.type === 'Rule' ? node.block.children : node.children, into)
  }
}

const valueTexts = new WeakMap<DeclarationPlain, string>()
function valueText(declaration: DeclarationPlain): string {
  let text = valueTexts.get(declaration)
  if (text === undefined) {
    text = generatePlain(declaration.value)
    valueTexts.set(declaration, text)
  }
  return text
}

function keyframesName(node: AtrulePlain): string {
  return node.prelude ? generatePlain(node.prelude).trim().replace(QUOTES, '') : ''
}

function fontFaceFamilies(node: AtrulePlain): string[] {
  const declarations: DeclarationPlain[] = []
  collectDeclarations(node.block?.children ?? [], declarations)
  return declarations.filter((d) => d.property.toLowerCase() === 'font-family').flatMap((d) => familyNames(valueText(d)))
}

/**
 * Every name a font list may mean, lower-cased and unquoted. For the `font` shorthand
 * (`italic 700 1rem/1.5 Open Sans`) the family's words are a suffix of the first item, so
 * every suffix counts: a false match only keeps a font face that was unused.
 */
function familyNames(text: string): string[] {
  const names: string[] = []
  for (const item of text.split(',')) {
    const words = item.trim().replace(QUOTES, '').replace(/["']/g, '').toLowerCase().split(/\s+/).filter(Boolean)
    for (let start = 0; start < words.length; start++) names.push(words.slice(start).join(' '))
  }
  return names
}
