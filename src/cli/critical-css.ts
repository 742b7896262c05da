#!/usr/bin/env node
/**
 * `critical-css <dir>`: the plugin for a folder a site was built into, for any generator
 * without a hook of its own (`"build": "… && critical-css dist"`). Progress and the summary
 * go to stderr, `--json` puts the report on stdout. Exit 0 done (warnings allowed), 1 failed
 * (strict, or a configuration error), 2 bad usage.
 */
import { parseArgs } from 'node:util'
import { ConfigurationError, describeError } from '../core/errors.ts'
import { processResolvedDirectory, stderrLogger } from '../core/directory.ts'
import { ENV, resolveDirectoryOptions, type DirectoryOptions, type ResolvedDirectoryOptions } from '../core/options.ts'
import type { PreloadStrategy } from '../html/strategies.ts'

const HELP = `critical-css — inline the above-the-fold CSS of every HTML page in a built folder

Usage:
  critical-css <dir> [options]

Every .html file below <dir> is a page (or the ones --pages names). With no service
configured the pages are rendered in the local Chrome/Chromium; with ${ENV.baseUrl} and
${ENV.token} set they go to that Critical CSS Generation API.

Options:
  --base PATH             path the folder is served below, like /docs/ (default /)
  --site-url URL          where the site is deployed (remote mode; env ${ENV.siteUrl})
  --pages LIST            comma-separated page URLs, absolute or relative to --site-url
  --viewports LIST        viewports to cover, like 1300x900,412x915 (the default)
  --preload STRATEGY      loader (default), body, media, swap or none
  --nonce VALUE           CSP nonce for the inlined <style>
  --third-party POLICY    other hosts than the page's own: cut (default: went on
                          without once they held the page 1 s), wait, or block
  --strict                exit 1 when any page could not get critical CSS
  --report FILE           also write the report as JSON to FILE
  --concurrency N         most pages in flight at once
  --timeout MS            time allowed per page (default 120000)
  --cache-dir DIR         where results are kept (default node_modules/.cache/unplugin-critical-css)
  --no-cache              do not read or write the cache
  --json                  print the report as JSON on stdout
  -h, --help              this help

Env: ${ENV.baseUrl}, ${ENV.token}, ${ENV.siteUrl}, CHROME_PATH.
Exit: 0 done (warnings allowed), 1 failed (strict, or a configuration error), 2 bad usage.
`

class UsageError extends Error {}

const FLAGS = {
  base: { type: 'string' },
  'site-url': { type: 'string' },
  pages: { type: 'string', multiple: true },
  viewports: { type: 'string' },
  preload: { type: 'string' },
  nonce: { type: 'string' },
  'third-party': { type: 'string' },
  strict: { type: 'boolean' },
  report: { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  'cache-dir': { type: 'string' },
  'no-cache': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} takes a whole number, got "${value}"`)
  return Number(value)
}

function viewports(value: string | undefined): DirectoryOptions['viewports'] {
  if (value === undefined) return undefined
  return value.split(',').map((part) => {
    const match = /^(\d+)x(\d+)$/.exec(part.trim())
    if (!match) throw new UsageError(`--viewports takes WIDTHxHEIGHT pairs like 1300x900,412x915, got "${part}"`)
    return { width: Number(match[1]), height: Number(match[2]) }
  })
}

/** The command line as the options `processDirectory` takes; a UsageError for what cannot be read. */
function parseCommandLine(args: readonly string[]): { dir: string; options: DirectoryOptions; json: boolean } | 'help' {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: [...args], options: FLAGS, allowPositionals: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) return 'help'
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'name the folder to process' : `one folder at a time, got ${positionals.join(', ')}`)
  if (values['no-cache'] && values['cache-dir'] !== undefined) throw new UsageError('--no-cache and --cache-dir do not go together')
  const options: DirectoryOptions = {
    ...(values.base !== undefined ? { base: values.base } : {}),
    ...(values['site-url'] !== undefined ? { siteUrl: values['site-url'] } : {}),
    ...(values.pages ? { pages: values.pages.flatMap((list) => list.split(',')).map((page) => page.trim()).filter(Boolean) } : {}),
    ...(values.viewports !== undefined ? { viewports: viewports(values.viewports) } : {}),
    ...(values.preload !== undefined ? { preload: values.preload as PreloadStrategy } : {}),
    ...(values.nonce !== undefined ? { nonce: values.nonce } : {}),
    ...(values['third-party'] !== undefined ? { thirdParty: values['third-party'] as NonNullable<DirectoryOptions['thirdParty']> } : {}),
    ...(values.strict ? { strict: true } : {}),
    ...(values.report !== undefined ? { report: values.report } : {}),
    ...(values.concurrency !== undefined ? { concurrency: wholeNumber('concurrency', values.concurrency) } : {}),
    ...(values.timeout !== undefined ? { timeout: wholeNumber('timeout', values.timeout) } : {}),
    ...(values['no-cache'] ? { cache: false as const } : values['cache-dir'] !== undefined ? { cache: { dir: values['cache-dir'] } } : {}),
  }
  return { dir: positionals[0]!, options, json: values.json ?? false }
}

/** Runs the command; resolves to its exit code. */
async function main(args: readonly string[], io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process): Promise<number> {
  let command: { dir: string; resolved: ResolvedDirectoryOptions; json: boolean }
  try {
    const parsed = parseCommandLine(args)
    if (parsed === 'help') {
      io.stdout.write(HELP)
      return 0
    }
    // A flag's value the options refuse is bad usage, said before any work starts.
    command = { ...parsed, resolved: resolveDirectoryOptions(parsed.options) }
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigurationError)) throw error
    io.stderr.write(`critical-css: ${error.message}\nRun critical-css --help for the options.\n`)
    return 2
  }
  try {
    const { report } = await processResolvedDirectory(command.dir, command.resolved, { logger: stderrLogger })
    if (command.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  } catch (error) {
    // A configuration error, a strict failure or a fault: every page is as it was.
    io.stderr.write(`critical-css: ${describeError(error)}\n`)
    return 1
  }
}

process.exitCode = await main(process.argv.slice(2))
