/**
 * A generated MkDocs documentation site of N pages (issue 47): Debian's `mkdocs` with its
 * default `mkdocs` theme and default plugins (search), `use_directory_urls` as default, the
 * theme's defaults left alone (highlight.js from cdnjs included: that is what a user of the
 * theme gets). Pages sit in nested sections (section / subsection / page), each with headings,
 * paragraphs, lists, a table and fenced code, and links to its neighbours. Content comes from
 * a seeded generator, one seed per page, so page i reads the same at every site size.
 *
 * N counts the .html files the folder command sees: N − 1 Markdown pages, plus the theme's
 * 404.html. The theme puts the whole navigation (every page) in every page, as it does on any
 * real site of this size, so pages grow with N and `mkdocs build` does quadratic work.
 *
 * The built site is kept in `dir` (bench/.out/scale-<N>/ for the bench) with a key over
 * everything the build reads (mkdocs' version, mkdocs.yml, every page), so reruns reuse it.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, posix } from 'node:path'
import { promisify } from 'node:util'
import { ensureSiteGenerators, generatorVersion } from '../../scripts/site-generators.ts'
import { seeded } from '../seeded.ts'

const run = promisify(execFile)

/** The 404 page the theme adds: one of the N .html files, not written by us. */
const THEME_PAGES = 1
const SECTIONS = ['getting-started', 'guides', 'reference', 'configuration', 'deployment', 'integrations', 'api', 'tutorials', 'operations', 'troubleshooting'] as const
const SUBSECTIONS = ['basics', 'advanced', 'examples', 'recipes', 'internals'] as const
const WORDS = (
  'cache build render page site theme plugin option config server client request response token queue worker job browser viewport ' +
  'stylesheet selector rule media query font image script module bundle chunk asset manifest route layout header footer sidebar ' +
  'search index table column row value default setting environment variable command folder file path output input error warning ' +
  'retry timeout limit pace window plan usage report summary deploy release version upgrade migrate install configure enable disable'
).split(' ')
const LANGUAGES = ['python', 'yaml', 'bash', 'javascript', 'json', 'toml'] as const

export interface BuiltSite {
  /** The built site: what the folder command is pointed at. */
  siteDir: string
  /** Every .html file below it, relative, `/`-separated, sorted. */
  htmlFiles: string[]
  /** false when an earlier build with the same key was reused. */
  built: boolean
  /** How long `mkdocs build` took when the site was built (kept with it for reruns). */
  buildMs: number
  /** `mkdocs --version`'s line. */
  mkdocsVersion: string
}

/** The built site's folder, building it first unless `dir` holds a build of the same inputs. */
export async function makeMkdocsSite(dir: string, pages: number): Promise<string> {
  return (await buildMkdocsSite(dir, pages)).siteDir
}

/** As {@link makeMkdocsSite}, with what the bench prints about the build. */
export async function buildMkdocsSite(dir: string, pages: number): Promise<BuiltSite> {
  const mkdocsVersion = requireMkdocs()
  const sources = siteSources(pages)
  const key = createHash('sha256')
    .update(mkdocsVersion)
    .update(JSON.stringify([...sources].sort(([a], [b]) => a.localeCompare(b))))
    .digest('hex')
  const siteDir = join(dir, 'site')
  const stampFile = join(dir, 'build.json')
  const stamp = readStamp(stampFile)
  if (stamp?.key === key && existsSync(join(siteDir, 'index.html'))) {
    return { siteDir, htmlFiles: htmlFilesOf(siteDir), built: false, buildMs: stamp.buildMs, mkdocsVersion }
  }

  rmSync(dir, { recursive: true, force: true })
  const sourceDir = join(dir, 'source')
  for (const [path, text] of sources) {
    mkdirSync(dirname(join(sourceDir, path)), { recursive: true })
    writeFileSync(join(sourceDir, path), text)
  }
  const started = performance.now()
  // --strict: a broken link between generated pages is the generator's bug, not something to measure around.
  await run('mkdocs', ['build', '--quiet', '--strict', '--config-file', join(sourceDir, 'mkdocs.yml'), '--site-dir', siteDir], {
    cwd: sourceDir,
    maxBuffer: 64 * 1024 * 1024,
  })
  const buildMs = performance.now() - started
  const htmlFiles = htmlFilesOf(siteDir)
  if (htmlFiles.length !== pages) throw new Error(`mkdocs built ${htmlFiles.length} .html files for a site of ${pages} pages: the generator's page count is off`)
  writeFileSync(stampFile, `${JSON.stringify({ key, buildMs, mkdocsVersion, pages }, null, 2)}\n`)
  return { siteDir, htmlFiles, built: true, buildMs, mkdocsVersion }
}

