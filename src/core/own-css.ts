/**
 * Remote mode renders the site where it is deployed: when the deployed release's stylesheets
 * are not this build's, the critical CSS the service found is partly another release's. This
 * keeps what this build has: each rule of the critical CSS is looked up, by its context
 * (`@media` and the like) and selector, in the deployed page's own stylesheets and in this
 * build's. A rule the deployed sheets do not have (another origin's, a font service's) stays;
 * one they have with the same declarations as this build stays; one whose declarations
 * changed gets this build's; one this build no longer has goes.
 */
import { parse, toPlainObject, type AtrulePlain, type CssNodePlain, type RulePlain, type StyleSheetPlain } from 'css-tree'
import { GROUP_RULES, generatePlain, rebaseUrls } from '../shared/css-plain.ts'

/** A stylesheet and the URL its relative `url()`s resolve against. */
export interface OwnSheet {
  text: string
  url: string
}

export interface OwnCss {
  /** The critical CSS with only this build's rules; the input itself (same bytes) when nothing changed. */
  css: string
  /** Selectors (or at-rules) of the deployed release that this build does not have: gone. */
  dropped: number
  /** Selectors whose declarations differ in this build: given this build's. */
  replaced: number
}

const SEPARATOR = '\u0000'

function parsePlain(text: string, context?: 'rule'): CssNodePlain {
  return toPlainObject(parse(text, { parseCustomProperty: false, onParseError: () => {}, ...(context ? { context } : {}) })) as CssNodePlain
}

function groupContext(context: string, node: AtrulePlain): string {
  return `${context}@${node.name.toLowerCase()} ${node.prelude ? generatePlain(node.prelude) : ''};`
}

function selectorsOf(rule: RulePlain): string[] {
  return rule.prelude.type === 'SelectorList' ? rule.prelude.children.map(generatePlain) : [generatePlain(rule.prelude)]
}

/** The key of an at-rule that holds no rules (`@font-face`, `@keyframes`, `@property`): by name and prelude, `@font-face` by its text. */
function atruleKey(context: string, node: AtrulePlain): string {
  const name = node.name.toLowerCase()
  return `${context}${SEPARATOR}@${name} ${name === 'font-face' ? generatePlain(node) : node.prelude ? generatePlain(node.prelude) : ''}`
}

/** A rule's declarations as written (what a replacement takes), and as compared: minifiers reorder declarations, so in sorted order. */
interface Declarations {
  text: string
  compared: string
}

function declarationsOf(block: CssNodePlain): Declarations {
  const each = block.type === 'Block' ? block.children.map(generatePlain).sort() : [generatePlain(block)]
  return { text: generatePlain(block), compared: each.join(';') }
}

/** Every rule of the sheets by context and selector, with the declarations of each rule it is in, in order. */
function indexSheets(sheets: readonly OwnSheet[], origin: string): Map<string, Declarations[]> {
  const index = new Map<string, Declarations[]>()
  const add = (key: string, declarations: Declarations): void => void index.set(key, [...(index.get(key) ?? []), declarations])
  const visit = (nodes: readonly CssNodePlain[], context: string): void => {
    for (const node of nodes) {
      if (node.type === 'Rule') {
        const declarations = declarationsOf(node.block)
        for (const selector of selectorsOf(node)) add(`${context}${SEPARATOR}${selector}`, declarations)
      } else if (node.type === 'Atrule' && node.block) {
        if (GROUP_RULES.has(node.name.toLowerCase())) visit(node.block.children, groupContext(context, node))
        else add(atruleKey(context, node), { text: generatePlain(node), compared: generatePlain(node) })
      }
    }
  }
  for (const sheet of sheets) {
    const ast = parsePlain(sheet.text) as StyleSheetPlain
    rebaseUrls(ast, sheet.url, origin)
    visit(ast.children, '')
  }
  return index
}

const same = (a: readonly Declarations[], b: readonly Declarations[]): boolean => a.length === b.length && a.every((declarations, i) => declarations.compared === b[i]!.compared)

/**
 * The critical CSS with only this build's rules. `deployed`: the deployed page's stylesheets
 * on its own origin; `build`: the same page's in this build; `pageUrl`: where the page is.
 */
export function keepOwnRules(css: string, sheets: { deployed: readonly OwnSheet[]; build: readonly OwnSheet[]; pageUrl: string }): OwnCss {
  const origin = new URL(sheets.pageUrl).origin
  const deployed = indexSheets(sheets.deployed, origin)
  const build = indexSheets(sheets.build, origin)
  let dropped = 0
  let replaced = 0
  /** What becomes of a rule by its key: kept, dropped (counted), or this build's declarations instead (counted). */
  const judge = (key: string): 'keep' | 'drop' | Declarations[] => {
    const before = deployed.get(key)
    const now = build.get(key)
    if (before === undefined || (now !== undefined && same(before, now))) return 'keep'
    if (now === undefined) {
      dropped++
      return 'drop'
    }
    replaced++
    return now
  }
  const rewrite = (nodes: CssNodePlain[], context: string): CssNodePlain[] => {
    const out: CssNodePlain[] = []
    for (const node of nodes) {
      if (node.type === 'Rule') {
        const kept: CssNodePlain[] = []
        const instead: CssNodePlain[] = []
        const selectors = node.prelude.type === 'SelectorList' ? node.prelude.children : [node.prelude]
        for (const selector of selectors) {
          const verdict = judge(`${context}${SEPARATOR}${generatePlain(selector)}`)
          if (verdict === 'keep') kept.push(selector)
          else if (verdict !== 'drop') for (const { text } of verdict) instead.push(parsePlain(`${generatePlain(selector)}${text}`, 'rule'))
        }
        if (kept.length === selectors.length) out.push(node)
        else {
          if (kept.length > 0 && node.prelude.type === 'SelectorList') out.push({ ...node, prelude: { ...node.prelude, children: kept } })
          out.push(...instead)
        }
      } else if (node.type === 'Atrule' && node.block && GROUP_RULES.has(node.name.toLowerCase())) {
        const children = rewrite(node.block.children, groupContext(context, node))
        if (children.length > 0) out.push({ ...node, block: { ...node.block, children } })
      } else if (node.type === 'Atrule' && node.block) {
        const verdict = judge(atruleKey(context, node))
        if (verdict === 'keep') out.push(node)
        else if (verdict !== 'drop') for (const { text } of verdict) out.push(...(parsePlain(text) as StyleSheetPlain).children)
      } else out.push(node)
    }
    return out
  }
  const ast = parsePlain(css) as StyleSheetPlain
  const children = rewrite(ast.children, '')
  if (dropped === 0 && replaced === 0) return { css, dropped, replaced }
  return { css: generatePlain({ ...ast, children }), dropped, replaced }
}
