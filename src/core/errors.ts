import { CriticalCssError } from '../client/errors.ts'

/** An error's message, or what was thrown as text: for messages that quote a cause. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The plugin's name in every bundler: hook names, loggers, messages. */
export const PLUGIN_NAME = 'unplugin-critical-css'

/**
 * A mistake the user has to fix in the configuration (an option, an env var, a page that
 * does not exist): the build fails with this one message instead of warning per page.
 */
export class ConfigurationError extends CriticalCssError {
  override name = 'ConfigurationError'
  constructor(message: string) {
    super(message, { status: null, code: 'configuration' })
  }
}

/** Raised after every page finished when `strict: true` and some page was left unchanged. */
export class StrictModeError extends CriticalCssError {
  override name = 'StrictModeError'
  constructor(message: string) {
    super(message, { status: null, code: 'strict' })
  }
}

/** A page's new HTML could not be written ahead (a full disk, a folder not writable): the run stops, and no page changes. */
export class OutputWriteError extends CriticalCssError {
  override name = 'OutputWriteError'
  constructor(file: string, cause: unknown) {
    super(`${PLUGIN_NAME}: could not write the new ${file} (${describeError(cause)}), so no page was changed.`, { status: null, code: 'output' })
  }
}
