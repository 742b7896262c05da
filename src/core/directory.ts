/**
 * A built folder as the build output: what static-site generators leave behind once the
 * bundler is done (Astro, VitePress, SvelteKit, Eleventy, Docusaurus, Hugo…). Every `.html`
 * below the folder is a page (or the `pages` option), with the plugin's options, cache,
 * report, failure policy and embedded default; the pages are written back all at once. A
 * folder is served below the base the options, the framework or the site URL say, else
 * below the one its pages' links say (base-check.ts), else below `/`.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { inferBase, sitePages, type SitePage } from './base-check.ts'
import { siteAddress } from './site-address.ts'
import { directoryOutput, type BuildOutput } from './build-server.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'
import { stagedFiles, writeFilesAtomic } from './files.ts'
import type { PageFiles } from './run.ts'
import { assertRunnable, resolveDirectoryOptions, type DirectoryOptions, type DirectorySources, type ResolvedDirectoryOptions, type ResolvedOptions } from './options.ts'
import { isHtmlFile } from './pages.ts'
import { projectSheets } from './project-sheets.ts'
import { counted, type BuildLogger, type BuildReport } from './report.ts'
import { createBuildSession } from './session.ts'

export interface DirectoryContext extends DirectorySources {
  /** Where progress, warnings and the summary go. Default: standard error. */
  logger?: BuildLogger
  /** Project root: `cache.dir` and `report` are relative to it. Default: the working directory. */
  root?: string
  signal?: AbortSignal
}

/** What `processResolvedDirectory` takes beyond `processDirectory`'s context. */
export interface ResolvedDirectoryContext extends Omit<DirectoryContext, keyof DirectorySources> {
  /**
   * A folder without a page fails instead of warning. The folder command asks for it: a wrong
   * output folder in CI must not pass as done. An integration does not: a framework's server
   * build may prerender no page at all.
   */
  requirePages?: boolean
  /**
   * A folder without a page is said nothing of: the build's pages are rendered per request,
   * and their server routes get critical CSS instead (an Astro server build that prerenders none).
   */
  pagesOptional?: boolean
  /**
   * The folder is a framework project's build: the project's own `.css` files below `root`
   * hold the `critical-css:` markers its minifier stripped from the folder's (project-sheets.ts).
   */
  projectSheets?: boolean
}

export interface DirectoryResult {
  report: BuildReport
  /** Pages written with critical CSS, relative to the folder (`/` separators). */
  written: string[]
}

/** Dependencies and dot folders are not the site's pages. */
function skipped(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.')
}

async function htmlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const files: string[] = []
  for (const entry of entries) {
    if (!entry.isFile() || !isHtmlFile(entry.name)) continue
    const file = relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/')
    if (!file.split('/').some(skipped)) files.push(file)
  }
  return files.sort()
}

/** Progress and the summary on standard error, warnings marked as such. */
export const stderrLogger: BuildLogger = {
  info: (message) => process.stderr.write(`${message}\n`),
  warn: (message) => process.stderr.write(`warning: ${message}\n`),
}

/**
 * The base a folder is served below when nothing said it: the one below which the pages'
 * links find every stylesheet, when the default `/` lacks some and exactly one base serves
 * them all (a site built for `https://user.github.io/fieldnotes/`). Checked against the files,
 * that is a finding, not a guess: used with a warning, or with `strict` (no silent decisions)
 * named in a ConfigurationError before anything runs. Otherwise the default stands, and the
 * pages that lack their sheets fail one by one (run.ts).
 */
async function linkedBase(pages: readonly SitePage[], base: string, output: BuildOutput, options: ResolvedOptions, logger: BuildLogger): Promise<string> {
  const { bases, affected, linking } = await inferBase(pages, base, output)
  if (bases.length !== 1) return base
  const [found] = bases as [string]
  const { words } = options
  const where = `the pages link their stylesheets below ${found} (${affected} of ${counted(linking, 'page')})`
  if (options.strict) throw new ConfigurationError(`${PLUGIN_NAME}: ${where}, and this folder is the site served there: pass ${words.set('base', found)}. With ${words.name('strict')} on, the base is not inferred.`)
  logger.warn(`critical CSS: ${where}; processed as ${words.set('base', found)}; pass it to say so.`)
  return found
}

/**
 * Where the site is deployed when nothing said it and its theme links its stylesheets by
 * absolute URL (Hugo's `absURL`): as the pages say it (site-address.ts), so embedded mode
 * serves those URLs from the folder. Said in one line, since it changes what is rendered;
 * pages that disagree are left alone, with the flag that settles it.
 */
