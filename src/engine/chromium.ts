/**
 * The Chromium engine: a system Chrome/Chromium driven by playwright-core (never a
 * downloaded browser), launched once and reused, one browser context per job and viewport.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { Browser, BrowserContext, Page, Response } from 'playwright-core'
import type { Viewport } from '../contract/api-contract.ts'
import { CRITICAL_STYLE_ATTRIBUTE } from '../html/outline.ts'
import { EngineError, type EgressGate, type Engine, type EngineInput } from './engine.ts'
import { CriticalCss, type Answers, type Questions } from './css.ts'
import { cssomText, probe, settle, type ProbeOutput, type SettledPage } from './extract.ts'
import { combineSheets, type AppliedSheet } from './sheets.ts'

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']
const INSTALL_PATHS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
]

export const INSTALL_HINT =
  'No Chrome or Chromium found. Install one (Debian/Ubuntu: `apt-get install -y chromium`; macOS: install Google Chrome) or set CHROME_PATH to its executable.'

/** `CHROME_PATH`, then the usual names on PATH, then the usual install paths; null when none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CHROME_PATH) return existsSync(env.CHROME_PATH) ? env.CHROME_PATH : null
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    for (const name of NAMES) {
      const candidate = join(dir, name)
      if (existsSync(candidate)) return candidate
    }
  }
  return INSTALL_PATHS.find((path) => existsSync(path)) ?? null
}

/** Flags for a browser on a closed network: no traffic of its own, nothing to set up. */
const CLOSED_NETWORK_FLAGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--no-default-browser-check',
  '--hide-scrollbars',
  '--mute-audio',
]

/**
 * The engine's Chromium flags, for every browser that should render as it does (tests, the
 * quality bench). Chromium refuses to start as root with its sandbox; only then is it off.
 */
export function chromiumFlags(): string[] {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  return [...CLOSED_NETWORK_FLAGS, ...(root ? ['--no-sandbox'] : [])]
}

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
  /** Longest wait for the load event after that: slow or unreachable subresources do not hold a job longer. Default 5 s. */
  loadTimeoutMs?: number
  /** Longest wait for web fonts after load. Default 2 s. */
  fontsTimeoutMs?: number
  /** Engine events (a browser relaunched). */
  log?: (line: Record<string, unknown>) => void
}

export interface ChromiumEngine extends Engine {
  /** Launches the browser now (else the first job does): a browser that cannot start fails here, with its reason. */
  ready(): Promise<void>
  close(): Promise<void>
}

/** Throws a hint to install a browser when none is found; the browser itself starts with the first job. */
export function createChromiumEngine(options: ChromiumEngineOptions = {}): ChromiumEngine {
  const executablePath = options.executablePath ?? findChromium()
  if (!executablePath && options.executablePath === undefined && process.env.CHROME_PATH) {
    throw new Error(`CHROME_PATH is set to ${process.env.CHROME_PATH}, which does not exist. ${INSTALL_HINT}`)
  }
  if (!executablePath) throw new Error(INSTALL_HINT)
  return new ChromiumCriticalCss(executablePath, options)
}

/** Time kept back from the deadline for measuring the page and writing its CSS. */
const EXTRACT_RESERVE_MS = 1500
const SHEET_CACHE_SIZE = 16
const BODY_CACHE_SIZE = 64
/** Contexts opened ahead of the next job: starting a page's renderer is most of a small page's cost. */
const MAX_SPARE_PAGES = 4
const DEFAULT_DEADLINE_MS = 60_000
/** Navigations after the first load (meta refresh, `location` by script) followed before a page is given up on. */
const MAX_PAGE_HOPS = 3
/** A meta refresh due within this long is waited for; a later one leaves the page as it is. */
const MAX_REFRESH_WAIT_MS = 3000
/** Most CSS text one page may hold, every stylesheet together (the biggest sites ship a few MiB). */
const MAX_STYLESHEET_CHARS = 8 * 1024 * 1024

