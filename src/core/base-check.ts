/**
 * A missing or wrong base, found instead of suffered. A site built to be served below
 * `/fieldnotes/` links `/fieldnotes/css/main.css`; served below `/`, the build server answers
 * 404, the browser makes no sheet of it, and the page "has no above-the-fold CSS". The build's
 * files say what is wrong before anything renders: the sheets a page links that they lack,
 * and the one base, if any, below which every page's sheets are there. No server runs and
 * no browser starts; each path is looked up once per base tried.
 */
import { CriticalCssError } from '../client/errors.ts'
import { detached } from '../shared/detached.ts'
import { declaredAddress, stylesheetHrefs } from '../html/scan.ts'
import { buildFileFinder, type BuildOutput, type FileFinder } from './build-server.ts'
import { sheetUrls } from './build-sheets.ts'
import type { OptionWords } from './options.ts'
import { pagesPrefix, planPages } from './pages.ts'

/** Where pages are resolved: no server runs, so any origin does. A sheet on another origin (a CDN) is not the build's to have. */
const ORIGIN = 'http://build.invalid'
/** Files {@link sitePages} reads at once. */
const READS_AT_ONCE = 8

/** A page as the check sees it. */
export interface SitePage {
  /** Its URL path below the base (`posts/a/`, `about.html`, `` for the home page): what stays when the base changes. */
  rest: string
  /** Its file, relative to the output directory. */
  file: string
  /** Its stylesheet links' hrefs, as written. */
  hrefs: string[]
  /** Where it says it is deployed (`<link rel=canonical>`, `og:url`); null when it does not. */
  declared: string | null
}

/** What a page's HTML says of where the site is, kept without the page (copied out of it: see `detached`). */
export function sitePageOf(rest: string, file: string, html: string): SitePage {
  const declared = declaredAddress(html)
  return { rest, file, hrefs: stylesheetHrefs(html).map(detached), declared: declared === null ? null : detached(declared) }
}

/** What the build's files say of where its pages' stylesheets are. */
export interface BaseFinding {
  /** Pages that link stylesheets on their own origin. */
  linking: number
  /** Of those, the pages with a sheet the build lacks at the base. */
  affected: number
  /** The paths the build lacks at the base, as the pages link them (first seen first). */
  missing: string[]
  /**
   * The bases below which every page's own sheets are all there, shortest first: the pages'
   * base when there is exactly one. Empty when nothing is missing, or no base serves it all.
   */
  bases: string[]
}

/**
 * What each HTML file says of where the site is (its stylesheet links, the address it names),
 * read a few files at a time and kept without the page: a folder's pages are many, and the run
 * reads each again when it needs it. A file that is not UTF-8 is left out.
 */
export async function sitePages(files: readonly string[], read: (file: string) => Promise<string | Uint8Array>): Promise<SitePage[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  // The files' URLs below `/`: the one rule that turns a file into its page's path (pages.ts).
  const planned = planPages(null, files, { siteUrl: new URL(ORIGIN), base: '/' })
  const found: (SitePage | null)[] = new Array<SitePage | null>(planned.length).fill(null)
  let next = 0
  // One file at a time, a read's wait was most of the time: a few overlap, each page is dropped once read.
  const reader = async (): Promise<void> => {
    for (let index = next++; index < planned.length; index = next++) {
      const page = planned[index]!
      const content = await read(page.file)
      let html: string
      try {
        html = typeof content === 'string' ? content : decoder.decode(content)
      } catch {
        continue
      }
      found[index] = sitePageOf(new URL(page.url).pathname.slice(1), page.file, html)
    }
  }
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, planned.length) }, reader))
  return found.filter((page) => page !== null)
}

/** The directories a path is below, outermost first: `/a/b/c.css` is below `/`, `/a/` and `/a/b/`. */
function leadingPrefixes(pathname: string): string[] {
  const segments = pathname.split('/').slice(1, -1)
  return ['/', ...segments.map((_, index) => `/${segments.slice(0, index + 1).join('/')}/`)]
}

/**
 * The check over one build's files (`output`), remembering what it looked up across calls:
 * embedded mode asks it page by page, the folder command once for every page.
 */
