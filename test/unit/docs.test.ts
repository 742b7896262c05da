/**
 * The docs cannot drift from the code:
 * - every ```ts / ```js code block in README.md, docs/, bench/README.md and CONTRIBUTING.md
 *   typechecks against src/ (`unplugin-critical-css/*` mapped to src/<entry>.ts), one
 *   TypeScript program for all of them; a block that cannot stand alone is marked
 *   `<!-- not checked: reason -->` on the line before it;
 * - the options tables of README.md and docs/options.md name exactly the keys of
 *   `optionsSchema`;
 * - every relative link points at a file that exists, and an anchor at a heading in it.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { optionsSchema } from '../../src/core/options.ts'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const README = 'README.md'
const DOCS_PAGES = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`)
/** Every Markdown file the docs test owns: examples and links are checked in all of them. */
const MARKDOWN = [README, ...DOCS_PAGES, 'bench/README.md', 'CONTRIBUTING.md']
const README_MAX_BYTES = 12 * 1024

/** Languages whose blocks are typechecked: TypeScript ones as .ts, JavaScript ones as .mjs (with checkJs, so JSDoc types count). */
const CHECKED_LANGUAGES: Record<string, '.ts' | '.mjs'> = { ts: '.ts', typescript: '.ts', mts: '.ts', js: '.mjs', javascript: '.mjs', mjs: '.mjs' }
const NOT_CHECKED = /^<!--\s*not checked:\s*(.*?)\s*-->$/
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/

function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8')
}

interface CodeBlock {
  file: string
  /** 1-based line of the opening fence. */
  line: number
  lang: string
  code: string
  /** The reason given in `<!-- not checked: … -->`, or null when the block is checked. */
  notChecked: string | null
}

