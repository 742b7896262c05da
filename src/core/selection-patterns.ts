/**
 * `keep` and `drop` given as RegExps: matched against the selectors of the build's own
 * stylesheets when a build runs, and sent as the strings they match. The service only ever
 * compares strings, so no pattern of a user's runs where many tenants' jobs run.
 */
import { generate, parse, walk, type CssNode } from 'css-tree'
import { normalizeSelection, SELECTION_LIMITS, type Selection } from '../contract/api-contract.ts'
import { SHEET_FILE, type BuildOutput } from './build-server.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'
import type { ResolvedOptions } from './options.ts'

const UTF8 = new TextDecoder('utf-8')

/** The build's selection: `options.selection` with what `keep` and `drop`'s RegExps match in `output`'s stylesheets. */
export async function buildSelection(options: Pick<ResolvedOptions, 'selection' | 'selectionPatterns'>, output: BuildOutput | undefined): Promise<Selection | null> {
  const patterns = options.selectionPatterns
  if (patterns === null) return options.selection
  const selectors = output ? await buildSelectors(output) : []
  const matching = (list: RegExp[]): string[] => selectors.filter((selector) => list.some((pattern) => matches(pattern, selector)))
  const keep = merged('keep', options.selection?.keep, matching(patterns.keep))
  const drop = merged('drop', options.selection?.drop, matching(patterns.drop))
  return normalizeSelection({ ...options.selection, keep, drop })
}

/** A pattern with the `g` or `y` flag keeps where it last matched: each test starts afresh. */
function matches(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0
  return pattern.test(text)
}

function merged(option: 'keep' | 'drop', given: readonly string[] | undefined, found: readonly string[]): string[] {
  const all = [...new Set([...(given ?? []), ...found])]
  const { maxSelectors, maxSelectorChars } = SELECTION_LIMITS
  if (all.length > maxSelectors) {
    throw new ConfigurationError(`${PLUGIN_NAME}: option \`${option}\`: its RegExps match ${found.length} selectors of the build's stylesheets, ${all.length} with its strings; at most ${maxSelectors} are sent: narrow the RegExps.`)
  }
  // A matched selector longer than the wire takes cannot be sent: it is left out, as a rule with no such selector would be.
  return all.filter((selector) => selector.length <= maxSelectorChars)
}

/** Every rule selector of the output's stylesheets, as css-tree writes it (the engine compares them so), once each, in file order. */
async function buildSelectors(output: BuildOutput): Promise<string[]> {
  const found = new Set<string>()
  for (const file of (await output.files()).filter((name) => SHEET_FILE.test(name)).sort()) {
    const body = await output.read(file)
    if (body === null) continue
    let tree: CssNode
    try {
      tree = parse(typeof body === 'string' ? body : UTF8.decode(body), { parseValue: false, parseAtrulePrelude: false, parseCustomProperty: false })
    } catch {
      continue
    }
    walk(tree, {
      visit: 'Rule',
      enter(rule) {
        if (rule.prelude.type !== 'SelectorList') return
        rule.prelude.children.forEach((selector) => void found.add(generate(selector)))
      },
    })
  }
  return [...found]
}
