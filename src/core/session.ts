/**
 * One plugin instance's builds, from start to release: the session picks the mode once
 * (a configured service, else embedded), begins it as the bundler starts when the build
 * will likely render (the adapter says the configuration writes pages, and the cache lacks
 * some result its root's last build used: cache.ts `buildMayRender`), so a browser's launch
 * or a usage read overlaps the bundling; runs
 * the pages when the HTML is ready, and releases what the mode started once the run ends,
 * or when the build ends without one (it failed, or emitted nothing to render). Adapters
 * and the folder command speak to nothing else of core's modes.
 */
import { buildMayRender, cacheDirOf } from './cache.ts'
import { embeddedMode } from './modes/embedded.ts'
import type { Mode } from './modes/mode.ts'
import { remoteMode } from './modes/remote.ts'
import { enabledFor, type BuildKind, type ResolvedOptions } from './options.ts'
import { runPages, type RunInput, type RunResult } from './run.ts'

export interface BuildSession {
  /**
   * Whether the plugin runs in this build (the `enabled` option, else production builds of
   * client code); when it does, the configuration's problems are thrown now.
   */
  enabled(build: BuildKind): boolean
  /**
   * The bundler starts and its configuration says it writes pages (`root`: the project root
   * the cache is below): a build that will likely render begins its mode now.
   */
  begin(root: string): void
  /** The HTML is ready: the pages get their critical CSS. Releases the session when it ends. */
  run(input: RunInput): Promise<RunResult>
  /** Stops whatever the build started and still runs; safe more than once. */
  release(): Promise<void>
}

export function createBuildSession(options: ResolvedOptions): BuildSession {
  const mode: Mode = options.service === null ? embeddedMode(options) : remoteMode(options, options.service)
  const release = (): Promise<void> => mode.release()
  return {
    enabled: (build) => enabledFor(options, build),
    begin(root) {
      const cacheDir = cacheDirOf(options.cache, root)
      // A build whose last run's results are all still kept likely renders nothing: then it starts no browser and sends no request.
      if (buildMayRender(options.cache, cacheDir, root)) mode.begin(cacheDir)
    },
    async run(input) {
      try {
        const cacheDir = cacheDirOf(options.cache, input.root)
        const run = await mode.open({ base: input.base, cacheDir, output: input.output, root: input.root })
        return await runPages(options, input, run, cacheDir)
      } finally {
        await release()
      }
    },
    release,
  }
}
