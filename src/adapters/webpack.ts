/**
 * webpack and Rspack: the HTML assets exist once html-webpack-plugin / HtmlRspackPlugin
 * emitted them (processAssets stage OPTIMIZE_INLINE); ours edits them right after, before
 * OPTIMIZE_TRANSFER, where compression and similar plugins read the final bytes.
 */
import { sourceSheetsOf } from '../core/build-server.ts'
import { pagesInMemory } from '../core/run.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import { configEmitsHtml, isHtmlFile } from '../core/pages.ts'
import type { BuildSession } from '../core/session.ts'

const NAME = PLUGIN_NAME
/** After the HTML plugins (OPTIMIZE_INLINE, 700), well before SUMMARIZE (1000) and OPTIMIZE_TRANSFER (3000). */
const STAGE_AFTER_HTML = 100

/** The part of webpack's and Rspack's compiler this adapter uses; both have it. */
interface CompilerLike {
  context: string
  watchMode?: boolean
  options: { mode?: string | undefined; target?: unknown; output: { library?: unknown }; plugins: readonly unknown[] }
  webpack: {
    Compilation: { PROCESS_ASSETS_STAGE_OPTIMIZE_INLINE: number }
    WebpackError: new (message: string) => Error
    sources: { RawSource: new (source: string) => unknown }
  }
  hooks: {
    thisCompilation: { tap(name: string, callback: (compilation: CompilationLike) => void): void }
    done: { tapPromise(name: string, callback: () => Promise<void>): void }
    failed: { tap(name: string, callback: () => void): void }
  }
  getInfrastructureLogger(name: string): { info(...args: unknown[]): void }
}

interface CompilationLike {
  outputOptions: { publicPath?: unknown }
  errors: Error[]
  warnings: Error[]
  getAssets(): readonly { name: string; source: { buffer(): Uint8Array } }[]
  getAsset(name: string): { source: { buffer(): Uint8Array } } | undefined
  updateAsset(file: string, source: never): void
  emitAsset(file: string, source: never, info?: { minimized?: boolean; immutable?: boolean }): void
  getLogger(name: string): { info(...args: unknown[]): void }
  /** webpack's and Rspack's chunks: each one's files, and whether a page may load it from its start. */
  chunks: Iterable<{ files: Iterable<string>; canBeInitial(): boolean }>
  /** The modules the build read: a file's has its path (and query) as `resource`. */
  modules: Iterable<object>
  hooks: {
    processAssets: { tapPromise(options: { name: string; stage: number }, callback: () => Promise<void>): void }
  }
}

/** Server bundles have no page to paint. */
function isServerTarget(target: unknown): boolean {
  const targets = Array.isArray(target) ? target : [target]
  return targets.some((value) => typeof value === 'string' && /^(?:async-)?node|^electron-main/.test(value))
}

/** A library (`output.library`) is modules for other builds, never a page. */
function isLibrary(compiler: CompilerLike): boolean {
  return Boolean(compiler.options.output.library)
}

/** The configuration's plugins by their class names (HtmlWebpackPlugin, HtmlRspackPlugin). */
function pluginNames(compiler: CompilerLike): string[] {
  return compiler.options.plugins.flatMap((plugin) => (typeof plugin === 'object' && plugin !== null ? [plugin.constructor.name] : []))
}

export function applyWebpackLike(compiler: CompilerLike, session: BuildSession): void {
  const { Compilation, WebpackError, sources } = compiler.webpack
  // What the build began that no run released (a failed compilation, nothing rendered) stops with the build.
  compiler.hooks.done.tapPromise(NAME, () => session.release())
  compiler.hooks.failed.tap(NAME, () => void session.release())
  // Options defaults (mode) and watch mode are only known once a compilation starts.
  compiler.hooks.thisCompilation.tap(NAME, (compilation) => {
    try {
      const production = (compiler.options.mode ?? 'production') === 'production'
      const pageless = isServerTarget(compiler.options.target) || isLibrary(compiler)
      if (!session.enabled({ production, watch: Boolean(compiler.watchMode), pageless })) return
      // A cold build's browser launches while webpack compiles, when an HTML plugin says it writes pages.
      if (configEmitsHtml({ entries: [], plugins: pluginNames(compiler) })) session.begin(compiler.context)
    } catch (error) {
      compilation.errors.push(new WebpackError((error as Error).message))
      return
    }
    compilation.hooks.processAssets.tapPromise(
      { name: NAME, stage: Compilation.PROCESS_ASSETS_STAGE_OPTIMIZE_INLINE + STAGE_AFTER_HTML },
      async () => {
        // A build that already failed would spend requests (and quota) on pages nobody deploys.
        if (compilation.errors.length > 0) return
        const html = new Map<string, Uint8Array>()
        for (const asset of compilation.getAssets()) {
          if (isHtmlFile(asset.name)) html.set(asset.name, asset.source.buffer())
        }
        const publicPath = compilation.outputOptions.publicPath
        const logger = compilation.getLogger(NAME)
        try {
          const { updated, assets } = await session.run({
            pages: pagesInMemory(html),
            base: typeof publicPath === 'string' ? publicPath : '/',
            root: compiler.context,
            // Every asset as the compilation holds it now (the HTML before ours edits it).
            output: {
              read: async (file) => compilation.getAsset(file)?.source.buffer() ?? null,
              files: async () => compilation.getAssets().map((asset) => asset.name),
              // An async chunk's CSS is linked by the runtime when the chunk loads; an initial chunk's never is (it counts as loaded).
              lazySheets: async () => new Set([...compilation.chunks].filter((chunk) => !chunk.canBeInitial()).flatMap((chunk) => [...chunk.files].filter((file) => file.endsWith('.css')))),
              sourceSheets: async () => sourceSheetsOf([...compilation.modules].flatMap((module) => ('resource' in module && typeof module.resource === 'string' ? [module.resource] : []))),
            },
            logger: {
              info: (message) => logger.info(message),
              warn: (message) => compilation.warnings.push(new WebpackError(message)),
              // The compilation's log is printed with the stats, after the build: progress goes out now.
              progress: (message) => compiler.getInfrastructureLogger(NAME).info(message),
            },
          })
          // Content-hashed, and small already: minimizers leave it as its name says it is.
          for (const [file, text] of assets) if (!compilation.getAsset(file)) compilation.emitAsset(file, new sources.RawSource(text) as never, { minimized: true, immutable: true })
          for (const [file, text] of updated) compilation.updateAsset(file, new sources.RawSource(text) as never)
        } catch (error) {
          compilation.errors.push(new WebpackError((error as Error).message))
        }
      },
    )
  })
}
