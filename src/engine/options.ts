/**
 * The Chromium engine's options, and their defaults: resolved once, when the engine is
 * created; every room after that reads the resolved values and defaults nothing itself.
 */
import type { EgressGate } from './engine.ts'
import { INSTALL_HINT, findChromium, type BrowserOptions } from './browser.ts'
import { CPU_SECONDS, CPU_SHARE } from './renderers.ts'

/** Longest wait for the page's first response. */
export const DEFAULT_NAVIGATION_TIMEOUT_MS = 15_000
/** Longest wait for the page's own subresources once it answered. */
export const DEFAULT_LOAD_TIMEOUT_MS = 5000
/** Longest wait for the page's own web fonts after load. */
export const DEFAULT_FONTS_TIMEOUT_MS = 2000
/** Pages kept warm between jobs, across tenants. */
export const DEFAULT_WARM_PAGES = 3

export interface ChromiumEngineOptions {
  /** The browser executable. Default: {@link findChromium}. */
  executablePath?: string
  /** Extra command-line flags, after ours. */
  browserArgs?: string[]
  /**
   * Opens the way out for one browser context: every connection the context makes (the
   * page, its redirects, subresources, workers, WebSockets, prefetches; loopback included)
   * goes through the gate's proxy, and the browser resolves no name itself. The service
   * passes its egress proxy, so a page reaches nothing its network policy refuses.
   * Without it the browser connects directly (the embedded mode, rendering its own build).
   */
  egress?: () => Promise<EgressGate>
  /** Longest wait for the page's first response. Default 15 s (never past the job's deadline). */
  navigationTimeoutMs?: number
  /**
   * Longest wait for the page's own subresources after that (its stylesheets, and whatever
   * it loads from its own origin). Other hosts' scripts, images and fonts are not waited for
   * once those are in: a third-party host that does not answer holds no job. Default 5 s.
   */
  loadTimeoutMs?: number
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
   * Pages kept warm between jobs, across tenants (the least recently used goes first). A job
   * of a tenant with a warm page skips opening a context, and gets its HTTP cache; the page is
   * cleared between jobs. The service passes one more than its workers. Default 3.
   */
  warmPages?: number
  /**
   * Engine events: `browser_crashed` (relaunched, the job tried once more), `renderer_crashed`,
   * `browser_unresponsive` (killed and replaced), `renderer_reniced`, `renderer_memory_unbounded`,
   * `chromium_sandbox_unavailable` (the system gives Chromium no sandbox: it runs without).
   */
  log?: (line: Record<string, unknown>) => void
}

/** {@link ChromiumEngineOptions} with every default filled in: the browser's part, and the pages' and loads'. */
export interface ResolvedEngineOptions extends BrowserOptions {
  navigationTimeoutMs: number
  loadTimeoutMs: number
  fontsTimeoutMs: number
  freshLoadPerViewport: boolean
  warmPages: number
}

/** Throws a hint to install a browser when none is found. */
export function resolveEngineOptions(options: ChromiumEngineOptions): ResolvedEngineOptions {
  return {
    executablePath: executableOf(options.executablePath),
    browserArgs: options.browserArgs ?? [],
    egress: options.egress,
    navigationTimeoutMs: options.navigationTimeoutMs ?? DEFAULT_NAVIGATION_TIMEOUT_MS,
    loadTimeoutMs: options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
    fontsTimeoutMs: options.fontsTimeoutMs ?? DEFAULT_FONTS_TIMEOUT_MS,
    rendererCpu: { share: options.rendererCpu?.share ?? CPU_SHARE, seconds: options.rendererCpu?.seconds ?? CPU_SECONDS },
    freshLoadPerViewport: options.freshLoadPerViewport ?? false,
    warmPages: options.warmPages ?? DEFAULT_WARM_PAGES,
    log: options.log ?? (() => {}),
  }
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
