/**
 * The plugin's options, in one contract: `Options` is the shape users write (with its
 * documentation), the zod schema checks it key for key (the compiler holds the two to the
 * same shape, both ways), and `resolveOptions` makes every decision once: defaults, env
 * vars, the service or embedded mode, and what is wrong with the configuration. Nothing
 * downstream checks an option again.
 */
import { z } from 'zod'
import type { RateLimitOption } from '../client/types.ts'
import { describeBaseUrl } from '../client/errors.ts'
import { DEFAULT_VIEWPORTS, SELECTION_LIMITS, STATE_PATTERN, STATE_RULE, THIRD_PARTY_POLICIES, TOKEN_PATTERN, VIEWPORT_LIMITS, normalizeSelection, type Selection, type ThirdPartyPolicy, type Viewport } from '../contract/api-contract.ts'
import { NONCE_PATTERN } from '../html/nonce.ts'
import { DEFAULT_PRELOAD, PRELOAD_STRATEGIES, type PreloadStrategy } from '../html/strategies.ts'
import { didYouMean } from '../shared/did-you-mean.ts'
import { ENGINE_CHOICES, type EngineChoice } from '../shared/engines.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'

/** The env vars the plugin reads; an option of the same name wins. */
export const ENV = {
  baseUrl: 'CRITICAL_CSS_BASE_URL',
  token: 'CRITICAL_CSS_API_TOKEN',
  siteUrl: 'CRITICAL_CSS_SITE_URL',
  engine: 'CRITICAL_CSS_ENGINE',
} as const

export const DEFAULT_TIMEOUT_MS = 120_000
export const DEFAULT_CACHE_DIR = 'node_modules/.cache/unplugin-critical-css'
export const DEFAULT_CACHE_TTL_MS = 24 * 60 * 60 * 1000

/** A page given with the emitted HTML file it lives in. */
export interface PageOption {
  /** The page's address: absolute, or relative to `siteUrl`. */
  url: string
  /** The emitted HTML file, relative to the output directory (`docs/index.html`). Default: derived from the URL's path. */
  html?: string
}

export interface CacheOption {
  /**
   * Where results are kept, relative to the project root (Vite's root, webpack's context,
   * else the working directory). Default `node_modules/.cache/unplugin-critical-css` of the
   * nearest package.json's directory, beside other tools' caches.
   */
  dir?: string
  /** How long a result stays valid, in ms. Default 24 h (86 400 000). */
  ttl?: number
}

