/**
 * The Chromium engine's options, and their defaults: resolved once, when the engine is
 * created; every room after that reads the resolved values and defaults nothing itself.
 */
import { admitEveryHost, type Admit } from './egress.ts'
import type { BrowserOptions } from './browser.ts'
import { INSTALL_HINT, findChromium } from './find-browsers.ts'
import { CPU_SECONDS, CPU_SHARE } from './renderers.ts'

/** Longest wait for the page's first response. */
export const DEFAULT_NAVIGATION_TIMEOUT_MS = 15_000
/** Longest wait for the page's own subresources once it answered. */
export const DEFAULT_LOAD_TIMEOUT_MS = 5000
/** Longest wait for the page's own web fonts after load. */
export const DEFAULT_FONTS_TIMEOUT_MS = 2000
/**
 * Longest another host may hold a page once the page's own resources are in. A CDN answers
 * a cold request (name, connection, TLS, first byte) in 50–300 ms from a build machine; past
 * 1 s it is stalled or its name's answer was lost, and the page goes on without it.
 */
export const DEFAULT_THIRD_PARTY_TIMEOUT_MS = 1000
/** Pages kept warm between jobs, across tenants. */
export const DEFAULT_WARM_PAGES = 3
/**
 * Time without a job after which the pages opened ahead of the next job are closed: jobs of a
 * build come seconds apart, so past this the build is over and a spare only holds its renderers.
 */
export const DEFAULT_SPARES_IDLE_MS = 30_000
/**
 * Time without a job after which the warm pages are closed too, and an idle engine keeps only its
 * browser: long enough for the builds of one CI run, one after the other, to find their pages warm.
 */
export const DEFAULT_WARM_IDLE_MS = 5 * 60_000

export interface ChromiumEngineOptions {
  /** The browser executable. Default: {@link findChromium}. */
  executablePath?: string
  /** Extra command-line flags, after ours. */
  browserArgs?: string[]
  /**
   * Where a connection may go. Every connection a browser context makes (the page, its
   * redirects, subresources, workers, WebSockets, prefetches; loopback included) goes through
   * the engine's egress gate, which resolves names within its own bound (the browser resolves
   * none) and asks this. The service passes its network policy, so a page reaches nothing the
   * policy refuses. Default: every host, resolved by the system.
   */
  admit?: Admit
  /** Longest wait for the page's first response. Default 15 s (never past the job's deadline). */
  navigationTimeoutMs?: number
  /**
   * Longest wait for the page's own subresources after that (its stylesheets, and whatever
   * it loads from its own origin). An own stylesheet still loading past it fails the job. Default 5 s.
   */
  loadTimeoutMs?: number
  /**
   * Longest another host's script, stylesheet, font or fetch may be pending (from when it was
   * sent) once the page's own resources are in; then (third party `cut`) its host is cut and
   * the page goes on as a browser does after a network error. Default 1 s.
   */
  thirdPartyTimeoutMs?: number
  /** Longest wait for the page's own web fonts after load (another host's font gets 300 ms at most). Default 2 s. */
  fontsTimeoutMs?: number
  /**
   * A page's renderer that keeps more than `share` of one core busy for `seconds` in a row
   * runs at the lowest priority from then on (Linux). Default 0.2 for 3 s.
   */
  rendererCpu?: { share?: number; seconds?: number }
  /**
   * Load the page afresh at each viewport instead of resizing it after one load. Only a page
   * whose scripts read the window size once, at load, needs it; it costs one more load per
   * viewport. Default false.
   */
  freshLoadPerViewport?: boolean
  /**
   * After extraction, render each viewport's first screen with only the critical CSS and
   * compare it with the full render: rules of elements the critical CSS showed out of place
   * (pushed out of the first screen by their own rules, or widening the document) are added,
   * and what still differs is reported with the job (`first_screen`). Default true.
   */
  checkFirstScreen?: boolean
  /**
   * Pages kept warm between jobs, across tenants (the least recently used goes first). A job
   * of a tenant with a warm page skips opening a context, and gets its HTTP cache; the page is
   * cleared between jobs. The service passes one more than its workers. Default 3.
   */
  warmPages?: number
  /**
   * Whether a page is opened ahead after a job that had no warm page, for the next tenant's
   * first job; spares are opened at `ready()` either way. An engine with one tenant (the
   * embedded service) passes false: its jobs run on their warm pages, and a spare nobody
   * takes is a renderer's memory for nothing. Default true.
   */
  sparesAfterJobs?: boolean
  /**
   * How long the engine may go without a job (none started or finished) before it closes the pages
   * it keeps: `spares`, the pages opened ahead of the next job, and `warm`, the tenants' warm pages.
   * The next job opens its page afresh, with the same result. `Infinity` keeps them. Default 30 s
   * for spares, 5 min for warm pages.
   */
  idleMs?: { spares?: number; warm?: number }
  /**
   * Engine events: `browser_crashed` (relaunched, the job tried once more), `renderer_crashed`,
   * `browser_unresponsive` (killed and replaced), `renderer_reniced`, `renderer_memory_unbounded`,
   * `chromium_sandbox_unavailable` (the system gives Chromium no sandbox: it runs without),
   * `warm_page_renewed` (a tenant's page could not be cleared in time, or left its page only
   * by the browser's navigation: the next job's page costs a new renderer).
   */
  log?: (line: Record<string, unknown>) => void
}

