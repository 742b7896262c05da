/**
 * The plugin's options: their documented types, the zod schema that checks them when the
 * plugin is created, and `resolveOptions`, which returns every default filled in so that
 * nothing downstream re-checks one.
 */
import { z } from 'zod'
import { TOKEN_PATTERN, VIEWPORT_LIMITS, DEFAULT_VIEWPORTS, type Viewport } from '../contract/api-contract.ts'
import type { RateLimitOption } from '../client/client.ts'
import { describeBaseUrl } from '../client/errors.ts'
import { PRELOAD_STRATEGIES, type PreloadStrategy } from '../html/inline.ts'
import { ConfigurationError } from './errors.ts'

export const ENV = {
  baseUrl: 'CRITICAL_CSS_BASE_URL',
  token: 'CRITICAL_CSS_API_TOKEN',
  siteUrl: 'CRITICAL_CSS_SITE_URL',
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
  /** How long a result stays valid, in ms. Default 24 h. */
  ttl?: number
}

export interface Options {
  /**
   * Pages to give critical CSS: URLs (absolute or relative to `siteUrl`) or `{ url, html }`.
   * Default: every `.html` file the build emits, at `siteUrl` + base + its path.
   */
  pages?: (string | PageOption)[]
  /** Base URL of the Critical CSS Generation API. Default: env `CRITICAL_CSS_BASE_URL`. */
  baseUrl?: string
  /** API token. Default: env `CRITICAL_CSS_API_TOKEN`. Never logged, reported or cached. */
  token?: string
  /** Where the site is deployed, e.g. `https://example.com`; relative page URLs resolve against it. Default: env `CRITICAL_CSS_SITE_URL`. */
  siteUrl?: string
  /** Viewports the CSS must cover (1–4). Default: the service's, 1300×900 and 412×915. */
  viewports?: Viewport[]
  /**
   * How the full stylesheets load once the critical CSS is inlined. Default `'body'`:
   * moved to the end of `<body>`, no inline event handler, so it works under a strict CSP.
   */
  preload?: PreloadStrategy
  /** Nonce put on the inlined `<style>` (and on the `body` strategy's preload links) for a CSP with nonces. */
  nonce?: string
  /** Most pages in flight at once. Default: what the plan's rate limit can serve within `timeout`. */
  concurrency?: number
  /** Per page, in ms, counted from when its generate request is queued. Default 120 000. */
  timeout?: number
  /** Fail the build (after every page finished) when any page could not get critical CSS. Default false: warn. */
  strict?: boolean
  /** Cache results across builds, or `false` for none. Default `{ dir: 'node_modules/.cache/unplugin-critical-css', ttl: 24 h }`. */
  cache?: false | CacheOption
  /** Also write the report as JSON to this path (relative to the project root, as `cache.dir`). Default false. */
  report?: false | string
  /** Pace to keep instead of the plan's, for self-hosted services with limits of their own. */
  rateLimit?: RateLimitOption
  /** Run in this build. Default: production builds of client code only, not dev servers, watch rebuilds or SSR. */
  enabled?: boolean
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

export interface ResolvedOptions {
  /** Null: every emitted HTML file. */
  pages: ResolvedPage[] | null
  baseUrl: string | null
  token: Secret | null
  siteUrl: URL | null
  viewports: Viewport[]
  preload: PreloadStrategy
  nonce: string | null
  /** Null: derived from the plan. */
  concurrency: number | null
  timeoutMs: number
  strict: boolean
  /** `dir` null: the default, below the nearest package.json. */
  cache: { dir: string | null; ttlMs: number } | null
  report: string | null
  rateLimit: RateLimitOption | null
  /** Null: decided by the kind of build. */
  enabled: boolean | null
  /** Malformed env vars the options did not override: an error once the plugin runs, not in a dev server. */
  envProblems: string[]
}

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

const positiveMs = z.number().int().positive().max(2 ** 31 - 1)

export const optionsSchema = z.strictObject({
  pages: z
    .array(
      z.union([z.string().min(1), z.strictObject({ url: z.string().min(1), html: z.string().min(1).optional() })], {
        error: 'must be a page URL or { url, html? }',
      }),
    )
    .optional(),
  baseUrl: httpUrl.optional(),
  token: z.string().regex(TOKEN_PATTERN, 'must be 16–256 printable ASCII characters without spaces').optional(),
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
  nonce: z.string().max(256).regex(/^[A-Za-z0-9+/_=-]+$/, 'must be a base64 or base64url value').optional(),
  concurrency: z.number().int().positive().optional(),
  timeout: positiveMs.optional(),
  strict: z.boolean().optional(),
  cache: z.union([z.literal(false), z.strictObject({ dir: z.string().min(1).optional(), ttl: positiveMs.optional() })]).optional(),
  report: z.union([z.literal(false), z.string().min(1)]).optional(),
  rateLimit: z
    .strictObject({ requestsPerMinute: z.number().int().positive().nullable(), windowMs: positiveMs.optional() })
    .optional(),
  enabled: z.boolean().optional(),
})

type Env = Readonly<Record<string, string | undefined>>

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('').slice(1) : ''
  if (issue.code === 'unrecognized_keys') {
    const where = path ? `\`${path}\` has` : 'there is'
    return `${where} an unknown option ${issue.keys.map((key) => `\`${key}\``).join(', ')}`
  }
  // The token must not be echoed back, even when it is malformed.
  return `option \`${path || '(options)'}\`: ${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)}`
}

