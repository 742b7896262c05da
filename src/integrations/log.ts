/**
 * What every integration needs from the framework: its logger (or the console, with our
 * name, where it has none) and the folder its pages were written to.
 */
import type { BuildLogger } from '../core/report.ts'
import { PLUGIN_NAME } from '../core/errors.ts'

/** A framework's logger: the two levels we speak at. */
export interface FrameworkLogger {
  info(message: string): void
  warn(message: string): void
}

export function buildLogger(logger: FrameworkLogger | null | undefined): BuildLogger {
  if (logger) return { info: (message) => logger.info(message), warn: (message) => logger.warn(message) }
  return {
    info: (message) => console.log(prefixed(message)),
    warn: (message) => console.warn(prefixed(message)),
  }
}

/** Every line with our name: the summary table is many lines, and each may be read alone. */
function prefixed(message: string): string {
  return message
    .split('\n')
    .map((line) => `[${PLUGIN_NAME}] ${line}`)
    .join('\n')
}
