/**
 * One job on the engine's browser: its page loaded once, read at every viewport, its
 * stylesheets parsed (once per site while they stay the same) and asked which rules the
 * first screen uses, all within the job's deadline.
 */
import { createHash } from 'node:crypto'
import type { Response } from 'playwright-core'
import type { Viewport } from '../contract/api-contract.ts'
import { Attempt } from './attempt.ts'
import { BrowserGone, type LaunchedBrowser } from './browser.ts'
import { CriticalCss, type Answers, type Questions } from './css.ts'
import { EngineError, type EngineInput } from './engine.ts'
import { cssomText, probe, type ProbeOutput } from './extract.ts'
import { inPage, loadPage, resizePage, type LoadedView } from './load.ts'
import type { ResolvedEngineOptions } from './options.ts'
import type { PagePool } from './page-pool.ts'
import { combineSheets, type AppliedSheet } from './sheets.ts'

/** Time kept back from the deadline for measuring the page and writing its CSS. */
const EXTRACT_RESERVE_MS = 1500
const SHEET_CACHE_SIZE = 16
const BODY_CACHE_SIZE = 64
const DEFAULT_DEADLINE_MS = 60_000
/** Most CSS text one page may hold, every stylesheet together (the biggest sites ship a few MiB). */
const MAX_STYLESHEET_CHARS = 8 * 1024 * 1024

export type JobOptions = Pick<ResolvedEngineOptions, 'freshLoadPerViewport' | 'navigationTimeoutMs' | 'loadTimeoutMs' | 'fontsTimeoutMs' | 'log'>

interface FetchedSheet {
  text: string
  url: string
}

type KeyedSheet = AppliedSheet & { key: string }

/** Runs jobs on pages from the pool, and keeps what jobs of one site share: stylesheet bodies and their parse. */
export class Jobs {
  readonly #pool: PagePool
  readonly #options: JobOptions
  readonly #sheetCache = new Map<string, { critical: CriticalCss; imports: Map<string, string | undefined> }>()
  readonly #bodies = new Map<string, FetchedSheet>()

  constructor(pool: PagePool, options: JobOptions) {
    this.#pool = pool
    this.#options = options
  }

  /**
   * One try at a job on one browser. It ends as soon as the job is aborted (its deadline, a
   * shutdown), its page's renderer dies, a page misbehaves past a bound, or the browser goes,
   * whatever the browser is still doing: its contexts are closed at once, which stops their
   * loading, and nothing waits for a call the browser does not answer.
   */
  async attempt(launched: LaunchedBrowser, input: EngineInput): Promise<{ css: string }> {
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
            : { ...view, listed: await resizePage(view, viewport, remaining, this.#options.fontsTimeoutMs) }
      const applied = await appliedSheets(here, texts)
      if (critical === null || (!restarted && applied.some((sheet) => !sheets.some((known) => known.key === sheet.key)))) {
        sheets = mergeSheetLists([sheets, applied])
        const bytes = sheets.reduce((sum, sheet) => sum + sheet.text.length, 0)
        // Past this, parsing holds the service's event loop for seconds and its memory for good: a clear failure instead.
        if (bytes > MAX_STYLESHEET_CHARS) {
          throw new EngineError('render_failed', `The page's stylesheets hold ${(bytes / 1024 / 1024).toFixed(1)} MiB of CSS, more than the ${MAX_STYLESHEET_CHARS / 1024 / 1024} MiB the engine parses.`)
        }
        attempt.throwIfOver()
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

  /** The job's page (the tenant's warm one, a spare or a new one), loaded and read at `viewport`. */
  async #open(launched: LaunchedBrowser, url: string, viewport: Viewport, remaining: () => number, attempt: Attempt, tenant: string | undefined): Promise<LoadedView> {
    const spare = await this.#pool.take(launched, viewport, tenant)
    attempt.add(spare)
    attempt.throwIfOver()
    return await loadPage(spare, url, viewport, remaining, attempt, this.#options)
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
