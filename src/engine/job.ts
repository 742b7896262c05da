/**
 * One job on the engine's browser: its page loaded once, read at every viewport, its
 * stylesheets parsed (once per site while they stay the same) and asked which rules the
 * first screen uses, all within the job's deadline.
 */
import type { Response } from 'playwright-core'
import { DARK_SCHEME_STATE, DEFAULT_THIRD_PARTY, parseState, type FirstScreenDifference, type HtmlState, type JobNetwork, type Viewport } from '../contract/api-contract.ts'
import { CRITICAL_STYLE_ATTRIBUTE } from '../html/outline.ts'
import { timed } from '../shared/timings.ts'
import { Attempt } from './attempt.ts'
import { BrowserGone, type LaunchedBrowser } from './browser.ts'
import { CriticalCss, choiceOf, type Answers, type Choice, type Questions } from './css.ts'
import { authorityOf, shownHost } from './egress.ts'
import { EngineError, type EngineInput, type EngineResult } from './engine.ts'
import { applyRootState, probe, restoreRootState, type ProbeOutput, type RootStateBefore } from './extract.ts'
import { compareFirstScreen } from './first-screen.ts'
import { MAX_COMPARED_ELEMENTS, MAX_PAGE_CSS_BYTES } from './limits.ts'
import { MOVED_WHILE_MEASURED, inPage, isNavigationRace, loadPage, readAgain, resizePage, type LoadedView } from './load.ts'
import type { ResolvedEngineOptions } from './options.ts'
import type { PagePool } from './page-pool.ts'
import { cssOverBound } from './received-bytes.ts'
import { ParsedSheetCache, linkKey, styleKey, type FetchedSheet, type KeyedSheet } from './parsed-sheets.ts'
import { SilentHosts } from './silent-hosts.ts'

/** Time kept back from the deadline for measuring the page and writing its CSS. */
const EXTRACT_RESERVE_MS = 1500
const DEFAULT_DEADLINE_MS = 60_000
/** Hosts and stylesheets a job's notes name at most: a page that reaches for a thousand hosts makes a short answer. */
const MAX_NOTED = 50
/** Rounds of repair per viewport (rules added for what the first screen showed without them) before a difference is reported. */
const MAX_REPAIRS = 2
/** Why a job went without a host it never contacted: it left an earlier page of the tenant unanswered (silent-hosts.ts). */
const SILENT_ON_AN_EARLIER_PAGE = 'no answer on an earlier page'
/** Elements a first-screen difference names. */
const MAX_NAMED = 5
/** Longest the check waits for the fonts the critical CSS declares again: they come from the browser's caches. */
const CHECK_FONTS_MS = 500

export type JobOptions = Pick<ResolvedEngineOptions, 'checkFirstScreen' | 'freshLoadPerViewport' | 'navigationTimeoutMs' | 'loadTimeoutMs' | 'thirdPartyTimeoutMs' | 'fontsTimeoutMs' | 'log'>

/**
 * Runs jobs on pages from the pool, and keeps what jobs of one site share: the parse of its
 * stylesheets, keyed by their text. Bodies are always the bytes this job's browser received:
 * a body kept from another job (another tenant's, another cookie's) is never used instead.
 */