export interface Options {
  /**
   * Pages to give critical CSS: URLs (absolute or relative to `siteUrl`) or `{ url, html }`.
   * Default: every `.html` file the build emits, at `siteUrl` + base + its path.
   */
  pages?: (string | PageOption)[]
  /**
   * Base URL of the Critical CSS Generation API. Default: env `CRITICAL_CSS_BASE_URL`; with
   * neither, the plugin renders the pages itself in a local Chromium (embedded mode).
   */
  baseUrl?: string
  /** API token of the service at `baseUrl`. Default: env `CRITICAL_CSS_API_TOKEN`. Never logged, reported or cached. */
  token?: string
  /**
   * Where the site is deployed, e.g. `https://example.com`; relative page URLs resolve
   * against it. Default: env `CRITICAL_CSS_SITE_URL`; not needed in embedded mode.
   */
  siteUrl?: string
  /** Viewports the CSS must cover (1–4). Default: 1300×900 and 412×915. */
  viewports?: Viewport[]
  /**
   * How the full stylesheets load once the critical CSS is inlined. Default `'loader'`:
   * each link stays where it was at `media="print"`, given its media back by a small script
   * file the build emits at its root (`critical-css-loader.<hash>.js`) once all of them have loaded.
   * Neither first paint nor the page's scripts wait for the full CSS, and no inline script
   * or handler: it works under `script-src 'self'`. `'body'` needs no script at all, but
   * holds up module scripts.
   */
  preload?: PreloadStrategy
  /**
   * What a render does with hosts other than the page's own (CDNs, font and script hosts).
   * `'cut'` (the service's default): once the page's own resources are in, another host whose
   * request has held the page for a second is cut, and the page goes on without it, as a browser
   * does after a network error; a stylesheet it did not get keeps its blocking link. `'wait'`:
   * waited for like the page's own (for a first screen that depends on a slow third party).
   * `'block'`: never contacted, so a build gives the same output offline. Sent to a remote
   * service as `third_party`; a service that does not know it ignores it.
   */
  thirdParty?: ThirdPartyPolicy
  /**
   * Selectors whose rules are always in the critical CSS, as if their element were above the
   * fold (their media queries still apply): states a script toggles after first paint, which
   * no render sees. Compared with each selector of a rule as CSS writes it, spacing aside
   * (`.menu.is-open` keeps `.menu.is-open{…}` and `.menu.is-open, .x{…}`'s first part, not
   * `.menu .is-open`). A RegExp keeps every selector of the build's own stylesheets it
   * matches (`/^\.modal/`): they are found in the build and sent as strings. At most 200
   * selectors in all, each 1–300 characters. Sent to a remote service as `keep`. Default: none.
   * @example ['.menu.is-open', /^\.modal-/]
   */
  keep?: (string | RegExp)[]
  /**
   * Selectors whose rules are never in the critical CSS, even above the fold (compared as
   * `keep`'s are; a RegExp as for `keep`). At most 200 selectors in all, each 1–300
   * characters. Sent to a remote service as `drop`. Default: none.
   * @example ['.cookie-banner', /^\.ad-/]
   */
  drop?: (string | RegExp)[]
  /**
   * Other states of `<html>` a visitor may arrive in, set by a head script before first
   * paint (a theme from localStorage): each is rendered too, and the rules its first screen
   * uses are kept. An attribute selector (`'[data-theme=dark]'`, `'[data-theme="dark"]'`,
   * `'[data-dark]'`) or a class (`'.dark'`); at most 4. Sent to a remote service as `states`.
   * Default: none (only the state the page loads in).
   * @example ['[data-theme=dark]']
   */
  states?: string[]
  /**
   * `false`: no `@font-face` at all in the critical CSS (the text paints in a fallback font
   * until the full CSS comes). Default `true`: those a kept rule uses. Sent as `font_faces: false`.
   * @example false
   */
  keepFontFaces?: boolean
  /**
   * `false`: no `@keyframes` at all in the critical CSS. Default `true`: those a kept rule
   * animates with. Sent as `keyframes: false`.
   * @example false
   */
  keepKeyframes?: boolean
  /**
   * Preload the font files the critical CSS uses (`<link rel="preload" as="font" crossorigin>`
   * before it, the WOFF2 file of each `@font-face`, at most 4), so the first screen's text
   * does not wait for the inlined CSS to be parsed before its font is asked for. Default
   * `false`: a face the critical CSS keeps may still go unused at first paint (a bold
   * weight no text on the first screen has), and a preload would fetch it anyway.
   * @example true
   */
  preloadFonts?: boolean
  /** Nonce put on the inlined `<style>`, the links deferred or preloaded and the loader's `<script>`, for a CSP with nonces. Default: none. */
  nonce?: string
  /**
   * Server-rendered routes with parameters, each with the URL path (or paths) the build
   * renders it from: every page of the route gets their critical CSS together at request
   * time. Routes without parameters are rendered at their own path unless named here; a
   * route with parameters and no sample is left alone, and the build log names it.
   * @example { '/blog/[slug]': ['/blog/first-post', '/blog/long-post'] }
   */
  samples?: Record<string, string | string[]>
  /**
   * Most pages in flight at once. Default: what the plan's rate limit serves within
   * `timeout` (remote mode), twice the browser's workers (embedded mode).
   */
  concurrency?: number
  /** Per page, in ms, counted from when its generate request is queued. Default 120 000. */
  timeout?: number
  /** Fail the build (after every page finished) when any page could not get critical CSS. Default `false`: warn. */
  strict?: boolean
  /** Cache results across builds, or `false` for none. Default `{ dir: 'node_modules/.cache/unplugin-critical-css', ttl: 24 h }`. */
  cache?: false | CacheOption
  /** Also write the report as JSON to this path (relative to the project root, as `cache.dir`). Default `false`. */
  report?: false | string
  /** Pace to keep instead of the plan's, for self-hosted services with limits of their own. Default: the plan's. */
  rateLimit?: RateLimitOption
  /** Run in this build. Default: production builds of client code only, not dev servers, watch rebuilds or SSR. */
  enabled?: boolean
  /**
   * What renders the pages when no service is configured (embedded mode). `'auto'`: the
   * Chrome/Chromium already on the machine (CHROME_PATH, PATH, Playwright's or Puppeteer's
   * cache, `@sparticuz/chromium`), else the static engine, with one warning. `'chromium'`: a
   * browser or a failed build. `'static'`: no browser; every rule the page's elements use,
   * not only the first screen's. A configured service renders with its own engine. Default:
   * env `CRITICAL_CSS_ENGINE`, else `'auto'`.
   * @example 'static'
   */
  engine?: EngineChoice
}