function linkedSite(pages: readonly SitePage[], options: ResolvedOptions, logger: BuildLogger): URL | null {
  if (options.siteUrl !== null || options.service !== null) return null
  const found = siteAddress(pages)
  const { words } = options
  if (found.kind === 'unsure') {
    logger.info(`critical CSS: the pages link stylesheets by absolute URL, but ${found.reason}, so those URLs are not served from this folder; pass ${words.set('siteUrl', 'URL')} to serve them.`)
    return null
  }
  if (found.kind === 'none') return null
  logger.info(
    `critical CSS: the pages say they are deployed at ${found.siteUrl.href} (${found.pages} of ${counted(found.of, 'page')}, by rel=canonical or og:url) and link stylesheets there, so its URLs are served from this folder; pass ${words.set('siteUrl', found.siteUrl.href)} to say so.`,
  )
  return found.siteUrl
}

/**
 * Gives every page in `dir` its critical CSS. Nothing is written unless the run finishes:
 * a configuration error, a strict failure or an interrupt (`signal`) leaves every file as it
 * was; each new page is written to a temp file beside it as it is made, and they are all
 * renamed once every page is done. A second run over its own output changes nothing.
 */
export async function processDirectory(dir: string, options: DirectoryOptions = {}, context: DirectoryContext = {}): Promise<DirectoryResult> {
  return processResolvedDirectory(dir, resolveDirectoryOptions(options, context), { ...context, projectSheets: context.framework !== undefined })
}

/** `dir`, resolved, when it is a folder; else a ConfigurationError saying what it is and asking for `what`. */
export async function existingFolder(dir: string, what: string): Promise<string> {
  const folder = resolve(dir)
  // Only a path that is not there "does not exist": a folder we may not read says so itself.
  const found = await stat(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null
    throw error
  })
  const wrong = found === null ? 'does not exist' : found.isDirectory() ? null : 'is not a directory'
  if (wrong !== null) throw new ConfigurationError(`${PLUGIN_NAME}: ${folder} ${wrong}: give ${what}.`)
  return folder
}

/** `processDirectory` with options resolved already: an integration or the CLI checks them before the site is built. */
export async function processResolvedDirectory(dir: string, { options: resolved, base: given, baseSaid }: ResolvedDirectoryOptions, context: ResolvedDirectoryContext = {}): Promise<DirectoryResult> {
  if (resolved.enabled === false) return { report: { service: null, startedAt: new Date().toISOString(), ms: 0, pages: [] }, written: [] }
  assertRunnable(resolved)
  const folder = await existingFolder(dir, 'the folder your site was built into')
  const files = await htmlFiles(folder)
  if (files.length === 0 && context.requirePages) {
    throw new ConfigurationError(`${PLUGIN_NAME}: there is no .html file below ${folder} (dot folders and node_modules are skipped): give the folder your site was built into.`)
  }
  // Read when needed, not held for the run: a site's pages are many, and a run holds those in flight.
  const pageFiles: PageFiles = { files, read: (file) => readFile(join(folder, file)) }
  const logger = context.logger ?? stderrLogger
  const root = resolve(context.root ?? process.cwd())
  // A framework's project: its own stylesheets hold the markers its minifier stripped from the folder's.
  const output: BuildOutput = context.projectSheets ? { ...directoryOutput(folder), sourceSheets: () => projectSheets(root, [folder]) } : directoryOutput(folder)
  // What every page's links say of where the site is and below which base, read one page at a time.
  const pages = await sitePages(files, pageFiles.read)
  const site = linkedSite(pages, resolved, logger)
  const options = site === null ? resolved : { ...resolved, siteUrl: site }
  // A site deployed below a path is served below it, as a site URL given with a path is.
  const sitePath = site !== null && site.pathname !== '/' && !baseSaid ? site.pathname : null
  const session = createBuildSession(options)
  // Each new page is written beside its file as it is made, and put in place when every page is done.
  const staged = stagedFiles()
  const written: string[] = []
  try {
    // A run that will likely render starts its browser now, while the pages are checked and looked up.
    if (files.length > 0) session.begin(root)
    const base = sitePath ?? (baseSaid ? given : await linkedBase(pages, given, output, options, logger))
    const { assets, report } = await session.run({
      pages: pageFiles,
      base,
      root,
      logger,
      output,
      noPagesMessage: context.pagesOptional ? null : `critical CSS: there is no .html file below ${folder}, so no page got critical CSS.`,
      stage: async (file, text) => {
        await staged.stage(join(folder, file), text)
        written.push(file)
      },
      ...(context.signal ? { signal: context.signal } : {}),
    })
    context.signal?.throwIfAborted()
    // What the pages load first: in place before them, so no page names a missing file.
    await writeFilesAtomic(new Map([...assets].map(([file, text]) => [join(folder, file), text])))
    await staged.commit()
    return { report, written: written.sort() }
  } finally {
    // Whatever was begun stops with the run, a base that stops it before rendering included.
    await session.release()
    await staged.discard()
  }
}