/** mkdocs' version line; installs Debian's package first where scripts/site-generators.ts may (root + apt-get). */
function requireMkdocs(): string {
  const version = generatorVersion('mkdocs')
  if (version !== null) return version
  const absent = ensureSiteGenerators().get('mkdocs')
  const after = generatorVersion('mkdocs')
  if (after === null) throw new Error(`bench:scale needs MkDocs to generate its site: ${absent ?? 'mkdocs does not run'}`)
  return after
}

function readStamp(file: string): { key: string; buildMs: number } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { key: string; buildMs: number }
  } catch {
    return null
  }
}

export function htmlFilesOf(siteDir: string): string[] {
  return readdirSync(siteDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.html'))
    .map((entry) => posix.join(posix.relative(siteDir.split('\\').join('/'), entry.parentPath.split('\\').join('/')), entry.name))
    .sort()
}

// ─── the sources ──────────────────────────────────────────────────────────────────────

interface Layout {
  sections: number
  subsections: number
  /** Markdown paths below docs/, in reading order (the nav's order within each folder). */
  paths: string[]
}

/**
 * How N pages nest: up to 10 sections of up to 5 subsections (1,000 pages: 10 × 5, about 19
 * pages each), fewer for small sites so that a 40-page site still nests two levels deep.
 */
export function layoutOf(pages: number): Layout {
  const sections = pages >= 20 ? Math.min(10, Math.max(2, Math.round(pages / 100))) : 1
  const subsections = pages >= 40 ? Math.min(5, Math.max(2, Math.round(pages / (sections * 20)))) : 1
  const leaves = pages - THEME_PAGES - 1 - sections - sections * subsections
  if (leaves < 1) throw new Error(`a scale site needs at least 5 pages, got ${pages}`)
  const folders: string[] = []
  const paths = ['index.md']
  for (let s = 0; s < sections; s++) {
    paths.push(`${SECTIONS[s]}/index.md`)
    for (let u = 0; u < subsections; u++) {
      folders.push(`${SECTIONS[s]}/${SUBSECTIONS[u]}`)
      paths.push(`${SECTIONS[s]}/${SUBSECTIONS[u]}/index.md`)
    }
  }
  // Leaves round-robin over the subsections, each named by its own seed's words and number.
  for (let i = 0; i < leaves; i++) {
    const rand = seeded(0x5ca1e + i)
    paths.push(`${folders[i % folders.length]}/${pick(rand, WORDS)}-${pick(rand, WORDS)}-${i + 1}.md`)
  }
  return { sections, subsections, paths }
}

/** Every file `mkdocs build` reads: mkdocs.yml and docs/**.md, by path. */
function siteSources(pages: number): Map<string, string> {
  const { paths } = layoutOf(pages)
  const files = new Map<string, string>()
  // Nothing but the theme's name and the site's: every other setting is MkDocs' default.
  files.set('mkdocs.yml', 'site_name: Scale Docs\nsite_description: A generated documentation site for bench:scale\ntheme:\n  name: mkdocs\n')
  paths.forEach((path, index) => {
    const previous = paths[index - 1]
    const next = paths[index + 1]
    files.set(`docs/${path}`, pageMarkdown(path, index, previous, next))
  })
  return files
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!
const between = (rand: () => number, low: number, high: number): number => low + Math.floor(rand() * (high - low + 1))
const words = (rand: () => number, count: number): string => Array.from({ length: count }, () => pick(rand, WORDS)).join(' ')
const title = (rand: () => number, count: number): string => words(rand, count).replace(/^\w/, (c) => c.toUpperCase())
const times = (count: number, make: (i: number) => string): string => Array.from({ length: count }, (_, i) => make(i)).join('\n')

/** A link from one page's Markdown to another's, relative, as an author writes it (MkDocs checks it with --strict). */
function linkTo(from: string, to: string): string {
  return posix.relative(posix.dirname(from), to)
}

function sentence(rand: () => number, path: string, neighbours: string[]): string {
  const text = title(rand, between(rand, 6, 16))
  const roll = rand()
  if (roll < 0.15) return `${text} with \`${pick(rand, WORDS)}_${pick(rand, WORDS)}\`.`
  if (roll < 0.25) return `${text} **${words(rand, 2)}**.`
  if (roll < 0.33 && neighbours.length) return `${text}, see [${words(rand, 2)}](${linkTo(path, pick(rand, neighbours))}).`
  return `${text}.`
}

function paragraph(rand: () => number, path: string, neighbours: string[]): string {
  return times(between(rand, 2, 5), () => sentence(rand, path, neighbours)).split('\n').join(' ')
}

function table(rand: () => number): string {
  const columns = between(rand, 3, 5)
  const header = Array.from({ length: columns }, () => title(rand, 1))
  const rows = times(between(rand, 3, 8), () => `| \`${pick(rand, WORDS)}\` | ${Array.from({ length: columns - 1 }, () => words(rand, between(rand, 1, 5))).join(' | ')} |`)
  return `| ${header.join(' | ')} |\n|${' --- |'.repeat(columns)}\n${rows}`
}

function code(rand: () => number): string {
  const language = pick(rand, LANGUAGES)
  const lines = times(between(rand, 4, 14), () => {
    const [a, b] = [pick(rand, WORDS), pick(rand, WORDS)]
    if (language === 'yaml') return `${a}_${b}: ${between(rand, 1, 500)}`
    if (language === 'json') return `  "${a}_${b}": "${words(rand, 2)}",`
    if (language === 'toml') return `${a}_${b} = ${between(rand, 1, 500)}`
    if (language === 'bash') return `${a} --${b} ${words(rand, 2).replace(' ', '-')}`
    if (language === 'python') return `${a}_${b} = ${a}(${b}=${between(rand, 1, 9)})`
    return `const ${a}${b.replace(/^\w/, (c) => c.toUpperCase())} = ${a}('${b}', ${between(rand, 1, 9)})`
  })
  return `\`\`\`${language}\n${lines}\n\`\`\``
}

function list(rand: () => number, ordered: boolean): string {
  return times(between(rand, 3, 7), (i) => `${ordered ? `${i + 1}.` : '-'} ${title(rand, between(rand, 3, 10))}`)
}

/** One page: an h1, an intro, then 3–6 h2 sections of paragraphs, lists, a table, code, some h3s. */
function pageMarkdown(path: string, index: number, previous: string | undefined, next: string | undefined): string {
  const rand = seeded(0xd0c5 + index)
  const neighbours = [previous, next].filter((one): one is string => one !== undefined)
  const blocks = [`# ${title(rand, between(rand, 2, 5))}`, paragraph(rand, path, neighbours), paragraph(rand, path, neighbours)]
  const sections = between(rand, 3, 6)
  for (let s = 0; s < sections; s++) {
    blocks.push(`## ${title(rand, between(rand, 2, 5))}`, paragraph(rand, path, neighbours))
    // The first section always has a table and code, so every page has both; the rest by chance.
    if (s === 0 || rand() < 0.5) blocks.push(table(rand))
    if (rand() < 0.6) blocks.push(list(rand, rand() < 0.4))
    if (s === 0 || rand() < 0.5) blocks.push(code(rand))
    if (rand() < 0.4) blocks.push(`### ${title(rand, between(rand, 2, 4))}`, paragraph(rand, path, neighbours))
    blocks.push(paragraph(rand, path, neighbours))
  }
  return `${blocks.join('\n\n')}\n`
}

// ─── what the bench reads and changes in a built copy ────────────────────────────────

/** `<link href>` and `<script src>` to other hosts, with how many pages reference each (anchors are not loads). */
const EXTERNAL_LOAD = /<(link|script)\b[^>]*?\b(?:href|src)="((?:https?:)?\/\/[^"]+)"/g