/** {@link ChromiumEngineOptions} with every default filled in: the browser's part, and the pages' and loads'. */
export interface ResolvedEngineOptions extends Omit<BrowserOptions, 'egress'> {
  admit: Admit
  navigationTimeoutMs: number
  loadTimeoutMs: number
  thirdPartyTimeoutMs: number
  fontsTimeoutMs: number
  freshLoadPerViewport: boolean
  checkFirstScreen: boolean
  warmPages: number
  sparesAfterJobs: boolean
  idleMs: { spares: number; warm: number }
}

/** Throws a hint to install a browser when none is found. */
export function resolveEngineOptions(options: ChromiumEngineOptions): ResolvedEngineOptions {
  return {
    executablePath: executableOf(options.executablePath),
    browserArgs: options.browserArgs ?? [],
    admit: options.admit ?? admitEveryHost,
    navigationTimeoutMs: options.navigationTimeoutMs ?? DEFAULT_NAVIGATION_TIMEOUT_MS,
    loadTimeoutMs: options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
    thirdPartyTimeoutMs: options.thirdPartyTimeoutMs ?? DEFAULT_THIRD_PARTY_TIMEOUT_MS,
    fontsTimeoutMs: options.fontsTimeoutMs ?? DEFAULT_FONTS_TIMEOUT_MS,
    rendererCpu: { share: options.rendererCpu?.share ?? CPU_SHARE, seconds: options.rendererCpu?.seconds ?? CPU_SECONDS },
    freshLoadPerViewport: options.freshLoadPerViewport ?? false,
    checkFirstScreen: options.checkFirstScreen ?? true,
    warmPages: options.warmPages ?? DEFAULT_WARM_PAGES,
    sparesAfterJobs: options.sparesAfterJobs ?? true,
    idleMs: { spares: idleOption('spares', options.idleMs?.spares, DEFAULT_SPARES_IDLE_MS), warm: idleOption('warm', options.idleMs?.warm, DEFAULT_WARM_IDLE_MS) },
    log: options.log ?? (() => {}),
  }
}

/** An idle time given, else its default: a positive number of milliseconds (Infinity: never). */
function idleOption(name: string, given: number | undefined, fallback: number): number {
  if (given === undefined) return fallback
  if (typeof given !== 'number' || Number.isNaN(given) || given <= 0) throw new TypeError(`idleMs.${name} must be a positive number of milliseconds (Infinity: never), got ${String(given)}.`)
  return given
}

/** The executable given, else the one found; a CHROME_PATH that names nothing says so. */
function executableOf(given: string | undefined): string {
  const executablePath = given ?? findChromium()
  if (!executablePath && given === undefined && process.env.CHROME_PATH) {
    throw new Error(`CHROME_PATH is set to ${process.env.CHROME_PATH}, which does not exist. ${INSTALL_HINT}`)
  }
  if (!executablePath) throw new Error(INSTALL_HINT)
  return executablePath
}