/**
 * The API token, kept out of anything that prints or serialises the options: `String()`,
 * `JSON.stringify` and `util.inspect` all see `[redacted]`.
 */
export class Secret {
  readonly #value: string
  constructor(value: string) {
    this.#value = value
  }
  reveal(): string {
    return this.#value
  }
  toString(): string {
    return '[redacted]'
  }
  toJSON(): string {
    return '[redacted]'
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]'
  }
}

export interface ResolvedPage {
  url: string
  html: string | null
}

/** A configured Critical CSS Generation API: remote mode. */
export interface RemoteService {
  baseUrl: string
  token: Secret
}

export interface ResolvedOptions {
  /** Null: every emitted HTML file. */
  pages: ResolvedPage[] | null
  /** The service pages go to (remote mode); null: the plugin renders them itself (embedded mode). */
  service: RemoteService | null
  siteUrl: URL | null
  viewports: Viewport[]
  preload: PreloadStrategy
  /** Null: the service's default (`cut`), and nothing sent. */
  thirdParty: ThirdPartyPolicy | null
  /** `keep`, `drop`, `states`, `keepFontFaces` and `keepKeyframes` together; null: all at their defaults, and nothing sent. */
  selection: Selection | null
  /** `keep` and `drop`'s RegExps, matched against the build's stylesheets when a build runs (core/build-selection.ts); null: none. */
  selectionPatterns: SelectionPatterns | null
  preloadFonts: boolean
  nonce: string | null
  /** Route → the URL paths a server route is rendered from (`samples`); empty: none given. */
  samples: ReadonlyMap<string, readonly string[]>
  /** Null: the mode sizes it (the plan's pace in remote mode, the browser's workers in embedded mode). */
  concurrency: number | null
  timeoutMs: number
  strict: boolean
  /** `dir` null: the default, below the project root's nearest package.json. */
  cache: { dir: string | null; ttlMs: number } | null
  report: string | null
  rateLimit: RateLimitOption | null
  /** Null: decided by the kind of build (`enabledFor`). */
  enabled: boolean | null
  /** What renders in embedded mode (`auto` unless the option or env var says). */
  engine: EngineChoice
  /**
   * What stops a build from running, found here and reported when a build runs (not in a
   * dev server where the plugin is off): malformed env vars, a service without a token, a
   * relative page without a site URL in remote mode.
   */
  problems: string[]
  /** How this run's messages name the options: the words of the surface they were set on. */
  words: OptionWords
}

/** Holds `schema` to exactly the shape of `T`: every key, and the same types both ways. */
type ShapeOf<T> = { [K in keyof Required<T>]: z.ZodType<T[K], T[K]> }
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

const httpUrl = z.string().refine(
  (value) => {
    try {
      const { protocol } = new URL(value)
      return protocol === 'http:' || protocol === 'https:'
    } catch {
      return false
    }
  },
  { message: 'must be an absolute http(s) URL' },
)

/** A sample of a server route: a path on the app's own server, as its pages link each other. */
const samplePath = z.string().regex(/^\/[^\s]*$/, 'must be a URL path starting with / (no origin)')
const positiveMs = z.number().int().positive().max(2 ** 31 - 1)
const TOKEN_RULE = 'must be 16–256 printable ASCII characters without spaces'
const { maxSelectors, minSelectorChars, maxSelectorChars, maxStates } = SELECTION_LIMITS
const selectors = z
  .array(
    z.union(
      [
        z
          .string()
          .min(minSelectorChars, `must be a selector of ${minSelectorChars}–${maxSelectorChars} characters`)
          .max(maxSelectorChars, `must be a selector of ${minSelectorChars}–${maxSelectorChars} characters`)
          .refine((value) => value.trim() !== '', 'must be a selector, not blank'),
        z.instanceof(RegExp),
      ],
      { error: 'must be a selector string or a RegExp' },
    ),
  )
  .max(maxSelectors, `must have at most ${maxSelectors} entries`)

