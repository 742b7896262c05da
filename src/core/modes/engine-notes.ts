/**
 * What a build says of the engine that renders its pages: which browser (and where it was
 * found), the browsers found that did not start, and when no browser renders, one warning for
 * the build with what the static engine gives up and the one step that brings a browser on
 * this host. With `strict`, a build that would fall back fails instead.
 */
import { buildHost } from '../build-hosts.ts'
import { ConfigurationError, PLUGIN_NAME } from '../errors.ts'
import type { ResolvedOptions } from '../options.ts'
import type { BuildLogger } from '../report.ts'
import type { EmbeddedEngine } from './embedded-service.ts'

/** What renders, as the build's first line says it: `in Chromium 156 (/usr/bin/chromium)`, or `with the static engine`. */
export function engineShown(engine: EmbeddedEngine): string {
  if (engine.browser === null) return 'with the static engine'
  const { version, executablePath, source } = engine.browser
  const where = source === 'PATH' || source === 'CHROME_PATH' ? executablePath : `${executablePath}, ${source}`
  return `in Chromium ${version.split('.')[0]} (${where})`
}

/** Says the browsers that did not start, and the fallback's warning; throws the fallback under `strict`. */
export function sayEngine(engine: EmbeddedEngine, options: Pick<ResolvedOptions, 'strict' | 'words'>, logger: BuildLogger, env: Readonly<Record<string, string | undefined>> = process.env): void {
  if (engine.fellBack) {
    const message = fallbackMessage(engine, env)
    if (options.strict) throw new ConfigurationError(`${PLUGIN_NAME}: ${options.words.name('strict')} is on, and ${message} Or set ${options.words.name('engine')} to 'static' to build with it.`)
    logger.warn(`critical CSS: ${message}`)
    return
  }
  for (const failure of engine.failed) logger.warn(`critical CSS: ${failure.browser} was found but did not start (${failure.reason}); the next browser found renders instead`)
}

function fallbackMessage(engine: EmbeddedEngine, env: Readonly<Record<string, string | undefined>>): string {
  const host = buildHost(env)
  const found = engine.failed.length === 0 ? 'no Chrome or Chromium was found' : `no browser found starts (${engine.failed.map((failure) => `${failure.browser}: ${failure.reason}`).join('; ')})`
  return (
    `${found}, so the static engine made the critical CSS: it runs no script and has no fold, so each page gets every rule its elements use, not only the first screen's, and a page its scripts build is left as it is. ` +
    `To render in a browser ${host.where}: ${host.step}. (docs/where-you-build.md)`
  )
}
