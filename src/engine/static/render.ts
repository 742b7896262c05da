/**
 * One static job, where it runs (a worker thread of the static engine): the page and its
 * stylesheets fetched through the job's egress gate (its proxy address; the gate, in the
 * engine's thread, admits every connection by the network policy), the page read as a
 * browser parses it, its elements matched against the site's questions, and the CSS written.
 * What a job learns of a site (the sheets' parse, the compiled selectors, the CSS of a set of
 * answers) is kept here for the jobs to come; the bytes are always this job's own.
 */
import { parseState, type HtmlState, type Selection, type ThirdPartyPolicy, type Viewport } from '../../contract/api-contract.ts'
import { choiceOf, type Answers, type Choice, type CriticalCss } from '../css.ts'
import { authorityOf } from '../egress.ts'
import { EngineError } from '../engine.ts'
import { MAX_DOCUMENT_BYTES, MAX_PAGE_CSS_BYTES } from '../limits.ts'
import { ParsedSheetCache, linkKey, styleKey, type FetchedSheet, type KeyedSheet } from '../parsed-sheets.ts'
import { notAnHtmlPage } from '../page-refusals.ts'
import { cssOverBound } from '../received-bytes.ts'
import { inRootState, readDocument, type StaticDocument } from './document.ts'
import { FetchFailed, GateFetcher, decodeBody, type Fetched } from './fetch.ts'
import { importsOf } from './imports.ts'
import { matchSelectors } from './match.ts'
import { mediaHolds } from './media.ts'
import { SheetCache } from './sheet-cache.ts'

/** What the job's failure says of a page its scripts build: the static engine sees it empty. */
export const SCRIPT_BUILT_PAGE = 'its content is rendered by script: needs a browser (the static engine runs no script, and sees the page empty)'
/** Imports followed inside imports, as sheets.ts follows them. */
const MAX_IMPORT_DEPTH = 8
/** Stylesheets one page may link, imports included: each is a request. */
const MAX_SHEETS = 200
/** CSS written per parse and answers, kept for the pages to come: a site's pages mostly use the same rules. */
const MAX_CSS_KEPT = 64

/** A job as the engine's thread hands it over. */
export interface StaticJob {
  url: string
  /** Whose job it is: its stylesheets may come from the tenant's cache, never from another's. */
  tenant?: string
  viewports: Viewport[]
  thirdParty: ThirdPartyPolicy
  selection?: Selection
  /** The job's egress gate (`http://127.0.0.1:PORT`): every request goes through it. */
  proxy: string
  /** Epoch ms by which the page's own answer is given up on. */
  pageBy: number
  loadTimeoutMs: number
  thirdPartyTimeoutMs: number
}

/** A job's end: its CSS, what it could not read, and the hosts it gave up waiting for. */
export interface StaticOutcome {
  css: string
  /** Where the page came from, after redirects. */
  pageUrl: string
  unread: string[]
  /** `host:port`s whose stylesheets did not answer within their bound. */
  timedOut: string[]
}

/** The page itself did not come: where the fetch ended and why (the engine's thread says it in the gate's words). */
export class PageFetchFailed extends Error {
  override name = 'PageFetchFailed'
  constructor(
    readonly failure: Pick<FetchFailed, 'kind' | 'url' | 'hops' | 'message'>,
    readonly timedOut: boolean,
  ) {
    super(failure.message)
  }
}

/** What a thread keeps between its jobs: parses, compiled selectors (match.ts), written CSS. */
export class StaticRenderer {
  readonly #sheets = new ParsedSheetCache()
  readonly #http = new SheetCache()
  readonly #written = new WeakMap<CriticalCss, Map<string, string>>()

  async render(job: StaticJob, signal: AbortSignal): Promise<StaticOutcome> {
    const fetcher = new GateFetcher(job.proxy)
    try {
      const page = await fetchPage(job, fetcher, signal)
      const document = readDocument(decodeBody(page, true), page.url)
      if (document.scriptBuilt) throw new EngineError('render_failed', `The page shows nothing without its scripts: ${SCRIPT_BUILT_PAGE}.`)
      const { texts, unread, timedOut } = await fetchStylesheets(document, page.url, job, fetcher, this.#http, signal)
      const sheets: KeyedSheet[] = []
      for (const sheet of document.sheets) {
        if (sheet.href === null) {
          sheets.push({ key: styleKey(sheet.media, sheet.text ?? ''), href: null, text: sheet.text ?? '', base: document.base, media: sheet.media })
          continue
        }
        const fetched = texts.get(sheet.href)
        if (fetched) sheets.push({ key: linkKey(sheet.media, sheet.href), href: sheet.href, text: fetched.text, base: fetched.url, media: sheet.media })
      }
      signal.throwIfAborted()
      const parsed = this.#sheets.parsed(sheets, texts, page.url)
      const answers = answersOf(parsed.critical, document, job.viewports, statesOf(job.selection))
      const css = this.#css(parsed.critical, answers, choiceOf(job.selection))
      return { css, pageUrl: page.url, unread: [...new Set([...unread, ...parsed.unread])], timedOut: [...timedOut] }
    } finally {
      fetcher.close()
    }
  }

  /** The CSS of `answers`, written once per parse and answers. */
  #css(critical: CriticalCss, answers: Answers[], choice: Choice): string {
    let written = this.#written.get(critical)
    if (written === undefined) this.#written.set(critical, (written = new Map()))
    const key = JSON.stringify([answers.map((answer) => [bits(answer.selectors), bits(answer.media), answer.inlineStyles]), [...choice.keep], [...choice.drop], choice.fontFaces, choice.keyframes])
    let css = written.get(key)
    if (css === undefined) {
      css = critical.css(answers, choice)
      if (written.size >= MAX_CSS_KEPT) written.delete(written.keys().next().value as string)
      written.set(key, css)
    }
    return css
  }
}

