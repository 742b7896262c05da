/**
 * The Chromium engine: a system Chrome/Chromium driven by playwright-core (never a
 * downloaded browser), launched once and reused: one load per job, resized per viewport, on a page kept warm per tenant.
 */
import { createHash } from 'node:crypto'
import type { Page, Request, Response } from 'playwright-core'
import { DEFAULT_VIEWPORTS, type Viewport } from '../contract/api-contract.ts'
import { CRITICAL_STYLE_ATTRIBUTE } from '../html/outline.ts'
import { abortable } from '../shared/abortable.ts'
import { BrowserGone, Browsers, disconnects, type LaunchedBrowser } from './browser.ts'
import { EngineError, type Engine, type EngineInput } from './engine.ts'
import { CriticalCss, type Answers, type Questions } from './css.ts'
import { cssomText, probe, settle, type ProbeOutput, type SettledPage } from './extract.ts'
import { resolveEngineOptions, type ChromiumEngineOptions, type ResolvedEngineOptions } from './options.ts'
import { CLEAR_SESSION_SCRIPT, PagePool, sameSize, type Spare } from './page-pool.ts'
import { combineSheets, type AppliedSheet } from './sheets.ts'
import { AFTER_RESIZE_MS, afterResize, ownFontsIn, ownResourcesIn, refreshMoves, stillParsing } from './waits.ts'

export type { ChromiumEngineOptions } from './options.ts'

export interface ChromiumEngine extends Engine {
  /** Launches the browser now (else the first job does): a browser that cannot start fails here, with its reason. */
  ready(): Promise<void>
  close(): Promise<void>
}

/** Throws a hint to install a browser when none is found; the browser itself starts with the first job. */
export function createChromiumEngine(options: ChromiumEngineOptions = {}): ChromiumEngine {
  return new ChromiumCriticalCss(resolveEngineOptions(options))
}

/** Time kept back from the deadline for measuring the page and writing its CSS. */
const EXTRACT_RESERVE_MS = 1500
const SHEET_CACHE_SIZE = 16
const BODY_CACHE_SIZE = 64
const DEFAULT_DEADLINE_MS = 60_000
/** Navigations after the first load (meta refresh, `location` by script) followed before a page is given up on. */
const MAX_PAGE_HOPS = 3
/** A meta refresh due within this long is waited for; a later one leaves the page as it is. */
const MAX_REFRESH_WAIT_MS = 3000
/** Most CSS text one page may hold, every stylesheet together (the biggest sites ship a few MiB). */
const MAX_STYLESHEET_CHARS = 8 * 1024 * 1024
/** Console messages a page's workers may log before the job fails: each one crosses to the service. */
const MAX_WORKER_CONSOLE_MESSAGES = 1000
/** How long an unexpected error waits to learn whether the browser went away under it. */
const DISCONNECT_GRACE_MS = 2000

class ChromiumCriticalCss implements ChromiumEngine {
  readonly #options: ResolvedEngineOptions
  readonly #browsers: Browsers
  readonly #pool: PagePool
  readonly #sheetCache = new Map<string, { critical: CriticalCss; imports: Map<string, string | undefined> }>()
  readonly #bodies = new Map<string, FetchedSheet>()

  constructor(options: ResolvedEngineOptions) {
    this.#options = options
    this.#browsers = new Browsers(options)
    this.#pool = new PagePool(this.#browsers, options)
    // A dead browser's spares and warm pages are closed, never handed out.
    this.#browsers.onForget((launched) => this.#pool.forget(launched))
  }