const optionsShape = {
  pages: z
    .array(
      z.union([z.string().min(1), z.strictObject({ url: z.string().min(1), html: z.string().min(1).optional() })], {
        error: 'must be a page URL or { url, html? }',
      }),
    )
    .optional(),
  baseUrl: httpUrl.optional(),
  token: z.string().regex(TOKEN_PATTERN, TOKEN_RULE).optional(),
  siteUrl: httpUrl.optional(),
  viewports: z
    .array(
      z.strictObject({
        width: z.number().int().min(VIEWPORT_LIMITS.minWidth).max(VIEWPORT_LIMITS.maxWidth),
        height: z.number().int().min(VIEWPORT_LIMITS.minHeight).max(VIEWPORT_LIMITS.maxHeight),
      }),
    )
    .min(VIEWPORT_LIMITS.minCount)
    .max(VIEWPORT_LIMITS.maxCount)
    .optional(),
  preload: z.enum(PRELOAD_STRATEGIES as [PreloadStrategy, ...PreloadStrategy[]]).optional(),
  thirdParty: z.enum(THIRD_PARTY_POLICIES).optional(),
  keep: selectors.optional(),
  drop: selectors.optional(),
  states: z.array(z.string().regex(STATE_PATTERN, STATE_RULE)).max(maxStates, `must have at most ${maxStates} entries`).optional(),
  keepFontFaces: z.boolean().optional(),
  keepKeyframes: z.boolean().optional(),
  preloadFonts: z.boolean().optional(),
  nonce: z.string().regex(NONCE_PATTERN, 'must be a base64 or base64url value of at most 256 characters').optional(),
  samples: z
    .record(z.string(), z.union([samplePath, z.array(samplePath).min(1, 'must list at least one path')]))
    .refine((samples) => Object.keys(samples).every((route) => route.startsWith('/')), 'each route must start with /, as the framework names it (/blog/[slug])')
    .optional(),
  concurrency: z.number().int().positive().optional(),
  timeout: positiveMs.optional(),
  strict: z.boolean().optional(),
  cache: z.union([z.literal(false), z.strictObject({ dir: z.string().min(1).optional(), ttl: positiveMs.optional() })]).optional(),
  report: z.union([z.literal(false), z.string().min(1)]).optional(),
  rateLimit: z.strictObject({ requestsPerMinute: z.number().int().positive().nullable(), windowMs: positiveMs.optional() }).optional(),
  enabled: z.boolean().optional(),
  engine: z.enum(ENGINE_CHOICES, { error: `must be one of ${ENGINE_CHOICES.map((choice) => `'${choice}'`).join(', ')}` }).optional(),
} satisfies ShapeOf<Options>

/** The options' checker; `Options` documents the same shape (the compiler keeps them equal). */
export const optionsSchema = z.strictObject(optionsShape)
const schemaMatchesOptions: Same<z.input<typeof optionsSchema>, Options> = true
void schemaMatchesOptions

type Env = Readonly<Record<string, string | undefined>>

/**
 * How messages name the options, in the words of the surface the user set them on: a config
 * says `strict: true`, the folder command `--strict`. Every message that points the user at
 * an option asks these words instead of spelling the option itself, so each entry point
 * passes its own (the folder command's are beside its flags) and the plugin's are the default.
 */
export interface OptionWords {
  /** Where the checker found a value wrong, from its path in the options as given: option `viewports[0].width`. */
  at(path: readonly PropertyKey[], options: unknown): string
  /** An option named in passing: `strict` is on, the `timeout` of 2 s. */
  name(option: 'strict' | 'timeout' | 'siteUrl' | 'baseUrl' | 'base' | 'engine'): string
  /** An option with the value to give it, as the user would write it: `base: '/docs/'`, `--base /docs/`. */
  set(option: 'base' | 'siteUrl', value: string): string
  /** After an env var, the option that sets the same thing (` (or the \`siteUrl\` option)`), or '' where this surface has none. */
  orOption(option: 'siteUrl' | 'token' | 'baseUrl'): string
  /** The sentence that makes a page without critical CSS fail the run instead of warning. */
  failInstead: string
  /** How to configure a Critical CSS Generation API instead of the local browser: "set …". */
  useService: string
}

/** `viewports[0].width`: a path in the options as a config writes it. */
function optionPath(path: readonly PropertyKey[]): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('').slice(1)
}