function codeBlocks(file: string): CodeBlock[] {
  const lines = read(file).split('\n')
  const blocks: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!)
    if (!open) continue
    const [, indent = '', fence = ''] = open
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j]!
      if (line.trim().startsWith(fence[0]!.repeat(fence.length)) && line.trim().replace(/[`~]/g, '') === '') break
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line)
    }
    let previous = i - 1
    while (previous >= 0 && lines[previous]!.trim() === '') previous--
    const marker = previous >= 0 ? NOT_CHECKED.exec(lines[previous]!.trim()) : null
    blocks.push({ file, line: i + 1, lang: (open[3] ?? '').toLowerCase(), code: body.join('\n'), notChecked: marker ? marker[1]! : null })
    i = j
  }
  return blocks
}

const ALL_BLOCKS = MARKDOWN.flatMap(codeBlocks)
const EXAMPLES = ALL_BLOCKS.filter((block) => block.lang in CHECKED_LANGUAGES)
const CHECKED = EXAMPLES.filter((block) => block.notChecked === null)

function describeBlock(block: CodeBlock): string {
  return `${block.file}:${block.line} (${block.lang})`
}

/** Outside code: fenced blocks and inline code spans removed, so links and headings are only the real ones. */
function prose(file: string): string[] {
  const lines = read(file).split('\n')
  const out: string[] = []
  let fence: string | null = null
  for (const line of lines) {
    const open = FENCE.exec(line)
    if (fence === null && open) {
      fence = open[2]!
      out.push('')
      continue
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null
      out.push('')
      continue
    }
    out.push(line)
  }
  return out
}

describe('code examples', () => {
  let dir: string
  let program: ts.Program
  const fileOf = new Map<CodeBlock, string>()

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'unplugin-critical-css-docs-'))
    // The examples import the bundlers and @types/node the way a user's project does.
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'junction')
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'docs-examples', private: true, type: 'module' }))
    CHECKED.forEach((block, index) => {
      const name = `${String(index).padStart(2, '0')}-${block.file.replace(/[^A-Za-z0-9]+/g, '_')}-L${block.line}${CHECKED_LANGUAGES[block.lang]}`
      const path = join(dir, name)
      writeFileSync(path, `${block.code}\n`)
      fileOf.set(block, path)
    })
    const { options, errors } = ts.convertCompilerOptionsFromJson(
      {
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        moduleDetection: 'force',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        allowJs: true,
        checkJs: true,
        allowImportingTsExtensions: true,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')],
        paths: {
          'unplugin-critical-css': [join(ROOT, 'src/index.ts')],
          'unplugin-critical-css/*': [join(ROOT, 'src/*.ts')],
        },
      },
      dir,
    )
    expect(errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n'))).toEqual([])
    program = ts.createProgram({ rootNames: [...fileOf.values()], options })
    const setup = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
    expect(setup.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))).toEqual([])
  }, 120_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('finds the examples, and every block marked not checked says why', () => {
    expect(CHECKED.length).toBeGreaterThan(0)
    // The README's Vite and webpack examples are among them.
    expect(CHECKED.filter((block) => block.file === README).map((block) => block.lang)).toEqual(expect.arrayContaining(['ts', 'js']))
    const unexplained = EXAMPLES.filter((block) => block.notChecked === '').map(describeBlock)
    expect(unexplained).toEqual([])
    const skipped = EXAMPLES.filter((block) => block.notChecked !== null)
    if (skipped.length > 0) console.info(`docs examples not checked:\n${skipped.map((block) => `  ${describeBlock(block)}: ${block.notChecked}`).join('\n')}`)
  })

  it('has no code that escapes the check by its language tag', () => {
    // A block that imports the package is an example: it must carry a checked language.
    const untagged = ALL_BLOCKS.filter((block) => !(block.lang in CHECKED_LANGUAGES) && /from\s+['"]unplugin-critical-css/.test(block.code))
    expect(untagged.map(describeBlock)).toEqual([])
  })

  it.each(CHECKED.map((block) => [describeBlock(block), block] as const))('%s typechecks against src/', (_name, block) => {
    const path = fileOf.get(block)!
    const source = program.getSourceFile(path)
    expect(source, `${path} is in the program`).toBeDefined()
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]
    const problems = diagnostics.map((diagnostic) => {
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
      if (diagnostic.start === undefined) return `${block.file}:${block.line}: TS${diagnostic.code}: ${text}`
      const { line, character } = source!.getLineAndCharacterOfPosition(diagnostic.start)
      // Line 1 of the example is the line after the fence.
      return `${block.file}:${block.line + 1 + line}:${character + 1}: TS${diagnostic.code}: ${text}`
    })
    expect(problems).toEqual([])
  })

  it('resolves the package to src/, not to a build', () => {
    // The package's entries, as its exports map names them.
    const exportsMap = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports
    const entries = Object.keys(exportsMap).filter((key) => key !== './package.json').map((key) => (key === '.' ? 'index' : key.slice(2)))
    const imported = new Set(
      CHECKED.flatMap((block) => [...block.code.matchAll(/from\s+['"]unplugin-critical-css(?:\/([a-z]+))?['"]/g)].map((match) => match[1] ?? 'index')),
    )
    for (const entry of imported) expect(entries, `unplugin-critical-css/${entry} is an entry`).toContain(entry)
    for (const entry of imported) expect(program.getSourceFile(join(ROOT, `src/${entry}.ts`)), `src/${entry}.ts`).toBeDefined()
    expect(program.getSourceFiles().filter((file) => file.fileName.includes('/dist/') && file.fileName.includes('unplugin-critical-css'))).toEqual([])
  })
})

/** The option names of the one table in `file` whose header is `option | type | default | …`. */
function optionsTable(file: string): { names: string[]; incomplete: string[] } {
  const lines = prose(file)
  const tables: { names: string[]; incomplete: string[] }[] = []
  for (let i = 0; i < lines.length; i++) {
    const header = cells(lines[i]!)
    if (!header || header[0] !== 'option' || header[1] !== 'type' || header[2] !== 'default' || header.length < 4) continue
    const table = { names: [] as string[], incomplete: [] as string[] }
    for (let j = i + 2; j < lines.length; j++) {
      const row = cells(lines[j]!)
      if (!row) break
      const name = /^`([A-Za-z]+)`$/.exec(row[0] ?? '')?.[1]
      if (!name) {
        table.incomplete.push(`line ${j + 1}: "${row[0]}" is not an option name in backticks`)
        continue
      }
      table.names.push(name)
      if (row.length !== header.length || row.some((cell) => cell === '')) table.incomplete.push(`\`${name}\` (line ${j + 1}): every column needs a value`)
    }
    tables.push(table)
  }
  expect(tables, `${file} has one options table`).toHaveLength(1)
  return tables[0]!
}

