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
    info: (message) => console.log(`[${PLUGIN_NAME}] ${message}`),
    warn: (message) => console.warn(`[${PLUGIN_NAME}] ${message}`),
  }
}