/** The plugin's words: the options as a bundler config or `processDirectory` call writes them. */
export const PLUGIN_WORDS: OptionWords = {
  at: (path) => `option \`${optionPath(path) || '(options)'}\``,
  name: (option) => `\`${option}\``,
  set: (option, value) => `\`${option}: '${value}'\``,
  orOption: (option) => ` (or the \`${option}\` option)`,
  failInstead: 'Set `strict: true` to fail the build instead.',
  useService: 'set the `baseUrl` and `token` options',
}

/** Without `.optional()` and `.nullable()`: what the value itself must be. */
function unwrapped(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? unwrapped(schema.unwrap() as z.ZodType) : schema
}

/** The object schema a value may be: `cache` is `false` or an object, a page a string or an object. */
function objectIn(schema: z.ZodType): z.ZodObject | null {
  const value = unwrapped(schema)
  if (value instanceof z.ZodObject) return value
  if (value instanceof z.ZodUnion) return (value.options as z.ZodType[]).map(objectIn).find((found) => found !== null) ?? null
  return null
}

/** The keys the schema knows where `path` leads: what an unknown key there may have meant. */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.ZodType | undefined = schema
  for (const part of path) {
    if (typeof part === 'number') {
      const list = unwrapped(at)
      at = list instanceof z.ZodArray ? (list.element as z.ZodType) : undefined
    } else {
      at = objectIn(at)?.shape[String(part)] as z.ZodType | undefined
    }
    if (at === undefined) return []
  }
  return Object.keys(objectIn(at)?.shape ?? {})
}

