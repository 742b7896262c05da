/**
 * Vite, Rollup and Rolldown: the HTML is in the bundle once the HTML plugins' own
 * `generateBundle` ran (Vite's build-html, @rollup/plugin-html); ours edits it there, in
 * memory, before it is written and before writeBundle-time post-processing sees it.
 */
import type { Plugin as VitePlugin, ResolvedConfig } from 'vite'
import { sheetsNamedByScripts, sourceSheetsOf, type BuildOutput } from '../core/build-server.ts'
import { pagesInMemory } from '../core/run.ts'
import { frameworkOf, type Framework } from '../core/frameworks.ts'
import { configEmitsHtml, isHtmlFile } from '../core/pages.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import type { BuildLogger, BuildReport } from '../core/report.ts'
import type { BuildSession } from '../core/session.ts'

interface BundleEntry {
  type: 'asset' | 'chunk'
  fileName: string
  source?: string | Uint8Array
  code?: string
  /** A chunk: loaded by a dynamic `import()`, and the chunks it imports statically. */
  isDynamicEntry?: boolean
  imports?: readonly string[]
  /** Vite's: the stylesheets a chunk needs, which its preload helper links when the chunk is loaded lazily. */
  viteMetadata?: { importedCss: ReadonlySet<string> }
}

/**
 * The bundle's stylesheets a lazily loaded chunk needs: by Vite's metadata for every chunk a
 * dynamic import reaches (the chunk and what it imports statically); else by name in the code.
 */
async function lazySheets(bundle: Record<string, BundleEntry>, read: BuildOutput['read']): Promise<Set<string>> {
  const sheets = await sheetsNamedByScripts(Object.keys(bundle), read)
  const reached = new Set<string>()
  const reach = (file: string): void => {
    const entry = bundle[file]
    if (entry?.type !== 'chunk' || reached.has(file)) return
    reached.add(file)
    for (const sheet of entry.viteMetadata?.importedCss ?? []) sheets.add(sheet)
    for (const imported of entry.imports ?? []) reach(imported)
  }
  for (const entry of Object.values(bundle)) if (entry.type === 'chunk' && entry.isDynamicEntry) reach(entry.fileName)
  return sheets
}

interface Target {
  session: BuildSession
  base: string
  root: string
  logger: BuildLogger
  /** Served after the bundle in embedded mode (Vite's public dir). */
  staticDirs?: string[]
  /** Named when the bundle has no HTML page (Vite only: told by its plugins). */
  framework?: Framework | null
  /** Adds a file to the bundle (`this.emitFile`). */
  emit(fileName: string, source: string): void
  /** Every module of the build (`this.getModuleIds()`): its stylesheets hold the markers the minifier strips. */
  moduleIds(): Iterable<string>
}

/** A Rollup-like `input` option as its list of entries (a string, an array, or named entries). */
function entriesOf(input: unknown): unknown[] {
  if (Array.isArray(input)) return input
  if (typeof input === 'object' && input !== null) return Object.values(input)
  return [input]
}

/** A plugin's name (Rolldown's parallel plugins have none). */
function pluginName(plugin: unknown): string {
  return typeof plugin === 'object' && plugin !== null && 'name' in plugin && typeof plugin.name === 'string' ? plugin.name : ''
}

/** Runs the build's pages and puts the new HTML into the bundle; nothing is put back if it throws. */
async function processBundle(bundle: Record<string, BundleEntry>, target: Target): Promise<BuildReport> {
  const html = new Map<string, string | Uint8Array>()
  for (const entry of Object.values(bundle)) {
    if (entry.type === 'asset' && entry.source !== undefined && isHtmlFile(entry.fileName)) html.set(entry.fileName, entry.source)
  }
  // The bundle as it is now: the HTML before ours edits it, the CSS and chunks as they will be written.
  const read = async (file: string): Promise<string | Uint8Array | null> => {
    const entry = bundle[file]
    return (entry?.type === 'chunk' ? entry.code : entry?.source) ?? null
  }
  const output: BuildOutput = {
    read,
    files: async () => Object.keys(bundle),
    lazySheets: () => lazySheets(bundle, read),
    sourceSheets: async () => sourceSheetsOf(target.moduleIds()),
    staticDirs: target.staticDirs ?? [],
  }
  const { session, moduleIds: _moduleIds, ...build } = target
  const { updated, assets, report } = await session.run({ ...build, pages: pagesInMemory(html), output })
  for (const [file, text] of assets) if (!(file in bundle)) target.emit(file, text)
  for (const [file, text] of updated) bundle[file]!.source = text
  return report
}

/** What Rolldown's PLUGIN_TIMINGS log looks like to a plugin (its wording changes between versions; its code does not). */
interface BundlerLog {
  code?: string
  message: string
}

/**
 * Rolldown warns `[PLUGIN_TIMINGS]` when plugins take most of a build of 3 s or more, and a
 * cold build's render is in our generateBundle: one line says so beside the warning, which
 * stays (it may name other plugins too).
 */
