#!/usr/bin/env node
/**
 * `critical-css <dir>`: the plugin for a folder a site was built into, for any generator
 * without a hook of its own (`"build": "… && critical-css dist"`). Progress and the summary
 * go to stderr, `--json` puts the report on stdout. Exit 0 done (warnings allowed), 1 failed
 * (strict, a configuration error, or a folder missing or without a page), 2 bad usage.
 * Messages name flags, not option paths (`CLI_WORDS`).
 */
import { parseArgs } from 'node:util'
import { ConfigurationError, PLUGIN_NAME, describeError } from '../core/errors.ts'
import { processResolvedDirectory, stderrLogger } from '../core/directory.ts'
import { renderOwnServer, type OwnServer } from '../core/own-server.ts'
import { ENV, PLUGIN_WORDS, resolveDirectoryOptions, type DirectoryOptions, type OptionWords, type ResolvedDirectoryOptions } from '../core/options.ts'
import type { PreloadStrategy } from '../html/strategies.ts'
import { didYouMean } from '../shared/did-you-mean.ts'

const HELP = `critical-css — inline the above-the-fold CSS of every HTML page in a built folder

Usage:
  critical-css <dir> [options]
  critical-css <static-dir> --server COMMAND --route ROUTE[=PATH,…] … --server-out DIR [options]

Every .html file below <dir> is a page (or the ones --pages names). With no service
configured the pages are rendered in the local Chrome/Chromium; with ${ENV.baseUrl} and
${ENV.token} set they go to that Critical CSS Generation API.

With --server, a server of your own renders the pages: COMMAND starts your built server
(words split on spaces, quotes kept) with PORT and HOST=127.0.0.1 in its env, each --route
is rendered at its own path or at the PATHs after its =, and critical-css.json is written
into the --server-out folder, for readManifest and applyCriticalCss (or withCriticalCss)
from unplugin-critical-css/runtime to insert each route's CSS at request time. The
stylesheets are read from <static-dir>, where the server serves its static files.

Options:
  --base PATH             path the folder is served below, like /docs/ (default: the
                          --site-url's path, else where the pages link their
                          stylesheets, said in a warning; else /)
  --site-url URL          where the site is deployed (env ${ENV.siteUrl})
  --pages LIST            comma-separated page URLs, absolute or relative to --site-url
  --viewports LIST        viewports to cover, like 1300x900,412x915 (the default)
  --preload STRATEGY      loader (default), body, media, swap or none
  --nonce VALUE           CSP nonce for the inlined <style>
  --third-party POLICY    other hosts than the page's own: cut (default: went on
                          without once they held the page 1 s), wait, or block
  --keep SELECTOR         rules always kept, as if above the fold (repeat the flag
                          for more: selectors hold commas)
  --drop SELECTOR         rules never kept (repeatable)
  --state STATE           another state of <html> to render too, like
                          '[data-theme=dark]' or .dark (repeatable, at most 4)
  --no-font-faces         no @font-face in the critical CSS
  --no-keyframes          no @keyframes in the critical CSS
  --preload-fonts         preload the font files the critical CSS uses
  --engine ENGINE         what renders with no service configured: auto (default: the
                          Chrome/Chromium on this machine, else static), chromium, or
                          static (no browser: every rule the page uses; env ${ENV.engine})
  --strict                exit 1 when any page could not get critical CSS
  --report FILE           also write the report as JSON to FILE
  --concurrency N         most pages in flight at once
  --timeout MS            time allowed per page (default 120000)
  --cache-dir DIR         where results are kept (default node_modules/.cache/unplugin-critical-css)
  --no-cache              do not read or write the cache
  --json                  print the report as JSON on stdout
  --server COMMAND        start your built server with COMMAND and render its routes
  --route ROUTE[=PATHS]   a route of the server, as its router names it (/posts/[slug],
                          /posts/:slug), and the comma-separated paths it is rendered
                          from (a route with no parameters: its own; repeatable)
  --server-out DIR        the folder critical-css.json is written into
  -h, --help              this help

Env: ${ENV.baseUrl}, ${ENV.token}, ${ENV.siteUrl}, ${ENV.engine}, CHROME_PATH.
Exit: 0 done (warnings allowed), 1 failed (strict, a configuration error, or a folder
that is missing or has no .html file), 2 bad usage (a flag or a value it cannot take).
`

class UsageError extends Error {}