function describeIssue(issue: z.core.$ZodIssue, schema: z.ZodType, options: unknown, words: OptionWords): string {
  // Only a config holds keys of its own: the folder command's parser refuses a flag it does not know.
  if (issue.code === 'unrecognized_keys') {
    const path = optionPath(issue.path)
    const where = path ? `\`${path}\` has` : 'there is'
    const known = keysAt(schema, issue.path)
    const named = issue.keys.map((key) => {
      const meant = didYouMean(key, known)
      return `\`${key}\`${meant === null ? '' : ` (did you mean \`${meant}\`?)`}`
    })
    return `${where} an unknown option ${named.join(', ')}`
  }
  // The token must not be echoed back, even when it is malformed.
  return `${words.at(issue.path, options)}: ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`
}

function optionsError(error: z.ZodError, schema: z.ZodType, options: unknown, words: OptionWords): ConfigurationError {
  return new ConfigurationError(`${PLUGIN_NAME}: ${error.issues.map((issue) => describeIssue(issue, schema, options, words)).join('; ')}.`)
}

/** An env var's value; a malformed one is a problem of the build that runs, not an error here. */
function fromEnv(env: Env, name: string, check: (value: string) => boolean, expected: string, problems: string[]): string | undefined {
  const value = env[name]
  if (value === undefined || value === '') return undefined
  if (check(value)) return value
  problems.push(`env ${name} ${expected}`)
  return undefined
}

function isEngineChoice(value: string): boolean {
  return (ENGINE_CHOICES as readonly string[]).includes(value)
}

function isHttpUrl(value: string): boolean {
  return httpUrl.safeParse(value).success
}

/** `https://host/app` → `https://host/app/`: the site is a directory, and relative pages resolve inside it. */
function directoryUrl(value: string): URL {
  const url = new URL(value)
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  url.search = ''
  url.hash = ''
  return url
}

export function relativePageError(url: string, words: OptionWords = PLUGIN_WORDS): ConfigurationError {
  return new ConfigurationError(`${PLUGIN_NAME}: ${relativePageProblem(url, words)}`)
}

function relativePageProblem(url: string, words: OptionWords): string {
  return `page "${url}" is relative, and no site URL is set. Set ${ENV.siteUrl}${words.orOption('siteUrl')} to where the site is deployed, or give the page as an absolute URL`
}

/**
 * Checks `options` and makes every decision: defaults, env vars (options first), remote or
 * embedded mode. Throws a ConfigurationError naming the option at fault (in `words`: the
 * folder command names its flags); what depends on env vars or on options together goes
 * into `problems`, thrown when a build runs.
 */
export function resolveOptions(options: Options = {}, env: Env = process.env, words: OptionWords = PLUGIN_WORDS): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options ?? {})
  if (!parsed.success) throw optionsError(parsed.error, optionsSchema, options, words)
  const value = parsed.data
  const problems: string[] = []
  const baseUrl = value.baseUrl ?? fromEnv(env, ENV.baseUrl, isHttpUrl, 'must be an absolute http(s) URL', problems)
  const token = value.token ?? fromEnv(env, ENV.token, (t) => TOKEN_PATTERN.test(t), TOKEN_RULE, problems)
  const siteUrl = value.siteUrl ?? fromEnv(env, ENV.siteUrl, isHttpUrl, 'must be an absolute http(s) URL', problems)
  const pages = value.pages?.map((page) => (typeof page === 'string' ? { url: page, html: null } : { url: page.url, html: page.html ?? null })) ?? null
  const engine = value.engine ?? (fromEnv(env, ENV.engine, isEngineChoice, `must be one of ${ENGINE_CHOICES.join(', ')}`, problems) as EngineChoice | undefined) ?? 'auto'

  let service: RemoteService | null = null
  if (baseUrl !== undefined) {
    if (token === undefined) problems.push(`no API token for ${describeBaseUrl(baseUrl)}. Set ${ENV.token}${words.orOption('token')}`)
    else service = { baseUrl, token: new Secret(token) }
    // Embedded mode serves the pages itself; a service has to be told where they are.
    const relative = siteUrl === undefined ? pages?.find((page) => !URL.canParse(page.url)) : undefined
    if (relative) problems.push(relativePageProblem(relative.url, words))
    // The service renders with its own engine: a choice of this build's would be silently ignored.
    if (engine !== 'auto') problems.push(`${value.engine !== undefined ? words.name('engine') : `env ${ENV.engine}`} is '${engine}', which picks what renders when no service is configured; ${describeBaseUrl(baseUrl)} renders with its own engine (critical-css-service --engine). Leave it out, or unset ${ENV.baseUrl}${words.orOption('baseUrl')}`)
  }
  return {
    pages,
    service,
    siteUrl: siteUrl === undefined ? null : directoryUrl(siteUrl),
    viewports: value.viewports ?? DEFAULT_VIEWPORTS.map((viewport) => ({ ...viewport })),
    preload: value.preload ?? DEFAULT_PRELOAD,
    thirdParty: value.thirdParty ?? null,
    selection: normalizeSelection({ keep: strings(value.keep), drop: strings(value.drop), states: value.states, fontFaces: value.keepFontFaces, keyframes: value.keepKeyframes }),
    selectionPatterns: patterns(value.keep, value.drop),
    preloadFonts: value.preloadFonts ?? false,
    samples: new Map(Object.entries(value.samples ?? {}).map(([route, paths]) => [route, [...new Set(typeof paths === 'string' ? [paths] : paths)]])),
    nonce: value.nonce ?? null,
    concurrency: value.concurrency ?? null,
    timeoutMs: value.timeout ?? DEFAULT_TIMEOUT_MS,
    strict: value.strict ?? false,
    cache: value.cache === false ? null : { dir: value.cache?.dir ?? null, ttlMs: value.cache?.ttl ?? DEFAULT_CACHE_TTL_MS },
    report: value.report || null,
    rateLimit: value.rateLimit ?? null,
    enabled: value.enabled ?? null,
    engine,
    problems,
    words,
  }
}

/** Options of `processDirectory` and the CLI: the plugin's, and where the folder is served. */
export interface DirectoryOptions extends Options {
  /**
   * The path the site is served below, as the bundler's `base` says it: `/docs/` for a site
   * at `https://example.com/docs/`. Default `/`.
   */
  base?: string
}

const directoryOptionsSchema = optionsSchema.extend({
  base: z.string().regex(/^\/(?!\/)/, 'must be a path that starts with one /, like /docs/').optional(),
} satisfies Pick<ShapeOf<DirectoryOptions>, 'base'>)
const schemaMatchesDirectoryOptions: Same<z.input<typeof directoryOptionsSchema>, DirectoryOptions> = true
void schemaMatchesDirectoryOptions

/**
 * What a framework's config says of where its site is served, as the framework spells it;
 * the integrations fill it in and `resolveDirectoryOptions` normalises it, once.
 */
export interface FrameworkSite {
  /** The framework, as messages name it (`Astro`). */
  name: string
  /**
   * Its base path as written in its config: `/docs/`, `/docs`, `docs` or `` (SvelteKit's
   * `paths.base`, Eleventy's `pathPrefix`). The `base` option wins over it.
   */
  base?: string | undefined
  /** Where it says the site is deployed (Astro's `site`): the site URL when neither the `siteUrl` option nor the env var says. */
  siteUrl?: string | undefined
}

/** Where `resolveDirectoryOptions` reads what the options do not say. */
export interface DirectorySources {
  /** Env vars to read `CRITICAL_CSS_*` from. Default: `process.env`. */
  env?: Env | undefined
  framework?: FrameworkSite | undefined
}

/** A folder's options, resolved: the plugin's, and the base path the folder is served below (`/`, `/docs/`). */
export interface ResolvedDirectoryOptions {
  options: ResolvedOptions
  base: string
  /**
   * Whether something said the base: the `base` option, the framework's config, or the path
   * of the site URL. A base nothing said is `/`, and the pages' own links may tell another
   * (`inferBase`, base-check.ts).
   */
  baseSaid: boolean
}

/** A framework's base path as a path prefix: `docs`, `/docs` and `/docs/` are all `/docs/`; `` is `/`. */
function frameworkBase(base: string): string {
  return `/${base}/`.replace(/\/{2,}/g, '/')
}

/**
 * `resolveOptions` for a folder: the same decisions, and the base path it is served below,
 * with what a framework says filled in where the options and env vars are silent, then the
 * site URL's path.
 */
export function resolveDirectoryOptions(options: DirectoryOptions = {}, sources: DirectorySources = {}, words: OptionWords = PLUGIN_WORDS): ResolvedDirectoryOptions {
  const parsed = directoryOptionsSchema.safeParse(options ?? {})
  if (!parsed.success) throw optionsError(parsed.error, directoryOptionsSchema, options, words)
  const { base, ...rest } = parsed.data
  const env = sources.env ?? process.env
  const framework = sources.framework
  const site = rest.siteUrl === undefined && !env[ENV.siteUrl] ? framework?.siteUrl : undefined
  if (site !== undefined && !isHttpUrl(site)) {
    throw new ConfigurationError(`${PLUGIN_NAME}: ${framework!.name}'s site URL "${site}" is not an absolute http(s) URL; fix it there, or set ${ENV.siteUrl}${words.orOption('siteUrl')}.`)
  }
  const resolved = resolveOptions(site === undefined ? rest : { ...rest, siteUrl: site }, env, words)
  // A site deployed at `https://host/app/` is served below `/app/`: its pages are planned there, and its links point there.
  const sitePath = resolved.siteUrl !== null && resolved.siteUrl.pathname !== '/' ? resolved.siteUrl.pathname : undefined
  const said = base ?? (framework?.base === undefined ? sitePath : frameworkBase(framework.base))
  return { options: resolved, base: said ?? '/', baseSaid: said !== undefined }
}

/** Throws what `resolveOptions` found wrong, if anything: one message, every problem. */
export function assertRunnable(options: ResolvedOptions): void {
  if (options.problems.length > 0) throw new ConfigurationError(`${PLUGIN_NAME}: ${options.problems.join('; ')}.`)
}

/** What an adapter knows about the build it is in. */
export interface BuildKind {
  /** A production build (Vite's mode, webpack's mode; Rollup, Rolldown and esbuild have none: true). */
  production: boolean
  /** A watch or serve rebuild. */
  watch: boolean
  /** A bundle that paints no page: a server (SSR, node-target) or library build. */
  pageless: boolean
}

/**
 * Whether the plugin runs in this build: the `enabled` option, else production client
 * builds only. When it runs, the configuration's problems fail the build now, before the
 * bundler does any work. Every adapter decides through this one function.
 */
export function enabledFor(options: ResolvedOptions, build: BuildKind): boolean {
  const enabled = options.enabled ?? (build.production && !build.watch && !build.pageless)
  if (enabled) assertRunnable(options)
  return enabled
}

/** `keep`/`drop`'s RegExps are matched against a build's stylesheets, which are not known yet. */
export interface SelectionPatterns {
  keep: RegExp[]
  drop: RegExp[]
}

function strings(list: readonly (string | RegExp)[] | undefined): string[] | undefined {
  return list?.filter((entry) => typeof entry === 'string')
}

function patterns(keep: readonly (string | RegExp)[] | undefined, drop: readonly (string | RegExp)[] | undefined): SelectionPatterns | null {
  const only = (list: readonly (string | RegExp)[] | undefined): RegExp[] => (list ?? []).filter((entry) => entry instanceof RegExp)
  const found = { keep: only(keep), drop: only(drop) }
  return found.keep.length + found.drop.length > 0 ? found : null
}