/** A Markdown table row's cells (escaped pipes kept inside a cell), or null for a line that is not one. */
function cells(line: string): string[] | null {
  const trimmed = line.trim()
  if (!trimmed.startsWith('|')) return null
  return trimmed
    .slice(1, trimmed.endsWith('|') && !trimmed.endsWith('\\|') ? -1 : undefined)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())
}

describe('options tables', () => {
  const schemaKeys = Object.keys(optionsSchema.shape).sort()

  it.each([README, 'docs/options.md'])('%s lists exactly the options of optionsSchema', (file) => {
    const { names, incomplete } = optionsTable(file)
    expect(incomplete).toEqual([])
    expect(names.filter((name, index) => names.indexOf(name) !== index), 'listed twice').toEqual([])
    expect({ missing: schemaKeys.filter((key) => !names.includes(key)), unknown: names.filter((name) => !schemaKeys.includes(name)) }).toEqual({
      missing: [],
      unknown: [],
    })
  })
})

/** GitHub's heading ids: lower case, punctuation dropped, each space a hyphen, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>()
  const ids = new Set<string>()
  for (const line of prose(file)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    ids.add(count === 0 ? base : `${base}-${count}`)
  }
  return ids
}

interface Link {
  file: string
  line: number
  target: string
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = []
  prose(file).forEach((text, index) => {
    const withoutCode = text.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => (span.includes('](') ? '' : span.replace(/[[\]()]/g, '')))
    for (const match of withoutCode.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue
      links.push({ file, line: index + 1, target })
    }
  })
  return links
}

describe('links', () => {
  it.each(MARKDOWN)('every relative link in %s points at a file (and heading) that exists', (file) => {
    const broken: string[] = []
    for (const link of relativeLinks(file)) {
      const [path = '', anchor] = link.target.split('#', 2)
      const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path))
      const where = `${link.file}:${link.line}: ${link.target}`
      if (!existsSync(target)) {
        broken.push(`${where}: no file ${relative(ROOT, target)}`)
        continue
      }
      if (anchor !== undefined && anchor !== '' && target.endsWith('.md') && statSync(target).isFile() && !anchors(relative(ROOT, target)).has(anchor)) {
        broken.push(`${where}: no heading #${anchor} in ${relative(ROOT, target)}`)
      }
    }
    expect(broken).toEqual([])
  })

  // From node_modules or an unpacked tarball the README's links must still lead somewhere: the pages they reach ship with the package.
  it('every page the README links, and every page those link, ships in the package (npm pack)', () => {
    const packed = new Set((JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path))
    const missing = new Set<string>()
    const seen = new Set<string>()
    const queue = [README]
    while (queue.length > 0) {
      const file = queue.shift()!
      if (seen.has(file)) continue
      seen.add(file)
      if (!packed.has(file)) missing.add(file)
      for (const link of relativeLinks(file)) {
        const path = link.target.split('#', 2)[0]!
        if (path !== '') queue.push(relative(ROOT, resolve(dirname(join(ROOT, file)), decodeURIComponent(path))))
      }
    }
    expect([...missing]).toEqual([])
    expect(seen.size).toBeGreaterThan(DOCS_PAGES.length)
  })

  it('the README links every docs page, and every docs page starts with a link back to it', () => {
    const fromReadme = new Set(relativeLinks(README).map((link) => link.target.split('#')[0]))
    expect(DOCS_PAGES.filter((page) => !fromReadme.has(page))).toEqual([])
    const noBackLink = DOCS_PAGES.filter((page) => !/^\[[^\]]+\]\(\.\.\/README\.md\)\s*$/.test(read(page).split('\n')[0] ?? ''))
    expect(noBackLink).toEqual([])
  })
})

describe('README', () => {
  it(`is at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, README)).size).toBeLessThanOrEqual(README_MAX_BYTES)
  })

  it("holds the newcomer's two commands, the demo and the tests that CI runs", () => {
    const readme = read(README)
    expect(readme).toContain('`npm install && npm run demo`')
    expect(readme).toContain('`npm install && npm test`')
    // CI runs it as the last step, on Node 24 (`on_node 24 bash -c '…'`).
    const lines = read('.ci/run').trimEnd().split('\n')
    expect(lines.at(-1)).toBe("on_node 24 bash -c 'npm install && npm test'")
  })
})