  async generate(input: EngineInput): Promise<{ css: string }> {
    const launched = await abortable(this.#browsers.launch(), input.signal)
    try {
      return await this.#attempt(launched, input)
    } catch (error) {
      // A call can hear of the browser's end before its connection does: an unexpected error waits a moment for it.
      const gone = error instanceof BrowserGone || (!(error instanceof EngineError) && (await disconnects(launched.browser, DISCONNECT_GRACE_MS)))
      if (input.signal.aborted || this.#browsers.closed || !gone) throw error
      // The browser died under this job (or stopped answering and was killed): a fresh one gets
      // one more try. A page whose own renderer died is not tried again (RendererCrash).
      this.#log({ event: 'browser_crashed', relaunch: true })
      this.#browsers.forget(launched)
      return await this.#attempt(await abortable(this.#browsers.launch(), input.signal), input)
    }
  }

  async ready(): Promise<void> {
    const launched = await this.#browsers.launch()
    // The first jobs find their pages open: a page's renderer takes a while to start.
    this.#pool.refill(launched, [DEFAULT_VIEWPORTS[0]!, DEFAULT_VIEWPORTS[0]!])
  }

  async close(): Promise<void> {
    // The pages first, then the browser: nothing kept is handed out once closing began.
    this.#pool.close()
    await this.#browsers.close()
  }

  #log(line: Record<string, unknown>): void {
    this.#options.log(line)
  }

  /**
   * One try at a job on one browser. It ends as soon as the job is aborted (its deadline, a
   * shutdown), its page's renderer dies, a page misbehaves past a bound, or the browser goes,
   * whatever the browser is still doing: its contexts are closed at once, which stops their
   * loading, and nothing waits for a call the browser does not answer.
   */
  async #attempt(launched: LaunchedBrowser, input: EngineInput): Promise<{ css: string }> {
    const attempt = new Attempt(
      (spare) => this.#pool.discard(spare),
      (spare) => this.#pool.park(spare),
    )
    const onAbort = (): void => attempt.fail(input.signal.reason)
    const onGone = (): void => attempt.fail(new BrowserGone())
    input.signal.addEventListener('abort', onAbort, { once: true })
    launched.browser.on('disconnected', onGone)
    if (input.signal.aborted) onAbort()
    else if (launched.dead || !launched.browser.isConnected()) onGone()
    try {
      const rendering = this.#render(launched, input, attempt)
      rendering.catch(() => {})
      return await Promise.race([rendering, attempt.ended])
    } finally {
      input.signal.removeEventListener('abort', onAbort)
      launched.browser.off('disconnected', onGone)
      // Closing takes a while and nothing waits for it.
      attempt.close()
    }
  }

  /**
   * One navigation per job: the page loads at the first viewport and is read there, then
   * resized to each other viewport and read again (media queries and layout follow a
   * resize). Questions come from the sheets the first viewport applies; a sheet only a
   * later viewport applies (a script that adds one by width) makes the job ask every
   * viewport again with the whole list, once.
   */
  async #render(launched: LaunchedBrowser, input: EngineInput, attempt: Attempt): Promise<{ css: string }> {
    const deadline = input.deadline ?? Date.now() + DEFAULT_DEADLINE_MS
    const remaining = (): number => Math.max(1, deadline - Date.now() - EXTRACT_RESERVE_MS)
    const view = await this.#open(launched, input.url, input.viewports[0]!, remaining, attempt, input.tenant)
    const pageUrl = view.page.url()
    const texts = await this.#stylesheetTexts([view], remaining())
    let sheets: KeyedSheet[] = []
    let critical: CriticalCss | null = null
    let answers: Answers[] = []
    let restarted = false
    for (let index = 0; index < input.viewports.length; index++) {
      const viewport = input.viewports[index]!
      const here =
        index === 0 && answers.length === 0 && !restarted
          ? view
          : this.#options.freshLoadPerViewport
            ? await this.#open(launched, input.url, viewport, remaining, attempt, undefined)
            : { ...view, listed: await this.#resize(view, viewport, remaining) }
      const applied = await appliedSheets(here, texts)
      if (critical === null || (!restarted && applied.some((sheet) => !sheets.some((known) => known.key === sheet.key)))) {
        sheets = mergeSheetLists([sheets, applied])
        const bytes = sheets.reduce((sum, sheet) => sum + sheet.text.length, 0)
        // Past this, parsing holds the service's event loop for seconds and its memory for good: a clear failure instead.
        if (bytes > MAX_STYLESHEET_CHARS) {
          throw new EngineError('render_failed', `The page's stylesheets hold ${(bytes / 1024 / 1024).toFixed(1)} MiB of CSS, more than the ${MAX_STYLESHEET_CHARS / 1024 / 1024} MiB the engine parses.`)
        }
        if (attempt.over) throw new EngineError('render_failed', 'The job ended.')
        critical = this.#parsed(sheets, texts, pageUrl)
        if (index > 0) {
          // The viewports read so far were asked other questions: all of them again, from the first.
          restarted = true
          answers = []
          index = -1
          continue
        }
      }
      answers.push(await ask(here, critical.questions))
    }
    const css = critical!.css(answers)
    // The tenant's next job starts on this page, cleared; a tenant with none starts on a spare.
    if (input.tenant !== undefined) attempt.keep(view.spare)
    // Opened now, not earlier: it would compete with this job's page for the CPU.
    this.#pool.refill(launched, input.viewports.slice(0, 1))
    return { css }
  }