function timingsNote(log: BundlerLog, report: BuildReport | null): string | null {
  if (log.code !== 'PLUGIN_TIMINGS' || !log.message.includes(PLUGIN_NAME) || report === null) return null
  const rendered = report.pages.filter((page) => page.source === 'embedded' || page.source === 'service').length
  const what = `rendering ${rendered} page${rendered === 1 ? '' : 's'} in a browser took ${(report.ms / 1000).toFixed(1)} s of it`
  return `critical CSS: the [PLUGIN_TIMINGS] warning counts this plugin's generateBundle because ${what}. That is expected on a cold build; pages whose result is cached cost nothing next time. See "PLUGIN_TIMINGS" in node_modules/unplugin-critical-css/docs/troubleshooting.md.`
}

export function viteHooks(session: BuildSession): Partial<VitePlugin> {
  let config: ResolvedConfig | null = null
  let enabled = false
  let framework: Framework | null = null
  let report: BuildReport | null = null
  const client = (environment: { config: { consumer: string } } | undefined): boolean => !environment || environment.config.consumer === 'client'
  return {
    // Dev servers serve HTML as it is requested: there is no bundle to finish.
    apply: 'build',
    buildStart(options) {
      // A cold build's browser launches while the bundler works, when its entries are pages
      // (Vite's own HTML plugin is in every build: only the entries say); a framework's pages come later.
      if (enabled && config !== null && client(this.environment) && framework === null && configEmitsHtml({ entries: entriesOf(options.input), plugins: [] })) session.begin(config.root)
    },
    buildEnd(error) {
      if (error && client(this.environment)) void session.release()
    },
    async closeBundle() {
      if (client(this.environment)) await session.release()
    },
    onLog(_level, log) {
      const note = timingsNote(log, report)
      if (note !== null) config?.logger.info(note)
    },
    configResolved(resolved) {
      config = resolved
      // isProduction follows NODE_ENV, which test runners set to 'test': the mode says it too.
      const production = resolved.isProduction || resolved.mode === 'production'
      // A library build (`build.lib`) emits modules, never an HTML page: like an SSR build, it starts and says nothing.
      enabled = session.enabled({ production, watch: Boolean(resolved.build.watch), pageless: Boolean(resolved.build.ssr) || Boolean(resolved.build.lib) })
      framework = frameworkOf(resolved.plugins.map((plugin) => plugin.name))
    },
    generateBundle: {
      // Not order 'post': Vite's own post-build plugins (import analysis, manifest) run after
      // this one, and compression plugins hook into them; the HTML must be final by then.
      async handler(_output, bundle) {
        if (!enabled || config === null) return
        if (!client(this.environment)) return
        const logger = config.logger
        report = await processBundle(bundle as Record<string, BundleEntry>, {
          session,
          base: config.base,
          root: config.root,
          // Vite copies the public dir when it writes the bundle, after this hook.
          staticDirs: config.publicDir && config.build.copyPublicDir ? [config.publicDir] : [],
          framework,
          logger: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
          emit: (fileName, source) => this.emitFile({ type: 'asset', fileName, source }),
          moduleIds: () => this.getModuleIds(),
        })
      },
    },
  }
}

/** What this adapter uses of a Rollup or Rolldown plugin context: both have it. */
interface RollupLikeContext {
  meta: { watchMode: boolean }
  info(message: string): void
  warn(message: string): void
  emitFile(file: { type: 'asset'; fileName: string; source: string }): string
  getModuleIds(): IterableIterator<string>
}

/** What this adapter reads of the build's input options. */
interface RollupLikeInput {
  input?: unknown
  plugins: readonly unknown[]
}

export interface RollupLikeHooks {
  onLog(this: Pick<RollupLikeContext, 'info'>, level: string, log: BundlerLog): void
  buildStart(this: RollupLikeContext, options: RollupLikeInput): void
  buildEnd(this: RollupLikeContext, error?: Error): void
  closeBundle(this: RollupLikeContext): Promise<void>
  generateBundle: {
    order: 'post'
    handler(this: RollupLikeContext, output: unknown, bundle: Record<string, BundleEntry>): Promise<void>
  }
}

/** Rollup and Rolldown have no production flag: every build but a watch rebuild is one. */
export function rollupHooks(session: BuildSession): RollupLikeHooks {
  let enabled = false
  let report: BuildReport | null = null
  return {
    onLog(_level, log) {
      const note = timingsNote(log, report)
      if (note !== null) this.info(note)
    },
    buildStart(options) {
      enabled = session.enabled({ production: true, watch: this.meta.watchMode, pageless: false })
      // A cold build's browser launches while the bundler works, when the configuration says it writes pages.
      if (enabled && configEmitsHtml({ entries: entriesOf(options.input), plugins: options.plugins.map(pluginName) })) session.begin(process.cwd())
    },
    buildEnd(error) {
      if (error) void session.release()
    },
    async closeBundle() {
      await session.release()
    },
    generateBundle: {
      // After @rollup/plugin-html and every other generateBundle: the HTML is final.
      order: 'post',
      async handler(_output, bundle) {
        if (!enabled) return
        report = await processBundle(bundle, {
          session,
          base: '/',
          root: process.cwd(),
          logger: { info: (message) => this.info(message), warn: (message) => this.warn(message) },
          emit: (fileName, source) => this.emitFile({ type: 'asset', fileName, source }),
          moduleIds: () => this.getModuleIds(),
        })
      },
    },
  }
}