/** An env var's value; a malformed one is recorded, not thrown: it only matters in a build that runs. */
function fromEnv(env: Env, name: string, check: (value: string) => boolean, expected: string, problems: string[]): string | undefined {
  const value = env[name]
  if (value === undefined || value === '') return undefined
  if (check(value)) return value
  problems.push(`env ${name} ${expected}`)
  return undefined
}

function isHttpUrl(value: string): boolean {
  return httpUrl.safeParse(value).success
}

/**
 * Checks `options` and fills in every default. Env vars fill in what the options leave out.
 * Throws a ConfigurationError naming the option at fault; a malformed env var fails the
 * build that uses it (`configuredService`), not a dev server where the plugin is off.
 */
export function resolveOptions(options: Options = {}, env: Env = process.env): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options ?? {})
  if (!parsed.success) {
    const issues = parsed.error.issues.map(describeIssue)
    throw new ConfigurationError(`unplugin-critical-css: ${issues.join('; ')}.`)
  }
  const value = parsed.data
  const envProblems: string[] = []
  const baseUrl = value.baseUrl ?? fromEnv(env, ENV.baseUrl, isHttpUrl, 'must be an absolute http(s) URL', envProblems)
  const token = value.token ?? fromEnv(env, ENV.token, (t) => TOKEN_PATTERN.test(t), 'must be 16–256 printable ASCII characters without spaces', envProblems)
  const siteUrl = value.siteUrl ?? fromEnv(env, ENV.siteUrl, isHttpUrl, 'must be an absolute http(s) URL', envProblems)
  const cache = value.cache === false ? null : { dir: value.cache?.dir ?? null, ttlMs: value.cache?.ttl ?? DEFAULT_CACHE_TTL_MS }
  return {
    pages: value.pages?.map((page) => (typeof page === 'string' ? { url: page, html: null } : { url: page.url, html: page.html ?? null })) ?? null,
    baseUrl: baseUrl ?? null,
    token: token === undefined ? null : new Secret(token),
    siteUrl: siteUrl === undefined ? null : directoryUrl(siteUrl),
    viewports: value.viewports ?? DEFAULT_VIEWPORTS.map((viewport) => ({ ...viewport })),
    preload: value.preload ?? 'body',
    nonce: value.nonce ?? null,
    concurrency: value.concurrency ?? null,
    timeoutMs: value.timeout ?? DEFAULT_TIMEOUT_MS,
    strict: value.strict ?? false,
    cache,
    report: value.report || null,
    rateLimit: value.rateLimit ?? null,
    enabled: value.enabled ?? null,
    envProblems,
  }
}

/**
 * The service a build talks to: the configured one (remote mode), or null for embedded
 * mode, when neither `baseUrl` nor CRITICAL_CSS_BASE_URL is set. A ConfigurationError names
 * what is missing or malformed.
 */
export function configuredService(options: ResolvedOptions): { baseUrl: string; token: Secret } | null {
  if (options.envProblems.length > 0) throw new ConfigurationError(`unplugin-critical-css: ${options.envProblems.join('; ')}.`)
  if (options.baseUrl === null) return null
  if (options.token === null) {
    throw new ConfigurationError(
      `unplugin-critical-css: no API token for ${describeBaseUrl(options.baseUrl)}. Set ${ENV.token} (or the \`token\` option).`,
    )
  }
  return { baseUrl: options.baseUrl, token: options.token }
}

/**
 * What can be known wrong before the bundler does any work: malformed env vars, a service
 * without a token, a relative page and no site URL in remote mode (embedded mode serves
 * the pages itself). Adapters call it when the build starts.
 */
export function checkServiceOptions(options: ResolvedOptions): void {
  if (configuredService(options) === null) return
  if (options.siteUrl !== null || options.pages === null) return
  const relative = options.pages.find((page) => !URL.canParse(page.url))
  if (relative) {
    throw relativePageError(relative.url)
  }
}

export function relativePageError(url: string): ConfigurationError {
  return new ConfigurationError(
    `unplugin-critical-css: page "${url}" is relative, and no site URL is set. Set ${ENV.siteUrl} (or the \`siteUrl\` option) to where the site is deployed, or give the page as an absolute URL.`,
  )
}

/** `https://host/app` → `https://host/app/`: the site is a directory, and relative pages resolve inside it. */
function directoryUrl(value: string): URL {
  const url = new URL(value)
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  url.search = ''
  url.hash = ''
  return url
}