export class Jobs {
  readonly #pool: PagePool
  readonly #options: JobOptions
  readonly #sheetCache = new ParsedSheetCache()
  /** Other sites' hosts that left a tenant's page unanswered: its next pages go on without them at once. */
  readonly #silentHosts = new SilentHosts()

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
  async attempt(launched: LaunchedBrowser, input: EngineInput): Promise<EngineResult> {
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
      const rendering = this.#render(launched, input, attempt).catch((error: unknown) => {
        // The load follows a page that moves on before it is read; one that moves on later, while it is measured, is the page's doing.
        throw !(error instanceof EngineError) && isNavigationRace(error) ? new EngineError('render_failed', MOVED_WHILE_MEASURED) : error
      })
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
  async #render(launched: LaunchedBrowser, input: EngineInput, attempt: Attempt): Promise<EngineResult> {
    const deadline = input.deadline ?? Date.now() + DEFAULT_DEADLINE_MS
    const remaining = (): number => Math.max(1, deadline - Date.now() - EXTRACT_RESERVE_MS)
    const view = await this.#open(launched, input, input.viewports[0]!, remaining, attempt, input.tenant)
    const pageUrl = view.page.url()
    const views = [view]
    const unreadable = new Set<string>()
    const texts = await timed('engine: stylesheet texts', () => this.#stylesheetTexts([view], remaining()), input.url)
    let sheets: KeyedSheet[] = []
    let critical: { critical: CriticalCss; unread: string[] } | null = null
    let answers: Answers[] = []
    let firstScreen: FirstScreenDifference[] = []
    let checked: Checked | null = null
    let restarted = false
    // The job's say over the critical set: applied as its CSS is written, never to the parse other jobs share.
    const choice = choiceOf(input.selection)
    // The contract checked each state; one that does not read (a caller other than the service) is left out.
    const states = (input.selection?.states ?? []).flatMap((text) => {
      const state = parseState(text)
      return state === null ? [] : [{ ...state, text }]
    })
    for (let index = 0; index < input.viewports.length; index++) {
      const viewport = input.viewports[index]!
      const here =
        index === 0 && answers.length === 0 && !restarted
          ? view
          : this.#options.freshLoadPerViewport
            ? await this.#open(launched, input, viewport, remaining, attempt, undefined)
            : { ...view, listed: await timed('engine: resize', () => resizePage(view, viewport, remaining, this.#options.fontsTimeoutMs), input.url) }
      if (here !== view) views.push(here)
      const applied = await appliedSheets(here, texts, unreadable)
      if (critical === null || (!restarted && applied.some((sheet) => !sheets.some((known) => known.key === sheet.key)))) {
        sheets = mergeSheetLists([sheets, applied])
        const bytes = sheets.reduce((sum, sheet) => sum + sheet.text.length, 0)
        // Past this, parsing holds the service's event loop for seconds and its memory for good: a clear failure instead.
        if (bytes > MAX_PAGE_CSS_BYTES) throw cssOverBound(bytes)
        attempt.throwIfOver()
        critical = this.#sheetCache.parsed(sheets, texts, pageUrl)
        if (index > 0) {
          // The viewports read so far were asked other questions: all of them again, from the first.
          restarted = true
          answers = []
          firstScreen = []
          index = -1
          continue
        }
      }
      const parsed = critical.critical
      const kept = [...critical.unread, ...unreadable, ...here.network.failedSheets]
      // A visitor who prefers dark may arrive at another first screen (a shorter hero, a banner only it shows): read in both.
      // So may one whose `<html>` a head script put in another state (a theme from localStorage): each state the job names is read too,
      // in both schemes where there are dark rules (a stored theme does not stop the system's preference from applying).
      const schemes: Reading['scheme'][] = parsed.darkScheme ? ['light', 'dark'] : ['light']
      const readings: Reading[] = [null, ...states].flatMap((state) => schemes.map((scheme) => ({ scheme, state })))
      for (const { scheme, state } of readings) {
        let before: RootStateBefore | null = null
        try {
          if (scheme === 'dark') await here.page.emulateMedia({ colorScheme: 'dark' })
          if (state) before = await inPage(here.page, applyRootState, state)
          const read = scheme === 'light' && !state ? here : { ...here, listed: await timed(state ? 'engine: read state' : 'engine: read dark', () => readAgain(here, remaining, this.#options.fontsTimeoutMs), input.url) }
          answers.push(await timed('engine: ask', () => ask(read, parsed.questions), input.url))
          checked = null
          if (this.#options.checkFirstScreen) {
            const named = [state?.text, scheme === 'dark' ? DARK_SCHEME_STATE : undefined].filter((part) => part !== undefined).join(' + ') || null
            checked = await timed('engine: first-screen check', () => checkFirstScreen(read, viewport, named, parsed, answers, kept, attempt, choice), input.url)
            if (checked.difference) firstScreen.push(checked.difference)
          }
        } finally {
          // The page goes on at the next viewport, or to the tenant's next job, as a context opens it.
          if (before) await inPage(here.page, restoreRootState, before).catch(() => {})
          if (scheme === 'dark') await here.page.emulateMedia({ colorScheme: 'light' }).catch(() => {})
        }
      }
    }
    // The last viewport's check already made the CSS of every answer.
    const css = checked?.css ?? critical!.critical.css(answers, choice)
    const network = networkNotes(attempt, views, [...critical!.unread, ...unreadable], pageUrl)
    // The tenant's next job starts on this page, cleared; a tenant with none starts on a spare.
    if (input.tenant !== undefined) {
      attempt.keep(view.spare)
      this.#silentHosts.add(input.tenant, silentHostsOf(attempt))
    }
    // Opened now, not earlier: it would compete with this job's page for the CPU.
    this.#pool.refill(launched, input.viewports.slice(0, 1), view.spare)
    return { css, network, ...(this.#options.checkFirstScreen ? { firstScreen } : {}) }
  }

  /** The job's page (the tenant's warm one, a spare or a new one), loaded and read at `viewport`. */
  async #open(launched: LaunchedBrowser, input: EngineInput, viewport: Viewport, remaining: () => number, attempt: Attempt, tenant: string | undefined): Promise<LoadedView> {
    const spare = await timed('engine: take a page', () => this.#pool.take(launched, viewport, tenant), input.url)
    attempt.add(spare)
    attempt.throwIfOver()
    const thirdParty = input.thirdParty ?? DEFAULT_THIRD_PARTY
    if (input.tenant !== undefined && thirdParty === 'cut') {
      const own = authorityOf(input.url)
      for (const host of this.#silentHosts.of(input.tenant)) if (host !== own) spare.gate.cut(host, SILENT_ON_AN_EARLIER_PAGE)
    }
    return await timed('engine: load', () => loadPage(spare, input.url, viewport, remaining, attempt, { ...this.#options, thirdParty }), input.url)
  }

  /**
   * Every stylesheet body the views' main frames received, read from the browser once per
   * URL; one still streaming after `waitMs` counts as not received. What the page received
   * was counted as it came (see ReceivedBytes): none of these reads is past the page's bound.
   */
  async #stylesheetTexts(views: LoadedView[], waitMs: number): Promise<Map<string, FetchedSheet>> {
    const chosen = new Map<string, { response: Response; view: LoadedView }>()
    for (const view of views) for (const [url, response] of view.network.responses) if (!chosen.has(url)) chosen.set(url, { response, view })
    const reads = new Map<Response, Promise<FetchedSheet | undefined>>()
    for (const { response, view } of chosen.values()) {
      if (reads.has(response)) continue
      const url = response.url()
      const read = async (): Promise<FetchedSheet | undefined> => {
        const text = (await view.received.stylesheetText(url)) ?? (await response.text().catch(() => undefined))
        return text === undefined ? undefined : { text, url }
      }
      reads.set(response, read())
    }
    const texts = new Map<string, FetchedSheet>()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all(
        [...chosen].map(async ([url, { response }]) => {
          const fetched = await reads.get(response)
          if (fetched) texts.set(url, fetched)
        }),
      ),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
    ])
    clearTimeout(timer)
    return texts
  }

}

/** The sheets the view applies, with their texts; a linked sheet whose text could not be read goes to `unread` instead. */
async function appliedSheets(view: LoadedView, texts: Map<string, FetchedSheet>, unread: Set<string>): Promise<KeyedSheet[]> {
  const sheets: KeyedSheet[] = []
  for (const sheet of view.listed.sheets) {
    if (sheet.href === null) {
      const text = sheet.text ?? ''
      sheets.push({ key: styleKey(sheet.media, text), href: null, text, base: view.listed.base, media: sheet.media })
      continue
    }
    const fetched = texts.get(sheet.href)
    // A sheet whose request failed has no text anywhere: the browser, asked for it, answers only after a while.
    const text = fetched?.text ?? (view.network.failedSheets.has(sheet.href) ? null : await resourceText(view, sheet.href))
    if (text === null) {
      unread.add(sheet.href)
      continue
    }
    sheets.push({ key: linkKey(sheet.media, sheet.href), href: sheet.href, text, base: fetched?.url ?? sheet.href, media: sheet.media })
  }
  return sheets
}

/**
 * A sheet's text as the browser received it, when no response of this load carried it (the
 * renderer's memory cache answered, or its body was gone before it was read): the same bytes
 * a response gives, never the CSSOM's serialisation of its rules, so the CSS does not depend
 * on which cache answered. Null when the browser no longer has it.
 */
async function resourceText(view: LoadedView, url: string): Promise<string | null> {
  const { spare } = view
  try {
    spare.session ??= await spare.context.newCDPSession(spare.page)
    // The Page agent answers for resources only once enabled on this session; enabling again is a no-op.
    await spare.session.send('Page.enable')
    const { frameTree } = await spare.session.send('Page.getFrameTree')
    const { content, base64Encoded } = await spare.session.send('Page.getResourceContent', { frameId: frameTree.frame.id, url })
    return base64Encoded ? Buffer.from(content, 'base64').toString('utf8') : content
  } catch {
    return null
  }
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

/**
 * Asks the page only about selectors whose subject is among the elements above the fold
 * (with `marked`, the tokens of elements the first-screen check added); the rest are answered no here.
 */
async function ask(view: LoadedView, questions: Questions, marked: Iterable<string> = []): Promise<Answers> {
  const present = new Set([...view.listed.present, ...marked])
  const candidates: number[] = []
  questions.selectors.forEach((_, index) => {
    if ((questions.subjects[index] ?? []).every((token) => present.has(token))) candidates.push(index)
  })
  const output: ProbeOutput = await inPage(view.page, probe, { selectors: candidates.map((index) => questions.selectors[index]!), media: questions.media })
  const selectors = new Array<boolean>(questions.selectors.length).fill(false)
  candidates.forEach((index, position) => (selectors[index] = output.selectors[position] === '1'))
  return { selectors, media: Array.from(output.media, (flag) => flag === '1'), inlineStyles: view.listed.inlineStyles }
}

/** One read of a viewport: the colour scheme emulated, and the state `<html>` is put in (null: as the page loaded). */
interface Reading {
  scheme: 'light' | 'dark'
  /** With the job's `states` entry it comes from, as the report names it. */
  state: (HtmlState & { text: string }) | null
}

/** A viewport's check: what still differs (null: nothing), and the CSS of the answers as they now are. */
interface Checked {
  difference: FirstScreenDifference | null
  css: string
}

/**
 * Renders the first screen with only the critical CSS of the viewports read so far and
 * compares it with the page as it is (see first-screen.ts). Elements the critical CSS showed
 * where their own rules keep them out of the first screen, or that made the document wider
 * than the viewport, get their rules asked for, and the check runs again, a bounded number
 * of times; what still differs is the job's to report. The last answers are replaced.
 */
async function checkFirstScreen(view: LoadedView, viewport: Viewport, state: string | null, critical: CriticalCss, answers: Answers[], kept: string[], attempt: Attempt, choice: Choice): Promise<Checked> {
  const marked = new Set<string>()
  for (let round = 0; ; round++) {
    attempt.throwIfOver()
    const css = critical.css(answers, choice)
    const output = await inPage(view.page, compareFirstScreen, { css, kept, ignoreAttribute: CRITICAL_STYLE_ATTRIBUTE, maxElements: MAX_COMPARED_ELEMENTS, maxNamed: MAX_NAMED, fontsMs: CHECK_FONTS_MS })
    if (output.marked.length === 0 || round === MAX_REPAIRS) {
      const differs = output.share > 0 || output.named.length > 0
      return { css, difference: differs ? { viewport: { width: viewport.width, height: viewport.height }, ...(state === null ? {} : { state }), share: output.share, elements: output.named } : null }
    }
    for (const token of output.marked) marked.add(token)
    answers[answers.length - 1] = await ask(view, critical.questions, marked)
  }
}

/** Hosts the attempt cut for leaving a request unanswered past the third-party bound, having sent it nothing. */
function silentHostsOf(attempt: Attempt): string[] {
  return attempt.contexts.flatMap((spare) => [...spare.gate.unreached].filter(([, why]) => why.silent).map(([authority]) => authority))
}

/**
 * What the job went without: the hosts its contexts' gates let out no connection to (not the
 * page's own), and the stylesheets it could not read (failed, cut, or an import missing).
 */
function networkNotes(attempt: Attempt, views: LoadedView[], incomplete: string[], pageUrl: string): JobNetwork {
  const own = authorityOf(pageUrl)
  // Hosts the page asked for, not the browser's own background requests through the same gate.
  const asked = new Set(views.flatMap((view) => [...view.network.authorities]))
  const hosts = new Map<string, string>()
  for (const spare of attempt.contexts) {
    for (const [authority, why] of spare.gate.unreached) {
      if (authority !== own && asked.has(authority) && !hosts.has(shownHost(authority))) hosts.set(shownHost(authority), why.reason)
    }
  }
  const unread = new Set(incomplete)
  for (const view of views) for (const url of view.network.failedSheets) unread.add(url)
  return {
    skippedHosts: [...hosts]
      .map(([host, reason]) => ({ host, reason }))
      .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
      .slice(0, MAX_NOTED),
    unreadStylesheets: [...unread].sort().slice(0, MAX_NOTED),
  }
}