class ChromiumCriticalCss implements ChromiumEngine {
  readonly #executablePath: string
  readonly #options: ChromiumEngineOptions
  #browser: Promise<Browser> | null = null
  /** The browser #browser resolved to, so a dead one is forgotten at once. */
  #launched: Browser | null = null
  #closed = false
  readonly #sheetCache = new Map<string, { critical: CriticalCss; imports: Map<string, string | undefined> }>()
  readonly #bodies = new Map<string, FetchedSheet>()
  /** Tagged with their browser up front: a dead browser's pending pages never settle. */
  #spares: { browser: Browser; viewport: Viewport; ready: Promise<Spare | null> }[] = []

  constructor(executablePath: string, options: ChromiumEngineOptions) {
    this.#executablePath = executablePath
    this.#options = options
  }

  async generate(input: EngineInput): Promise<{ css: string }> {
    const browser = await this.#launch()
    try {
      return await this.#render(browser, input)
    } catch (error) {
      if (input.signal.aborted || this.#closed || !(error instanceof BrowserCrash || !browser.isConnected())) throw error
      // The browser (or the page's renderer) died under this job: a fresh one gets one more try.
      this.#options.log?.({ event: 'browser_crashed', relaunch: !browser.isConnected() })
      if (!browser.isConnected()) this.#forget(browser)
      return await this.#render(await this.#launch(), input)
    }
  }

  async ready(): Promise<void> {
    await this.#launch()
  }

  async close(): Promise<void> {
    this.#closed = true
    const browser = this.#browser
    this.#browser = null
    const spares = this.#spares
    this.#spares = []
    for (const spare of spares) void spare.ready.then((ready) => ready && discard(ready))
    if (browser) await (await browser.catch(() => null))?.close().catch(() => {})
  }

  #launch(): Promise<Browser> {
    if (this.#closed) return Promise.reject(new EngineError('render_failed', 'The engine is closed.'))
    this.#browser ??= launchBrowser(this.#executablePath, this.#options.browserArgs ?? [], this.#options.egress).then(
      (browser) => {
        this.#launched = browser
        browser.on('disconnected', () => this.#forget(browser))
        return browser
      },
      (error: unknown) => {
        this.#browser = null
        throw error
      },
    )
    return this.#browser
  }

  /** A fresh context and page: a spare opened ahead when one is ready (one of this viewport's size first), else a new one. */
  async #page(browser: Browser, viewport: Viewport): Promise<Spare> {
    this.#spares = this.#spares.filter((spare) => spare.browser === browser)
    const fits = this.#spares.findIndex((spare) => sameSize(spare.viewport, viewport))
    const taken = this.#spares.splice(fits >= 0 ? fits : 0, 1)[0]
    return (await taken?.ready) ?? (await this.#newPage(browser, viewport))
  }

  /** Spares for the next job, one per viewport of this one: a page's renderer takes a while to start. */
  #refill(browser: Browser, viewports: Viewport[]): void {
    for (const viewport of viewports.slice(0, MAX_SPARE_PAGES)) {
      if (this.#spares.filter((spare) => sameSize(spare.viewport, viewport)).length >= viewports.filter((other) => sameSize(other, viewport)).length) continue
      this.#spares.push({ browser, viewport, ready: this.#newPage(browser, viewport).catch(() => null) })
    }
    this.#spares.splice(0, Math.max(0, this.#spares.length - MAX_SPARE_PAGES)).forEach((spare) => void spare.ready.then((ready) => ready && discard(ready)))
  }

  async #newPage(browser: Browser, viewport: Viewport): Promise<Spare> {
    const gate = (await this.#options.egress?.()) ?? null
    try {
      // Playwright keeps loopback on the proxy for a context (`<-loopback>`): nothing bypasses the gate.
      const context = await browser.newContext({ viewport, deviceScaleFactor: 1, serviceWorkers: 'block', ...(gate ? { proxy: { server: gate.server } } : {}) })
      return { browser, viewport, context, page: await context.newPage(), gate }
    } catch (error) {
      gate?.close()
      throw error
    }
  }

  #forget(browser: Browser): void {
    if (this.#launched !== browser) return
    this.#launched = null
    this.#browser = null
  }

  async #render(browser: Browser, input: EngineInput): Promise<{ css: string }> {
    const deadline = input.deadline ?? Date.now() + DEFAULT_DEADLINE_MS
    const remaining = (): number => Math.max(1, deadline - Date.now() - EXTRACT_RESERVE_MS)
    const contexts: Spare[] = []
    const closeAll = (): Promise<unknown> => Promise.all(contexts.map(discard))
    input.signal.addEventListener('abort', closeAll, { once: true })
    try {
      const opened = await Promise.allSettled(input.viewports.map((viewport) => this.#open(browser, input.url, viewport, remaining, contexts)))
      const failure = opened.find((result) => result.status === 'rejected')
      if (failure) throw failure.reason
      const views = opened.map((result) => (result as PromiseFulfilledResult<LoadedView>).value)
      const texts = await this.#stylesheetTexts(views, remaining())
      const sheets = mergeSheetLists(await Promise.all(views.map((view) => appliedSheets(view, texts))))
      const bytes = sheets.reduce((sum, sheet) => sum + sheet.text.length, 0)
      // Past this, parsing holds the service's event loop for seconds and its memory for good: a clear failure instead.
      if (bytes > MAX_STYLESHEET_CHARS) {
        throw new EngineError('render_failed', `The page's stylesheets hold ${(bytes / 1024 / 1024).toFixed(1)} MiB of CSS, more than the ${MAX_STYLESHEET_CHARS / 1024 / 1024} MiB the engine parses.`)
      }
      const critical = this.#parsed(sheets, texts, views[0]!.page.url())
      const answers = await Promise.all(views.map((view) => ask(view, critical.questions)))
      // Opened now, not earlier: they would compete with this job's pages for the CPU.
      this.#refill(browser, input.viewports)
      return { css: critical.css(answers) }
    } finally {
      input.signal.removeEventListener('abort', closeAll)
      // Closing takes a while and nothing waits for it.
      void closeAll()
    }
  }

  /**
   * Every stylesheet body the views received, read from the browser once per URL. A body
   * already read under the same validators (ETag or Last-Modified, and length) is not read
   * again; one still streaming after `waitMs` counts as not received.
   */
  async #stylesheetTexts(views: LoadedView[], waitMs: number): Promise<Map<string, FetchedSheet>> {
    const chosen = new Map<string, Response>()
    for (const view of views) for (const [url, response] of view.responses) if (!chosen.has(url)) chosen.set(url, response)
    const reads = new Map<Response, Promise<FetchedSheet | undefined>>()
    for (const response of chosen.values()) {
      if (reads.has(response)) continue
      const validator = validatorOf(response)
      const known = validator === null ? undefined : this.#bodies.get(validator)
      reads.set(
        response,
        known
          ? Promise.resolve(known)
          : response.text().then(
              (text) => {
                const fetched = { text, url: response.url() }
                if (validator !== null) remember(this.#bodies, validator, fetched, BODY_CACHE_SIZE)
                return fetched
              },
              () => undefined,
            ),
      )
    }
    const texts = new Map<string, FetchedSheet>()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all(
        [...chosen].map(async ([url, response]) => {
          const fetched = await reads.get(response)
          if (fetched) texts.set(url, fetched)
        }),
      ),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
    ])
    clearTimeout(timer)
    return texts
  }