  /** The page at another viewport, read again once its layout and scripts have seen the resize. */
  async #resize({ page, inFlight }: LoadedView, viewport: Viewport, remaining: () => number): Promise<SettledPage> {
    await page.setViewportSize(viewport)
    await inPage(page, afterResize, AFTER_RESIZE_MS)
    const fontsMs = await ownFontsIn(page, inFlight, Math.min(this.#options.fontsTimeoutMs, remaining()))
    return await inPage(page, settle, { fontsMs, ignoreAttribute: CRITICAL_STYLE_ATTRIBUTE })
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

  async #open(launched: LaunchedBrowser, url: string, viewport: Viewport, remaining: () => number, attempt: Attempt, tenant: string | undefined): Promise<LoadedView> {
    const spare = await this.#pool.take(launched, viewport, tenant)
    attempt.add(spare)
    if (attempt.over) throw new EngineError('render_failed', 'The job ended.')
    const { page, gate, viewport: opened } = spare
    spare.viewport = viewport
    // What the page stores is kept per origin: every origin it reaches is cleared after the job.
    page.on('request', (request) => {
      if (/^https?:/.test(request.url())) spare.origins.add(new URL(request.url()).origin)
    })
    let crashed = false
    page.on('crash', () => {
      crashed = true
      // Out of memory (the heap cap, the data limit) or killed: the same page would only do it again.
      this.#log({ event: 'renderer_crashed', relaunch: false })
      attempt.fail(launched.browser.isConnected() ? new RendererCrash() : new BrowserGone())
    })
    // Workers get no init script: their console is counted instead, and a flood ends the job.
    page.on('worker', (worker) =>
      worker.on('console', () => {
        if (++attempt.workerMessages !== MAX_WORKER_CONSOLE_MESSAGES + 1) return
        attempt.fail(new EngineError('render_failed', `The page's workers logged more than ${MAX_WORKER_CONSOLE_MESSAGES} messages; the engine does not render a page that floods it.`))
      }),
    )
    // The browser's state, read after a call failed: a dead renderer or browser says more than the call's own error.
    const died = (): EngineError | null => (!launched.browser.isConnected() || launched.dead ? new BrowserGone() : crashed ? new RendererCrash() : null)
    if (!sameSize(opened, viewport)) await page.setViewportSize(viewport)
    const responses = stylesheetResponses(page)
    const landed = mainDocument(page)
    const inFlight = requestsInFlight(page)
    // On a warm page, the documents this navigation creates start with no session storage, as in a new tab:
    // what the last job's page wrote as it was left (pagehide) is gone before this page's scripts run.
    const sessionReset = spare.uses > 1 ? await page.addInitScript({ content: CLEAR_SESSION_SCRIPT }) : null
    let response: Response | null
    try {
      response = await page.goto(url, { waitUntil: 'commit', timeout: Math.min(this.#options.navigationTimeoutMs, remaining()) })
      await sessionReset?.dispose()
    } catch (error) {
      const death = died()
      if (death) throw death
      if (gate?.refused) throw new EngineError('blocked_url', `The service does not fetch this page: ${gate.refused}.`)
      throw new EngineError('fetch_failed', `The page could not be loaded: ${navigationError(error)}.`)
    }
    // A redirect the gate refused ends the navigation on the gate's own 403.
    if (gate?.refused && !response?.ok()) throw new EngineError('blocked_url', `The page redirected to an address the service does not fetch: ${gate.refused}.`)
    if (!response) throw new EngineError('fetch_failed', 'The page could not be loaded: no response.')
    if (!response.ok()) throw new EngineError('fetch_failed', `The page answered HTTP ${response.status()}.`)
    // A page may move on by meta refresh or script before it is read: the page it lands on
    // is the one a visitor sees, so it is followed, a few hops at most.
    // Main-frame navigations so far: a read that saw one happen is of a page already gone, or not yet loaded.
    let navigations = 0
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++
    })
    for (let hop = 0; ; hop++) {
      try {
        const seen = navigations
        // Bounded waits: an unreachable font host or a stalled CDN must not hold the job.
        await ownResourcesIn(page, inFlight, Math.min(this.#options.loadTimeoutMs, remaining()))
        if (navigations !== seen && hop < MAX_PAGE_HOPS) continue
        const fontsMs = await ownFontsIn(page, inFlight, Math.min(this.#options.fontsTimeoutMs, remaining()))
        const listed = await inPage(page, settle, { fontsMs, ignoreAttribute: CRITICAL_STYLE_ATTRIBUTE })
        // The page moved on while it was read (a refresh or script firing just then): read the page it landed on.
        if (navigations !== seen && hop < MAX_PAGE_HOPS) continue
        const { refreshMs } = listed
        if (refreshMs !== null && refreshMs <= MAX_REFRESH_WAIT_MS && hop < MAX_PAGE_HOPS) {
          // A refresh that is about to move the page: read the page it moves to.
          const moved = navigations !== seen || (await refreshMoves(page, refreshMs, remaining()))
          if (moved) continue
        }
        // A parser held by a script that never came (a host that takes the connection and says nothing): the
        // first screen is not known, and a read now would find no body.
        if (!listed.parsed) throw stillParsing(inFlight)
        // The page moved on by script to something that did not load: that is the page a visitor would get, not a page to read.
        if (landed.failure) {
          if (gate?.refused) throw new EngineError('blocked_url', `The page moved on to an address the service does not fetch: ${gate.refused}.`)
          throw new EngineError('fetch_failed', `The page moved on to ${landed.failure}.`)
        }
        return { spare, page, listed, responses, inFlight }
      } catch (error) {
        const death = died()
        if (death) throw death
        if (!isNavigationRace(error)) throw error
        if (gate?.refused) throw new EngineError('blocked_url', `The page moved on to an address the service does not fetch: ${gate.refused}.`)
        if (hop >= MAX_PAGE_HOPS) throw new EngineError('render_failed', `The page kept navigating (${hop + 1} times after it loaded) and could not be read.`)
      }
    }
  }
}

/** The contexts of one try at a job, and the way it ends early. */
class Attempt {
  readonly contexts: Spare[] = []
  /** Rejects with the first reason the attempt ended early. */
  readonly ended: Promise<never>
  workerMessages = 0
  #over = false
  #end!: (reason: unknown) => void
  #kept: Spare | null = null
  readonly #discard: (spare: Spare) => Promise<void>
  readonly #release: (spare: Spare) => void

  constructor(discard: (spare: Spare) => Promise<void>, release: (spare: Spare) => void) {
    this.#discard = discard
    this.#release = release
    this.ended = new Promise<never>((_, reject) => (this.#end = reject))
    this.ended.catch(() => {})
  }

  get over(): boolean {
    return this.#over
  }

  /** A context the attempt uses; one that comes after the attempt ended is closed at once. */
  add(spare: Spare): void {
    if (this.#over) void this.#discard(spare)
    else this.contexts.push(spare)
  }

  /** The page to hand back at the end instead of closing it: the job is done with it. */
  keep(spare: Spare): void {
    if (!this.#over) this.#kept = spare
  }

  /** Ends the attempt with `reason` (the first one counts) and closes its contexts: their loading stops there. */
  fail(reason: unknown): void {
    this.#kept = null
    this.#end(reason)
    this.close()
  }

  close(): void {
    if (this.#over) return
    this.#over = true
    for (const spare of this.contexts) {
      if (spare === this.#kept) this.#release(spare)
      else void this.#discard(spare)
    }
  }
}

interface LoadedView {
  spare: Spare
  page: Page
  listed: SettledPage
  /** Stylesheet responses by every URL of their redirect chain; bodies are read once per job, when needed. */
  responses: Map<string, Response>
  /** The page's requests not yet finished. */
  inFlight: Set<Request>
}

interface FetchedSheet {
  text: string
  url: string
}

type KeyedSheet = AppliedSheet & { key: string }

/** The page's own renderer died (out of memory, killed): the job fails, and is not tried again, since the page would do it again. */
class RendererCrash extends EngineError {
  constructor() {
    super('render_failed', "The page's renderer crashed while rendering it (out of memory, or killed); the page is not tried again.")
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

/** The page's requests not yet finished or failed. */
function requestsInFlight(page: Page): Set<Request> {
  const pending = new Set<Request>()
  page.on('request', (request) => pending.add(request))
  page.on('requestfinished', (request) => pending.delete(request))
  page.on('requestfailed', (request) => pending.delete(request))
  return pending
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

/** A read of the page cut short because it navigated away meanwhile. */
function isNavigationRace(error: unknown): boolean {
  return error instanceof Error && /Execution context was destroyed|navigat/i.test(error.message)
}

function navigationError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const net = /net::[A-Z_]+/.exec(message)
  if (net) return net[0]
  return /timeout/i.test(message) ? 'no answer in time' : 'navigation failed'
}