export function baseCheck(output: BuildOutput): (pages: readonly SitePage[], base: string) => Promise<BaseFinding> {
  const finders = new Map<string, FileFinder>()
  const looked = new Map<string, Promise<boolean>>()
  const has = (prefix: string, url: URL): Promise<boolean> => {
    const key = `${prefix}\u0000${url.pathname}`
    let found = looked.get(key)
    if (found === undefined) {
      let find = finders.get(prefix)
      if (find === undefined) finders.set(prefix, (find = buildFileFinder(output, prefix)))
      found = find(url.pathname).then((file) => file !== null)
      looked.set(key, found)
    }
    return found
  }
  return async (pages, base) => {
    const prefix = pagesPrefix(base, null)
    // A page's own sheets as linked from where it is served below `at`: a relative href moves with the base, a root one does not.
    const ownAt = (page: SitePage, at: string): URL[] => sheetUrls(page.hrefs, new URL(`${at}${page.rest}`, ORIGIN).href).filter((url) => url.origin === ORIGIN)
    const missing = new Map<string, URL>()
    let linking = 0
    let affected = 0
    for (const page of pages) {
      const own = ownAt(page, prefix)
      if (own.length === 0) continue
      linking += 1
      const found = await Promise.all(own.map((url) => has(prefix, url)))
      if (found.every(Boolean)) continue
      affected += 1
      own.forEach((url, index) => {
        if (!found[index]) missing.set(`${url.pathname}${url.search}`, url)
      })
    }
    if (missing.size === 0) return { linking, affected, missing: [], bases: [] }
    const candidates = [...new Set([...missing.values()].flatMap((url) => leadingPrefixes(url.pathname)))].filter((candidate) => candidate !== prefix)
    const bases: string[] = []
    for (const candidate of candidates.sort((a, b) => a.length - b.length || (a < b ? -1 : 1))) {
      // The base serves every sheet it moves to, and loses none that is there now.
      let serves = true
      for (const page of pages) {
        const own = ownAt(page, candidate)
        if (!(await Promise.all(own.map((url) => has(candidate, url)))).every(Boolean)) {
          serves = false
          break
        }
      }
      if (serves) bases.push(candidate)
    }
    return { linking, affected, missing: [...missing.keys()], bases }
  }
}

/** Where `pages` link their stylesheets, from the build's files alone (`base`: the one they are served below now). */
export function inferBase(pages: readonly SitePage[], base: string, output: BuildOutput): Promise<BaseFinding> {
  return baseCheck(output)(pages, base)
}

/** `` `/fieldnotes/css/main.css` and 1 more are not in the build output (the build server answered 404) ``. */
export function notInBuild(paths: readonly string[]): string {
  const named = paths.length === 1 ? `\`${paths[0]}\` is` : `\`${paths[0]}\` and ${paths.length - 1} more are`
  return `${named} not in the build output (the build server answered 404)`
}

/**
 * `` `/fieldnotes/css/main.css` and 1 more are not in the build output (…); they resolve with `--base /fieldnotes/` ``:
 * what is missing, and the bases that serve it (`bases`: see `BaseFinding`).
 */
export function missingSheetsMessage(paths: readonly string[], bases: readonly string[], words: OptionWords): string {
  const one = paths.length === 1
  const missing = notInBuild(paths)
  if (bases.length === 0) return `${missing}, and no ${words.name('base')} serves ${one ? 'it' : 'them'}: the page links ${one ? 'a file' : 'files'} the build does not have`
  const options = bases.map((base) => words.set('base', base))
  const resolve = one ? 'it resolves' : 'they resolve'
  if (options.length === 1) return `${missing}; ${resolve} with ${options[0]}`
  return `${missing}; ${resolve} with ${options.slice(0, -1).join(', ')} or ${options.at(-1)!}: give the one the site is served below`
}

/** A page whose own stylesheets the build lacks, every one: rendered, it would get no critical CSS, and its first paint would be unstyled. */
export class MissingStylesheetsError extends CriticalCssError {
  override name = 'MissingStylesheetsError'
  /** The paths the build lacks, as the page links them. */
  readonly paths: readonly string[]
  /** The bases that would serve them (see `BaseFinding`). */
  readonly bases: readonly string[]
  constructor(paths: readonly string[], bases: readonly string[], words: OptionWords) {
    super(missingSheetsMessage(paths, bases, words), { status: null, code: 'missing_stylesheets' })
    this.paths = paths
    this.bases = bases
  }
}