  /** Pages of one site share their stylesheets: parsed once, reused while they and their imports stay the same. */
  #parsed(sheets: KeyedSheet[], texts: Map<string, FetchedSheet>, pageUrl: string): CriticalCss {
    const hash = createHash('sha256').update(new URL(pageUrl).origin)
    for (const sheet of sheets) hash.update(`\u0000${sheet.key}\u0000${sheet.base}\u0000${sheet.text}`)
    const key = hash.digest('hex')
    const cached = this.#sheetCache.get(key)
    if (cached && [...cached.imports].every(([url, text]) => texts.get(url)?.text === text)) {
      remember(this.#sheetCache, key, cached, SHEET_CACHE_SIZE)
      return cached.critical
    }
    const imports = new Map<string, string | undefined>()
    const imported = (url: string): FetchedSheet | undefined => {
      const found = texts.get(url)
      imports.set(url, found?.text)
      return found
    }
    const critical = new CriticalCss(combineSheets(sheets, imported, pageUrl))
    remember(this.#sheetCache, key, { critical, imports }, SHEET_CACHE_SIZE)
    return critical
  }

  async #open(browser: Browser, url: string, viewport: Viewport, remaining: () => number, contexts: Spare[]): Promise<LoadedView> {
    const spare = await this.#page(browser, viewport)
    contexts.push(spare)
    const { page, gate, viewport: opened } = spare
    if (!sameSize(opened, viewport)) await page.setViewportSize(viewport)
    let crashed = false
    page.on('crash', () => {
      crashed = true
    })
    const responses = stylesheetResponses(page)
    const landed = mainDocument(page)
    let response: Response | null
    try {
      response = await page.goto(url, { waitUntil: 'commit', timeout: Math.min(this.#options.navigationTimeoutMs ?? 15_000, remaining()) })
    } catch (error) {
      if (crashed || !browser.isConnected()) throw new BrowserCrash()
      if (gate?.refused) throw new EngineError('blocked_url', `The service does not fetch this page: ${gate.refused}.`)
      throw new EngineError('fetch_failed', `The page could not be loaded: ${navigationError(error)}.`)
    }
    // A redirect the gate refused ends the navigation on the gate's own 403.
    if (gate?.refused && !response?.ok()) throw new EngineError('blocked_url', `The page redirected to an address the service does not fetch: ${gate.refused}.`)
    if (!response) throw new EngineError('fetch_failed', 'The page could not be loaded: no response.')
    if (!response.ok()) throw new EngineError('fetch_failed', `The page answered HTTP ${response.status()}.`)
    // A page may move on by meta refresh or script before it is read: the page it lands on
    // is the one a visitor sees, so it is followed, a few hops at most.
    for (let hop = 0; ; hop++) {
      try {
        // Bounded waits: an unreachable font host or a stalled CDN must not hold the job.
        await page.waitForLoadState('load', { timeout: Math.min(this.#options.loadTimeoutMs ?? 5000, remaining()) }).catch(() => {})
        const refreshMs = await inPage(page, metaRefreshDelay, undefined)
        if (refreshMs !== null && refreshMs <= MAX_REFRESH_WAIT_MS && hop < MAX_PAGE_HOPS) {
          // A refresh that is about to move the page: read the page it moves to.
          const moved = await page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: Math.min(refreshMs + 2000, remaining()) }).then(
            () => true,
            () => false,
          )
          if (moved) continue
        }
        const listed = await inPage(page, settle, { fontsMs: Math.min(this.#options.fontsTimeoutMs ?? 2000, remaining()), ignoreAttribute: CRITICAL_STYLE_ATTRIBUTE })
        // The page moved on by script to something that did not load: that is the page a visitor would get, not a page to read.
        if (landed.failure) {
          if (gate?.refused) throw new EngineError('blocked_url', `The page moved on to an address the service does not fetch: ${gate.refused}.`)
          throw new EngineError('fetch_failed', `The page moved on to ${landed.failure}.`)
        }
        return { page, listed, responses }
      } catch (error) {
        if (crashed || !browser.isConnected()) throw new BrowserCrash()
        if (!isNavigationRace(error)) throw error
        if (gate?.refused) throw new EngineError('blocked_url', `The page moved on to an address the service does not fetch: ${gate.refused}.`)
        if (hop >= MAX_PAGE_HOPS) throw new EngineError('render_failed', `The page kept navigating (${hop + 1} times after it loaded) and could not be read.`)
      }
    }
  }
}

interface Spare {
  browser: Browser
  context: BrowserContext
  page: Page
  viewport: Viewport
  /** The context's way out, when the engine has an egress. */
  gate: EgressGate | null
}

/** Closes a context, then its gate: what the page left open (a WebSocket, a beacon) is cut with it. */
function discard(spare: Spare): Promise<void> {
  return spare.context.close().catch(() => {}).finally(() => spare.gate?.close())
}

interface LoadedView {
  page: Page
  listed: SettledPage
  /** Stylesheet responses by every URL of their redirect chain; bodies are read once per job, when needed. */
  responses: Map<string, Response>
}

interface FetchedSheet {
  text: string
  url: string
}

type KeyedSheet = AppliedSheet & { key: string }

class BrowserCrash extends EngineError {
  constructor() {
    super('render_failed', 'The browser crashed while rendering the page.')
  }
}

/** How the main frame's latest navigation ended: null while it loaded fine, else what went wrong. */
function mainDocument(page: Page): { failure: string | null } {
  const state = { failure: null as string | null }
  page.on('response', (response) => {
    const request = response.request()
    if (!request.isNavigationRequest() || response.frame() !== page.mainFrame() || (response.status() >= 300 && response.status() < 400)) return
    state.failure = response.ok() ? null : `a page that answered HTTP ${response.status()}`
  })
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText ?? 'failed'
    // An aborted navigation (another one overtook it, a download) leaves the page where it was.
    if (request.isNavigationRequest() && request.frame() === page.mainFrame() && error !== 'net::ERR_ABORTED') state.failure = `a page that could not be loaded (${error})`
  })
  return state
}

function stylesheetResponses(page: Page): Map<string, Response> {
  const responses = new Map<string, Response>()
  page.on('response', (response) => {
    const request = response.request()
    if (request.resourceType() !== 'stylesheet' || !response.ok()) return
    for (let hop: typeof request | null = request; hop; hop = hop.redirectedFrom()) responses.set(hop.url(), response)
  })
  return responses
}

async function appliedSheets(view: LoadedView, texts: Map<string, FetchedSheet>): Promise<KeyedSheet[]> {
  const sheets: KeyedSheet[] = []
  for (const sheet of view.listed.sheets) {
    if (sheet.href === null) {
      const text = sheet.text ?? ''
      sheets.push({ key: `style\u0000${sheet.media}\u0000${text}`, text, base: view.listed.base, media: sheet.media })
      continue
    }
    const fetched = texts.get(sheet.href)
    const text = fetched?.text ?? (await inPage(view.page, cssomText, sheet.href))
    if (text === null) continue
    sheets.push({ key: `link\u0000${sheet.media}\u0000${sheet.href}`, text, base: fetched?.url ?? sheet.href, media: sheet.media })
  }
  return sheets
}

/**
 * One list of sheets for all viewports, in cascade order: usually every viewport applied
 * the same; a sheet only one applied goes in after the sheet it followed there.
 */
function mergeSheetLists(lists: KeyedSheet[][]): KeyedSheet[] {
  const merged = [...(lists[0] ?? [])]
  for (const list of lists.slice(1)) {
    let after = -1
    for (const sheet of list) {
      const at = merged.findIndex((known) => known.key === sheet.key)
      if (at >= 0) {
        after = at
        continue
      }
      merged.splice(after + 1, 0, sheet)
      after += 1
    }
  }
  return merged
}

/** Asks the page only about selectors whose subject is among the elements above the fold; the rest are answered no here. */
async function ask(view: LoadedView, questions: Questions): Promise<Answers> {
  const present = new Set(view.listed.present)
  const candidates: number[] = []
  questions.selectors.forEach((_, index) => {
    if ((questions.subjects[index] ?? []).every((token) => present.has(token))) candidates.push(index)
  })
  const output: ProbeOutput = await inPage(view.page, probe, { selectors: candidates.map((index) => questions.selectors[index]!), media: questions.media })
  const selectors = new Array<boolean>(questions.selectors.length).fill(false)
  candidates.forEach((index, position) => (selectors[index] = output.selectors[position] === '1'))
  return { selectors, media: Array.from(output.media, (flag) => flag === '1'), inlineStyles: view.listed.inlineStyles }
}

/** Least recently used first: a hit moves to the end, the oldest goes past `size`. */
function remember<K, V>(cache: Map<K, V>, key: K, value: V, size: number): void {
  cache.delete(key)
  cache.set(key, value)
  if (cache.size > size) cache.delete(cache.keys().next().value as K)
}

/** What identifies a response's body without reading it, when the server says (ETag or Last-Modified). */
function validatorOf(response: Response): string | null {
  const headers = response.headers()
  if (!headers.etag && !headers['last-modified']) return null
  return JSON.stringify([response.url(), headers.etag ?? '', headers['last-modified'] ?? '', headers['content-length'] ?? ''])
}

/**
 * Runs one of extract.ts's functions in the page from its source text. Transpilers may
 * wrap named functions in a `__name(…)` helper that only exists in this process; the page
 * gets a harmless one in the same scope.
 */
function inPage<A, R>(page: Page, fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  const source = `(() => { const __name = (target) => target; return (${fn.toString()})(${arg === undefined ? '' : JSON.stringify(arg)}) })()`
  return page.evaluate(source) as Promise<R>
}

/** In the page: in how many ms its `<meta http-equiv="refresh">` moves it to another URL, or null. */
function metaRefreshDelay(): number | null {
  const meta = document.querySelector('meta[http-equiv="refresh" i]')
  const match = /^\s*(\d+(?:\.\d*)?)\s*[;,]\s*(?:url\s*=\s*)?\S/i.exec(meta?.getAttribute('content') ?? '')
  return match ? Number(match[1]) * 1000 : null
}

/** A read of the page cut short because it navigated away meanwhile. */
function isNavigationRace(error: unknown): boolean {
  return error instanceof Error && /Execution context was destroyed|navigat/i.test(error.message)
}

function sameSize(a: Viewport, b: Viewport): boolean {
  return a.width === b.width && a.height === b.height
}

function navigationError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const net = /net::[A-Z_]+/.exec(message)
  if (net) return net[0]
  return /timeout/i.test(message) ? 'no answer in time' : 'navigation failed'
}

/**
 * With an egress, the browser resolves no name (every context's proxy does) and sends no
 * UDP outside a proxy (WebRTC), so nothing reaches out beside the gate.
 */
const EGRESS_FLAGS = ['--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1', '--webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-quic']

async function launchBrowser(executablePath: string, extraArgs: string[], egress: (() => Promise<EgressGate>) | undefined): Promise<Browser> {
  let playwright: typeof import('playwright-core')
  try {
    playwright = await import('playwright-core')
  } catch {
    throw new Error('The Chromium engine needs playwright-core: `npm install -D playwright-core` (it drives your system Chrome/Chromium; it downloads nothing).')
  }
  // The browser's own default goes through a gate too: a connection outside any context finds no other way out.
  const gate = (await egress?.()) ?? null
  try {
    const browser = await playwright.chromium.launch({
      executablePath,
      headless: true,
      args: [...chromiumFlags(), ...(gate ? EGRESS_FLAGS : []), ...extraArgs],
      ...(gate ? { proxy: { server: gate.server } } : {}),
      timeout: 30_000,
    })
    if (gate) browser.on('disconnected', () => gate.close())
    return browser
  } catch (error) {
    gate?.close()
    throw error
  }
}