export function externalLoads(siteDir: string, files: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const file of files) {
    const seen = new Set<string>()
    for (const match of readFileSync(join(siteDir, file), 'utf8').matchAll(EXTERNAL_LOAD)) seen.add(`<${match[1]}> ${match[2]}`)
    for (const url of seen) counts.set(url, (counts.get(url) ?? 0) + 1)
  }
  return counts
}

/** The page the incremental phase edits: a leaf page in the middle of the site. */
export function pageToEdit(files: readonly string[]): string {
  const leaves = files.filter((file) => file.split('/').length === 4)
  return leaves[Math.floor(leaves.length / 2)] ?? files[Math.floor(files.length / 2)]!
}

/** One page's content changed, as a rebuild after editing its Markdown leaves it: a new paragraph after its first one. */
export function changeOnePage(siteDir: string, file: string): void {
  const path = join(siteDir, file)
  const html = readFileSync(path, 'utf8')
  const main = html.indexOf('role="main"')
  const firstParagraphEnd = html.indexOf('</p>', main)
  if (main < 0 || firstParagraphEnd < 0) throw new Error(`${file} has no paragraph in its main column to change`)
  const at = firstParagraphEnd + '</p>'.length
  writeFileSync(path, `${html.slice(0, at)}\n<p>Changed for bench:scale: one page's content, nothing else.</p>${html.slice(at)}`)
}

/** The theme's stylesheet, which every page links. */
export const THEME_CSS = 'css/base.css'

/** The theme's CSS changed, as a theme override would: a rule that shows above the fold. */
export function changeThemeCss(siteDir: string): void {
  const path = join(siteDir, THEME_CSS)
  writeFileSync(path, `${readFileSync(path, 'utf8')}\nh1 { letter-spacing: .01em; }\n`)
}
