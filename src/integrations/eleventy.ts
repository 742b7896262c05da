/**
 * Eleventy 3: a plugin whose `eleventy.after` handler runs once a build has written its
 * output folder.
 *
 *   eleventyConfig.addPlugin(criticalCss, options)
 */
import { processDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import type { Options } from '../core/options.ts'
import type { BuildLogger } from '../core/report.ts'
import { buildLogger } from './log.ts'

/** The part of Eleventy's `eleventy.after` event this plugin uses. */
export interface EleventyAfterEvent {
  /** Relative to the working directory, where Eleventy resolves it too. */
  directories: { output: string }
  runMode: 'build' | 'serve' | 'watch'
  /** `json` and `ndjson` (`--to=json`) write no files. */
  outputMode: 'fs' | 'json' | 'ndjson'
}

/** The part of Eleventy's ConsoleLogger this plugin uses. */
export interface EleventyLoggerLike {
  logWithOptions(options: { message: string; prefix?: string; type?: 'log' | 'warn' | 'error'; color?: string; force?: boolean }): void
}

/** The part of Eleventy's config API this plugin uses. */
export interface EleventyConfigLike {
  /** The config's `pathPrefix`, or `--pathprefix`: set before plugins run. */
  pathPrefix?: string
  logger?: EleventyLoggerLike
  on(event: 'eleventy.after', handler: (event: EleventyAfterEvent) => Promise<void>): unknown
}

const PREFIX = `[${PLUGIN_NAME}]`

/**
 * Eleventy's own logger, so lines look like its own and follow `--quiet`; a warning is
 * forced through `--quiet`, like Eleventy's own errors, since it says a page was left as is.
 */
function eleventyLogger(logger: EleventyLoggerLike | undefined): BuildLogger {
  if (typeof logger?.logWithOptions !== 'function') return buildLogger(null)
  return {
    info: (message) => logger.logWithOptions({ message, prefix: PREFIX }),
    warn: (message) => logger.logWithOptions({ message, prefix: PREFIX, type: 'warn', color: 'yellow', force: true }),
  }
}

export default function criticalCss(eleventyConfig: EleventyConfigLike, options: Options = {}): void {
  let told = false
  eleventyConfig.on('eleventy.after', async (event) => {
    const log = eleventyLogger(eleventyConfig.logger)
    if (event.outputMode !== 'fs') return
    // `--serve` and `--watch` rewrite pages on every change; a browser per rebuild would slow every save.
    if (event.runMode !== 'build') {
      if (!told) log.info(`critical CSS: skipped in --${event.runMode}; a plain \`eleventy\` build inlines it.`)
      told = true
      return
    }
    await processDirectory(event.directories.output, options, { framework: { name: 'Eleventy', base: eleventyConfig.pathPrefix }, logger: log })
  })
}
