/**
 * Comment markers in a stylesheet that say what the critical CSS always keeps or never does,
 * beside the `keep` and `drop` options: `/* critical-css:keep *\/` before a rule (or in its
 * block) marks that rule; `/* critical-css:keep start *\/` … `/* critical-css:keep end *\/`
 * every rule between; the same with `drop`. `/*! … *\/` works too. Read from the source CSS
 * the bundler read (minifiers strip comments) and from the build's own stylesheets.
 */
import { generate, parse, walk, type CssNode, type Rule } from 'css-tree'

/** The word every marker starts with: a stylesheet without it has none, and is not parsed. */
export const MARKER_PREFIX = 'critical-css:'

const MARKER = /^!?\s*critical-css:(keep|drop)(?:\s+(start|end))?\s*$/

/** The selectors marked in one stylesheet, as css-tree writes them (the engine compares them so), in order. */
export interface MarkedSelectors {
  keep: string[]
  drop: string[]
}

interface Marker {
  say: 'keep' | 'drop'
  range: 'start' | 'end' | null
  start: number
  end: number
}

interface MarkedRule {
  start: number
  blockStart: number
  end: number
  selectors: string[]
}

/** The selectors `css`'s markers name. A stylesheet css-tree cannot read, or without markers, names none. */
export function markedSelectors(css: string): MarkedSelectors {
  const found: MarkedSelectors = { keep: [], drop: [] }
  if (!css.includes(MARKER_PREFIX)) return found
  const markers: Marker[] = []
  let tree: CssNode
  try {
    tree = parse(css, {
      positions: true,
      parseValue: false,
      parseCustomProperty: false,
      onComment(value, loc) {
        const match = MARKER.exec(value)
        if (match) markers.push({ say: match[1] as Marker['say'], range: (match[2] as Marker['range']) ?? null, start: loc.start.offset, end: loc.end.offset })
      },
    })
  } catch {
    return found
  }
  if (markers.length === 0) return found
  const rules = rulesOf(tree)
  const add = (say: Marker['say'], rule: MarkedRule): void => {
    for (const selector of rule.selectors) if (!found[say].includes(selector)) found[say].push(selector)
  }
  for (const marker of markers) {
    if (marker.range === 'end') continue
    if (marker.range === 'start') {
      const close = markers.find((other) => other.say === marker.say && other.range === 'end' && other.start > marker.end)
      const until = close?.start ?? css.length
      for (const rule of rules) if (rule.start >= marker.end && rule.start < until) add(marker.say, rule)
      continue
    }
    const rule = ruleMarkedBy(marker, rules, css)
    if (rule) add(marker.say, rule)
  }
  return found
}

/**
 * The rule a single marker marks: the innermost one whose block it opens (`.a { /* … *\/`),
 * else the next rule, unless a block closes between them (a marker at a block's end marks nothing).
 */
function ruleMarkedBy(marker: Marker, rules: readonly MarkedRule[], css: string): MarkedRule | null {
  let inside: MarkedRule | null = null
  for (const rule of rules) if (rule.blockStart < marker.start && marker.end <= rule.end && (inside === null || rule.blockStart > inside.blockStart)) inside = rule
  if (inside) return inside
  const next = rules.find((rule) => rule.start >= marker.end)
  if (!next || withoutComments(css.slice(marker.end, next.start)).includes('}')) return null
  return next
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '')
}

/** The stylesheet's rules that stand on their own (nested rules' selectors are relative to their parent's), in source order. */
function rulesOf(tree: CssNode): MarkedRule[] {
  const rules: MarkedRule[] = []
  walk(tree, {
    visit: 'Rule',
    enter(node: Rule) {
      if (node.prelude.type === 'SelectorList' && node.loc && node.block.loc) {
        const selectors: string[] = []
        node.prelude.children.forEach((selector) => void selectors.push(generate(selector)))
        rules.push({ start: node.loc.start.offset, blockStart: node.block.loc.start.offset, end: node.loc.end.offset, selectors })
      }
      return walk.skip
    },
  })
  return rules.sort((a, b) => a.start - b.start)
}