/** The page's HTML after redirects, within its bound; a page that did not come throws PageFetchFailed. */
async function fetchPage(job: StaticJob, fetcher: GateFetcher, signal: AbortSignal): Promise<Fetched> {
  const bound = AbortSignal.timeout(Math.max(1, job.pageBy - Date.now()))
  let page
  try {
    page = await fetcher.get(job.url, { signal: AbortSignal.any([signal, bound]), maxBytes: MAX_DOCUMENT_BYTES })
  } catch (error) {
    signal.throwIfAborted()
    if (!(error instanceof FetchFailed)) throw error
    throw new PageFetchFailed(error, bound.aborted)
  }
  const notHtml = notAnHtmlPage(page.contentType)
  if (notHtml) throw notHtml
  return page
}

/**
 * Every stylesheet the page links and their imports, fetched once per URL. The page's own
 * get the load bound; another host's, under `cut`, the third-party bound; under `block` the
 * gate refuses them.
 */
async function fetchStylesheets(document: StaticDocument, pageUrl: string, job: StaticJob, fetcher: GateFetcher, cache: SheetCache, signal: AbortSignal): Promise<{ texts: Map<string, FetchedSheet>; unread: string[]; timedOut: Set<string> }> {
  const own = authorityOf(pageUrl)
  const texts = new Map<string, FetchedSheet>()
  const unread: string[] = []
  const timedOut = new Set<string>()
  const asked = new Set<string>()
  let bytes = document.sheets.reduce((sum, sheet) => sum + (sheet.text?.length ?? 0), 0)
  const fetchSheet = async (url: string, depth: number, linked: boolean): Promise<void> => {
    if (asked.has(url) || asked.size >= MAX_SHEETS) return
    asked.add(url)
    const cached = cache.get(job.tenant, url)
    if (cached) {
      bytes += cached.text.length
      if (bytes > MAX_PAGE_CSS_BYTES) throw cssOverBound(bytes)
      texts.set(url, cached)
      if (depth < MAX_IMPORT_DEPTH) await Promise.all(importsOf(cached.text, cached.url).map((next) => fetchSheet(next, depth + 1, false)))
      return
    }
    const authority = authorityOf(url)
    const boundMs = authority !== own && job.thirdParty === 'cut' ? job.thirdPartyTimeoutMs : job.loadTimeoutMs
    const bound = AbortSignal.timeout(boundMs)
    try {
      const fetched = await fetcher.get(url, { signal: AbortSignal.any([signal, bound]), maxBytes: MAX_PAGE_CSS_BYTES })
      const text = decodeBody(fetched, false)
      bytes += text.length
      // Past this, the parse holds the thread for seconds and its memory for good: a clear failure instead.
      if (bytes > MAX_PAGE_CSS_BYTES) throw cssOverBound(bytes)
      texts.set(url, { text, url: fetched.url })
      if (!fetched.redirected) cache.set(job.tenant, url, { text, url: fetched.url }, fetched)
      if (depth < MAX_IMPORT_DEPTH) await Promise.all(importsOf(text, fetched.url).map((next) => fetchSheet(next, depth + 1, false)))
    } catch (error) {
      signal.throwIfAborted()
      if (error instanceof EngineError) throw error
      if (bound.aborted && authority !== null) timedOut.add(authority)
      // A link whose sheet did not come keeps blocking; an import that did not come makes its sheet unread (parsed-sheets.ts).
      if (linked) unread.push(url)
    }
  }
  await Promise.all(document.sheets.map((sheet) => (sheet.href === null ? Promise.all(importsOf(sheet.text ?? '', document.base).map((url) => fetchSheet(url, 1, false))) : fetchSheet(sheet.href, 0, true))))
  return { texts, unread, timedOut }
}

function bits(flags: readonly boolean[]): string {
  let out = ''
  for (const flag of flags) out += flag ? '1' : '0'
  return out
}

/** The job's `states` as the engine applies them to `<html>`. */
function statesOf(selection: Selection | undefined): HtmlState[] {
  return (selection?.states ?? []).flatMap((text) => {
    const state = parseState(text)
    return state === null ? [] : [state]
  })
}

/**
 * Per viewport, which selectors match an element and which media queries hold; with each of
 * the job's `states` the root is put in that state, as a head script would, and asked again.
 */
function answersOf(critical: CriticalCss, document: StaticDocument, viewports: readonly Viewport[], states: readonly HtmlState[]): Answers[] {
  const { questions } = critical
  const readings = [matchSelectors(questions, document)]
  for (const state of states) readings.push(inRootState(document, state, () => matchSelectors(questions, document)))
  return viewports.flatMap((viewport) => {
    const media = questions.media.map((query) => mediaHolds(query, viewport))
    return readings.map((selectors) => ({ selectors, media, inlineStyles: document.inlineStyles }))
  })
}