const FLAGS = {
  base: { type: 'string' },
  'site-url': { type: 'string' },
  pages: { type: 'string', multiple: true },
  viewports: { type: 'string' },
  preload: { type: 'string' },
  nonce: { type: 'string' },
  keep: { type: 'string', multiple: true },
  drop: { type: 'string', multiple: true },
  state: { type: 'string', multiple: true },
  'no-font-faces': { type: 'boolean' },
  'no-keyframes': { type: 'boolean' },
  'preload-fonts': { type: 'boolean' },
  'third-party': { type: 'string' },
  engine: { type: 'string' },
  strict: { type: 'boolean' },
  report: { type: 'string' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
  'cache-dir': { type: 'string' },
  'no-cache': { type: 'boolean' },
  json: { type: 'boolean' },
  server: { type: 'string' },
  route: { type: 'string', multiple: true },
  'server-out': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/**
 * The flag that sets each option, for messages that name one: null where the command has
 * none (the service and its token come from env vars, the rest is the plugin's own). Every
 * option is listed, so a new one has to say how the command names it.
 */
const FLAG_OF = {
  base: '--base',
  siteUrl: '--site-url',
  pages: '--pages',
  viewports: '--viewports',
  preload: '--preload',
  nonce: '--nonce',
  thirdParty: '--third-party',
  keep: '--keep',
  drop: '--drop',
  states: '--state',
  keepFontFaces: '--no-font-faces',
  keepKeyframes: '--no-keyframes',
  preloadFonts: '--preload-fonts',
  strict: '--strict',
  report: '--report',
  concurrency: '--concurrency',
  timeout: '--timeout',
  // `--no-cache` cannot be wrong: what the options can refuse of the cache is its folder.
  cache: '--cache-dir',
  baseUrl: null,
  token: null,
  rateLimit: null,
  enabled: null,
  engine: '--engine',
  // A server of one's own (`--server`): each route's paths after its `=`.
  samples: '--route',
} as const satisfies Record<keyof DirectoryOptions, `--${string}` | null>

/** A list flag's item as it was typed: `10x10` for a viewport, a page as itself. */
function typed(item: unknown): string {
  if (typeof item === 'object' && item !== null && 'width' in item && 'height' in item) return `${String(item.width)}x${String(item.height)}`
  return String(item)
}

/** The options in the command's words: flags, and env vars where it has no flag. */
const CLI_WORDS: OptionWords = {
  at(path, options) {
    const [option, index, ...inside] = path
    const flag = FLAG_OF[option as keyof DirectoryOptions]
    // An option no flag sets cannot come from the command line; said as the plugin says it, should it ever.
    if (!flag) return PLUGIN_WORDS.at(path, options)
    if (typeof index !== 'number') return flag
    const list = (options as Record<string, unknown>)[String(option)]
    const item = Array.isArray(list) ? ` ${typed(list[index])}` : ''
    return `${flag}${item}${inside.length > 0 ? ` (${inside.join('.')})` : ''}`
  },
  name: (option) => (option === 'baseUrl' ? ENV.baseUrl : FLAG_OF[option]),
  set: (option, value) => `\`${FLAG_OF[option]} ${value}\``,
  orOption(option) {
    const flag = FLAG_OF[option]
    return flag === null ? '' : ` (or ${flag})`
  },
  failInstead: `Pass ${FLAG_OF.strict} to exit 1 instead.`,
  useService: `set ${ENV.baseUrl} and ${ENV.token}`,
}

/**
 * What to say of the first flag the command does not know, with the one it likely meant.
 * Node's own message suggests quoting the flag as a positional, in a form missing a quote.
 */
function unknownFlag(args: readonly string[]): string | null {
  const { tokens } = parseArgs({ args: [...args], options: FLAGS, allowPositionals: true, strict: false, tokens: true })
  const unknown = tokens.find((token) => token.kind === 'option' && !Object.hasOwn(FLAGS, token.name))
  if (unknown?.kind !== 'option') return null
  const meant = didYouMean(unknown.name, Object.keys(FLAGS))
  return `unknown flag ${unknown.rawName}${meant === null ? '' : `; did you mean --${meant}?`}`
}

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

/** A command's words as a shell splits them: on spaces, with '…' and "…" kept whole and \ escaping outside single quotes. */
function commandWords(text: string): string[] {
  const words: string[] = []
  let word: string | null = null
  let quote: "'" | '"' | null = null
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (quote === null && /\s/.test(char)) {
      if (word !== null) words.push(word)
      word = null
      continue
    }
    word ??= ''
    if (char === quote) quote = null
    else if (quote === null && (char === "'" || char === '"')) quote = char
    else if (char === '\\' && quote !== "'" && i + 1 < text.length) word += text[++i]
    else word += char
  }
  if (quote !== null) throw new UsageError(`--server has an unclosed ${quote}`)
  if (word !== null) words.push(word)
  if (words.length === 0) throw new UsageError('--server takes the command that starts your built server, like "node dist/server.js"')
  return words
}

/** `--route` flags: the routes, and the paths of those given some (the `samples` option). */
function serverRoutes(flags: readonly string[]): { routes: string[]; samples: Record<string, string[]> } {
  const routes: string[] = []
  const samples: Record<string, string[]> = {}
  for (const flag of flags) {
    const at = flag.indexOf('=')
    const route = (at === -1 ? flag : flag.slice(0, at)).trim()
    routes.push(route)
    if (at !== -1) samples[route] = flag.slice(at + 1).split(',').map((path) => path.trim()).filter(Boolean)
  }
  return { routes, samples }
}

/** The command line as the options `processDirectory` takes; a UsageError for what cannot be read. */
function parseCommandLine(args: readonly string[]): { dir: string; options: DirectoryOptions; json: boolean; server: OwnServer | null } | 'help' {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: [...args], options: FLAGS, allowPositionals: true })
  } catch (error) {
    const unknown = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? unknownFlag(args) : null
    throw new UsageError(unknown ?? (error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) return 'help'
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'name the folder to process' : `one folder at a time, got ${positionals.join(', ')}`)
  if (values['no-cache'] && values['cache-dir'] !== undefined) throw new UsageError('--no-cache and --cache-dir do not go together')
  const serving = values.server !== undefined
  for (const flag of ['route', 'server-out'] as const) if (!serving && values[flag] !== undefined) throw new UsageError(`--${flag} goes with --server`)
  if (serving && values.pages) throw new UsageError('--pages is for a folder of pages; with --server, --route names what is rendered')
  if (serving && !values.route) throw new UsageError('--server needs the routes to render: --route /, --route /posts/[slug]=/posts/first')
  if (serving && values['server-out'] === undefined) throw new UsageError('--server needs --server-out, the folder critical-css.json is written into, where your server reads it')
  const routes = serving ? serverRoutes(values.route!) : null
  const options: DirectoryOptions = {
    ...(values.base !== undefined ? { base: values.base } : {}),
    ...(values['site-url'] !== undefined ? { siteUrl: values['site-url'] } : {}),
    ...(values.pages ? { pages: values.pages.flatMap((list) => list.split(',')).map((page) => page.trim()).filter(Boolean) } : {}),
    ...(values.viewports !== undefined ? { viewports: viewports(values.viewports) } : {}),
    ...(values.preload !== undefined ? { preload: values.preload as PreloadStrategy } : {}),
    ...(values.nonce !== undefined ? { nonce: values.nonce } : {}),
    ...(values['third-party'] !== undefined ? { thirdParty: values['third-party'] as NonNullable<DirectoryOptions['thirdParty']> } : {}),
    ...(values.keep ? { keep: values.keep } : {}),
    ...(values.drop ? { drop: values.drop } : {}),
    ...(values.state ? { states: values.state } : {}),
    ...(values['no-font-faces'] ? { keepFontFaces: false } : {}),
    ...(values['no-keyframes'] ? { keepKeyframes: false } : {}),
    ...(values['preload-fonts'] ? { preloadFonts: true } : {}),
    ...(values.engine !== undefined ? { engine: values.engine as NonNullable<DirectoryOptions['engine']> } : {}),
    ...(values.strict ? { strict: true } : {}),
    ...(values.report !== undefined ? { report: values.report } : {}),
    ...(values.concurrency !== undefined ? { concurrency: wholeNumber('concurrency', values.concurrency) } : {}),
    ...(values.timeout !== undefined ? { timeout: wholeNumber('timeout', values.timeout) } : {}),
    ...(values['no-cache'] ? { cache: false as const } : values['cache-dir'] !== undefined ? { cache: { dir: values['cache-dir'] } } : {}),
    ...(routes && Object.keys(routes.samples).length > 0 ? { samples: routes.samples } : {}),
  }
  const server = routes === null ? null : { command: commandWords(values.server!), routes: routes.routes, out: values['server-out']! }
  return { dir: positionals[0]!, options, json: values.json ?? false, server }
}

