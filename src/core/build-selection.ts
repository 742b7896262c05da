/**
 * The build's say over the critical set: the `keep` and `drop` strings, what their RegExps
 * match among the selectors of the build's own stylesheets, and what `critical-css:keep` /
 * `critical-css:drop` comment markers mark in the project's source CSS and in the build's
 * stylesheets. All are sent as strings: the service only ever compares strings, so no
 * pattern of a user's runs where many tenants' jobs run.
 */
import { readFile } from 'node:fs/promises'
import { relative, sep } from 'node:path'
import { generate, parse, walk, type CssNode } from 'css-tree'
import { normalizeSelection, SELECTION_LIMITS, type Selection } from '../contract/api-contract.ts'
import { SHEET_FILE, type BuildOutput } from './build-server.ts'
import { MARKER_PREFIX, markedSelectors, type MarkedSelectors } from './css-markers.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'
import type { ResolvedOptions } from './options.ts'

const UTF8 = new TextDecoder('utf-8')

export interface BuildSelection {
  /** What the pages are rendered with and what keys the cache; null: nothing said. */
  selection: Selection | null
  /** What the run warns about once: markers that name no rule of the build's stylesheets. */
  notes: string[]
}

/** A stylesheet with markers: where it is, as a warning names it, and what they mark. */
interface MarkedSheet {
  shown: string
  marked: MarkedSelectors
}

/**
 * The build's selection: `options.selection` with what `keep` and `drop`'s RegExps match in
 * `output`'s stylesheets and what the markers in its sources and stylesheets mark.
 * `root`: what source paths in warnings are relative to.
 */
export async function buildSelection(options: Pick<ResolvedOptions, 'selection' | 'selectionPatterns'>, output: BuildOutput | undefined, root = process.cwd()): Promise<BuildSelection> {
  const patterns = options.selectionPatterns
  const built = output ? await builtSheets(output) : []
  const sheets = output ? await markedSheets(output, built, root) : []
  if (patterns === null && sheets.length === 0) return { selection: options.selection, notes: [] }
  const selectors = ruleSelectors(built)
  const matching = (list: RegExp[] | undefined): string[] => selectors.filter((selector) => (list ?? []).some((pattern) => matches(pattern, selector)))
  const inBuild = new Set(selectors)
  const marked = (say: 'keep' | 'drop'): string[] => sheets.flatMap((sheet) => sheet.marked[say].filter((selector) => inBuild.has(selector)))
  const keep = merged('keep', options.selection?.keep, matching(patterns?.keep), marked('keep'))
  const drop = merged('drop', options.selection?.drop, matching(patterns?.drop), marked('drop'))
  const notes = sheets.flatMap((sheet) =>
    (['keep', 'drop'] as const).flatMap((say) => {
      const missing = sheet.marked[say].filter((selector) => !inBuild.has(selector))
      if (missing.length === 0) return []
      const named = missing.map((selector) => `\`${selector}\``).join(', ')
      return [`critical CSS: a \`${MARKER_PREFIX}${say}\` marker in ${sheet.shown} names ${named}, which no stylesheet of the build has (renamed by CSS modules or a preprocessor?): nothing is ${say === 'keep' ? 'kept' : 'dropped'} for it. The \`${say}\` option takes the built name or a RegExp.`]
    }),
  )
  return { selection: normalizeSelection({ ...options.selection, keep, drop }), notes }
}

/** A pattern with the `g` or `y` flag keeps where it last matched: each test starts afresh. */
function matches(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0
  return pattern.test(text)
}

function merged(option: 'keep' | 'drop', given: readonly string[] | undefined, matched: readonly string[], marked: readonly string[]): string[] {
  const all = [...new Set([...(given ?? []), ...matched, ...marked])]
  const { maxSelectors, maxSelectorChars } = SELECTION_LIMITS
  if (all.length > maxSelectors) {
    const found = [matched.length > 0 ? `its RegExps match ${matched.length} selectors of the build's stylesheets` : null, marked.length > 0 ? `\`${MARKER_PREFIX}${option}\` markers mark ${new Set(marked).size}` : null].filter(Boolean).join(', ')
    throw new ConfigurationError(`${PLUGIN_NAME}: option \`${option}\`: ${found}, ${all.length} with its strings; at most ${maxSelectors} are sent: narrow the RegExps or the markers.`)
  }
  // A matched selector longer than the wire takes cannot be sent: it is left out, as a rule with no such selector would be.
  return all.filter((selector) => selector.length <= maxSelectorChars)
}

/** The build's stylesheets, in file order, each read once: their markers and their selectors are asked of the same text. */
async function builtSheets(output: BuildOutput): Promise<{ file: string; text: string }[]> {
  const sheets: { file: string; text: string }[] = []
  for (const file of (await output.files()).filter((name) => SHEET_FILE.test(name)).sort()) {
    const body = await output.read(file)
    if (body !== null) sheets.push({ file, text: typeof body === 'string' ? body : UTF8.decode(body) })
  }
  return sheets
}

/** The stylesheets with markers: the sources the bundler read (its minifier strips comments), then the build's own. */
async function markedSheets(output: BuildOutput, built: readonly { file: string; text: string }[], root: string): Promise<MarkedSheet[]> {
  const sheets: MarkedSheet[] = []
  const add = (shown: string, text: string | null): void => {
    if (text === null || !text.includes(MARKER_PREFIX)) return
    const marked = markedSelectors(text)
    if (marked.keep.length > 0 || marked.drop.length > 0) sheets.push({ shown, marked })
  }
  for (const path of [...((await output.sourceSheets?.()) ?? [])].sort()) {
    add(relative(root, path).split(sep).join('/'), await readFile(path, 'utf8').catch(() => null))
  }
  for (const { file, text } of built) add(file, text)
  return sheets
}

/** Every rule selector of `sheets`, as css-tree writes it (the engine compares them so), once each, in order. */
export function ruleSelectors(built: readonly { text: string }[]): string[] {
  const found = new Set<string>()
  for (const { text } of built) {
    let tree: CssNode
    try {
      tree = parse(text, { parseValue: false, parseAtrulePrelude: false, parseCustomProperty: false })
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
