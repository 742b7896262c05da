/**
 * The plugin: one unplugin core whose adapters find the emitted HTML and hand it to the
 * plugin instance's build session (`core/session.ts`). Options are checked when the plugin
 * is created, so a bad one fails at config time.
 */
import { createUnplugin, type UnpluginFactory, type UnpluginInstance } from 'unplugin'
import { setupEsbuild } from './adapters/esbuild.ts'
import { rollupHooks, viteHooks } from './adapters/rollup.ts'
import { applyWebpackLike } from './adapters/webpack.ts'
import { PLUGIN_NAME } from './core/errors.ts'
import { resolveOptions, type Options } from './core/options.ts'
import { createBuildSession } from './core/session.ts'

export const unpluginFactory: UnpluginFactory<Options | undefined> = (rawOptions) => {
  const session = createBuildSession(resolveOptions(rawOptions))
  return {
    name: PLUGIN_NAME,
    enforce: 'post',
    vite: viteHooks(session),
    rollup: rollupHooks(session),
    rolldown: rollupHooks(session),
    webpack: (compiler) => applyWebpackLike(compiler, session),
    rspack: (compiler) => applyWebpackLike(compiler, session),
    esbuild: { setup: (build) => setupEsbuild(build, session) },
  }
}

export const unplugin: UnpluginInstance<Options | undefined, false> = createUnplugin(unpluginFactory)
export default unplugin

export { inlineCriticalCss } from './html/inline.ts'
export { LOADER_FILE, LOADER_SCRIPT } from './html/loader.ts'
export type { InlineEdit, InlineOptions, InlineResult } from './html/inline.ts'
export type { PreloadStrategy } from './html/strategies.ts'
export { resolveOptions } from './core/options.ts'
export { processDirectory } from './core/directory.ts'
export type { DirectoryContext, DirectoryResult } from './core/directory.ts'
export type { CacheOption, DirectoryOptions, FrameworkSite, Options, PageOption, ResolvedOptions } from './core/options.ts'
export type { BuildReport, PageOutcome, PageReport, PageSource } from './core/report.ts'
export { ConfigurationError, StrictModeError } from './core/errors.ts'
export type { Job, JobData, JobError, JobStatus, Plan, Selection, Usage, Viewport } from './contract/api-contract.ts'
export type { CreateClientOptions, CriticalCssClient, RateLimitOption } from './client/types.ts'