/** Runs the command; resolves to its exit code. */
async function main(args: readonly string[], io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process): Promise<number> {
  let command: { dir: string; resolved: ResolvedDirectoryOptions; json: boolean; server: OwnServer | null }
  try {
    const parsed = parseCommandLine(args)
    if (parsed === 'help') {
      io.stdout.write(HELP)
      return 0
    }
    // A flag's value the options refuse is bad usage, said before any work starts.
    command = { ...parsed, resolved: resolveDirectoryOptions(parsed.options, {}, CLI_WORDS) }
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigurationError)) throw error
    io.stderr.write(`${said(error.message)}\nRun critical-css --help for the options.\n`)
    return 2
  }
  try {
    if (command.server !== null) {
      const result = await renderOwnServer(command.dir, command.server, command.resolved, stderrLogger)
      if (command.json) io.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      return 0
    }
    // A folder with no page is a wrong folder here (a build that wrote elsewhere), not a run with nothing to do.
    const { report } = await processResolvedDirectory(command.dir, command.resolved, { logger: stderrLogger, requirePages: true })
    if (command.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  } catch (error) {
    // A configuration error, a strict failure or a fault: every page is as it was.
    io.stderr.write(`${said(describeError(error))}\n`)
    return 1
  }
}

/** A message as this command says it: once prefixed with its name, not also with the plugin's. */
function said(message: string): string {
  return `critical-css: ${message.startsWith(`${PLUGIN_NAME}: `) ? message.slice(PLUGIN_NAME.length + 2) : message}`
}

process.exitCode = await main(process.argv.slice(2))
