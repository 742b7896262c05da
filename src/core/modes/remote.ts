/**
 * Remote mode: a configured Critical CSS Generation API renders the pages where the site
 * is deployed (`siteUrl` + base + path). Pages in flight are sized by the plan's pace, read
 * once from the usage endpoint, and when that pace will hold pages the build says so once;
 * the env-var advice is this mode's, not the client's. A wrong address fails the build on
 * the first request (the client's `failFastOnWrongAddress`).
 */
import { buildSelection } from '../build-selection.ts'
import { createClient } from '../../client/client.ts'
import type { ClientEvent, CriticalCssClient } from '../../client/types.ts'
import { BadRequestError, NotFoundError, UnauthorizedError, WrongAddressError, describeBaseUrl } from '../../client/errors.ts'
import type { PaceLimit } from '../../client/rate-window.ts'
import { reachedService } from '../../client/transport.ts'
import { PLAN_REQUESTS_PER_MINUTE, RATE_WINDOW_MS, type Selection, type Usage } from '../../contract/api-contract.ts'
import { buildFileFinder, type BuildOutput } from '../build-server.ts'
import { stylesheetHashes } from '../build-sheets.ts'
import { cacheKey, readJobTimes, writeJobTimes } from '../cache.ts'
import { ENV, type OptionWords, type RemoteService, type ResolvedOptions } from '../options.ts'
import { pagesPrefix, planPages } from '../pages.ts'
import type { BuildLogger } from '../report.ts'
import { advised, clientRenderer, logRetries, type Advice } from './client-renderer.ts'
import { deployedSheetsCheck, type CheckAgainstBuild } from './deployed-sheets.ts'
import type { Mode, RenderedPage } from './mode.ts'

/**
 * Requests a page costs, counted on runs against the reference service (8 pages on free):
 * its generate and the jobData that brings its CSS; and while more than one page is in
 * flight, one jobs() list per round of them (2.5 a page at 2 in flight, 2.0 at 1).
 */
const REQUESTS_PER_PAGE = 2

/** What `pages` pages cost in requests, `inFlight` at a time (see REQUESTS_PER_PAGE). */
function requestsFor(pages: number, inFlight: number): number {
  return pages * REQUESTS_PER_PAGE + (inFlight > 1 ? Math.ceil(pages / inFlight) : 0)
}

/**
 * Requests a page in flight is given room for when pages in flight are sized: it costs
 * 2 to 2.5, and the rest is room for a retry or a slow job, so that the pace still serves
 * every page in flight within its `timeout`.
 */
const REQUESTS_BUDGETED_PER_PAGE = 4

/** What to change when the service says no: the env vars, and the options or flags of the surface the user set them on. */
function remoteAdvice(words: OptionWords): Advice {
  const baseUrl = `${ENV.baseUrl}${words.orOption('baseUrl')}`
  return (error, step) => {
    if (error instanceof WrongAddressError) {
      return `Check that ${baseUrl} is the service's address${error.code === 'ECONNREFUSED' ? ' and that the service is running' : ''}.`
    }
    if (error instanceof UnauthorizedError) return `Set ${ENV.token}${words.orOption('token')} to a valid token for this service.`
    if (error instanceof BadRequestError && step === 'generate') return `Check the page URL (the pages you listed, and ${ENV.siteUrl}${words.orOption('siteUrl')}).`
    if (error instanceof NotFoundError && step !== 'wait') return `Check that ${baseUrl} points at a Critical CSS Generation API.`
    if (!reachedService(error)) return `Check ${baseUrl} and that the service is running.`
    return null
  }
}

/** Pages in flight: what the pace serves within one page's timeout, or all of them without a limit. */
function pagesInFlight(known: PaceLimit | null, options: ResolvedOptions, pages: number): number {
  if (options.concurrency !== null) return options.concurrency
  // Not known (a service without the usage endpoint: its answers' headers will tell the
  // client): pages go in flight as if on the smallest plan.
  const pace = known ?? { requests: PLAN_REQUESTS_PER_MINUTE.free, windowMs: RATE_WINDOW_MS }
  if (pace.requests === null) return Math.max(1, pages)
  return Math.max(1, Math.floor((pace.requests * options.timeoutMs) / pace.windowMs / REQUESTS_BUDGETED_PER_PAGE))
}

/** The pace pages are sized by: the one the client keeps (the `rateLimit` option, else usage, read once); null while not known. */
async function readPace(client: CriticalCssClient, options: ResolvedOptions, signal: AbortSignal | undefined): Promise<PaceLimit | null> {
  try {
    return await client.pace({ deadline: Date.now() + options.timeoutMs, ...(signal ? { signal } : {}) })
  } catch (error) {
    throw advised(error, 'usage', remoteAdvice(options.words))
  }
}

/** `5 requests/min`, `5 requests per 3 s`: a pace as the user's plan states it. */
function describeRate(requests: number, windowMs: number): string {
  const seconds = Math.round(windowMs / 1000)
  const per = seconds === 60 ? '/min' : seconds % 60 === 0 ? ` per ${seconds / 60} min` : ` per ${seconds} s`
  return `${requests} request${requests === 1 ? '' : 's'}${per}`
}

/** `about 12 s`, `about 4 min`. */
function about(ms: number): string {
  return ms < 90_000 ? `about ${Math.round(ms / 1000)} s` : `about ${Math.round(ms / 60_000)} min`
}

/**
 * When the pace will hold pages: the line said once before the waiting ("free plan: 5
 * requests/min, 8 pages need about 4 min") and the note of the progress line ("paced at 5
 * requests/min"). Null when it will not hold them, or is not known. Every request after a
 * window's first `requests` waits for a slot of a later window; the last one goes about
 * that many windows after the first.
 */
function pacing(pace: PaceLimit | null, usage: Usage | null, pages: number, inFlight: number): { line: string; note: string } | null {
  if (pace === null || pace.requests === null) return null
  // The usage read, when there was one, holds a slot of the first window.
  const requests = (usage ? 1 : 0) + requestsFor(pages, inFlight)
  const windows = Math.floor((requests - 1) / pace.requests)
  if (windows === 0) return null
  const rate = describeRate(pace.requests, pace.windowMs)
  const source = usage ? `${usage.plan} plan` : 'the `rateLimit` option'
  return {
    line: `critical CSS: ${source}: ${rate}, ${pages} page${pages === 1 ? ' needs' : 's need'} ${about(windows * pace.windowMs)}`,
    note: `paced at ${rate}`,
  }
}

/** The client of the configured service and the read of its pace begun with it: what a cold build begins as the bundler starts. */
interface RemoteStart {
  client: CriticalCssClient
  /** Where what the service's jobs took is kept; null with the cache off. */
  cacheDir: string | null
  /** The `rateLimit` option's pace, else what the usage read says (null: not known); rejects with the mode's advice. */
  pace: Promise<PaceLimit | null>
  /** The client's retries go to the build's log from now on, those before included. */
  hear(logger: BuildLogger): void
}

function beginRemote(options: ResolvedOptions, service: RemoteService, cacheDir: string | null, signal?: AbortSignal): RemoteStart {
  let say: ((event: ClientEvent) => void) | null = null
  const missed: ClientEvent[] = []
  const client = createClient({
    baseUrl: service.baseUrl,
    token: service.token.reveal(),
    // A build's first request finds out whether the address is right: waiting 70 s to learn it is wrong helps no one.
    failFastOnWrongAddress: true,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(cacheDir !== null ? { jobTimes: readJobTimes(cacheDir, describeBaseUrl(service.baseUrl)) } : {}),
    onEvent: (event) => (say ? say(event) : missed.push(event)),
  })
  const pace = readPace(client, options, signal)
  // Said by the run that awaits it; a build that fails while it bundles never does.
  pace.catch(() => {})
  return {
    client,
    cacheDir,
    pace,
    hear(logger) {
      say = logRetries(logger)
      for (const event of missed.splice(0)) say(event)
    },
  }
}

export function remoteMode(options: ResolvedOptions, service: RemoteService): Mode {
  const name = describeBaseUrl(service.baseUrl)
  let started: RemoteStart | null = null
  const start = (cacheDir: string | null, signal?: AbortSignal): RemoteStart => (started ??= beginRemote(options, service, cacheDir, signal))
  return {
    begin: (cacheDir) => void start(cacheDir),
    async open({ base, cacheDir, output, root }) {
      // This build's own stylesheets: what a result is kept for, and what the deployed site's CSS is held to.
      const sheetHashes = output ? stylesheetHashes(buildFileFinder(output, base), options.siteUrl?.origin ?? '') : null
      // keep/drop with what their RegExps match and the markers mark in this build's stylesheets: what the service is sent and what keys the cache.
      const { selection, notes } = await buildSelection(options, output, root)
      return {
        name,
        notes,
        plan: (files) => planPages(options.pages, files, { siteUrl: options.siteUrl, base }),
        prefix: pagesPrefix(base, options.siteUrl),
        shown: (page) => page.url,
        // The service decides what renders: its results are kept by the service's name.
        engine: null,
        cacheKey: async (page, html) =>
          cacheKey({ service: name, url: page.url, viewports: options.viewports, thirdParty: options.thirdParty, selection, ...(sheetHashes ? { contents: await sheetHashes(html, page.url) } : {}) }),
        ...(output ? { checkAgainstBuild: deployedSheetsCheck(output, base) } : {}),
        async renderer(count, logger, signal) {
          const { client, pace, hear } = start(cacheDir, signal)
          hear(logger)
          const known = await pace
          const concurrency = pagesInFlight(known, options, count)
          const held = pacing(known, client.lastUsage, count, concurrency)
          if (held !== null) logger.info(held.line)
          return clientRenderer(client, { viewports: options.viewports, thirdParty: options.thirdParty, selection, concurrency, advice: remoteAdvice(options.words), pacing: held?.note ?? null })
        },
      }
    },
    async release() {
      const taken = started
      started = null
      if (taken === null) return
      const { client, cacheDir } = taken
      // A memory, not a result: a build whose cache cannot be written loses nothing but the head start.
      if (cacheDir !== null && client.jobTimes.length > 0) await writeJobTimes(cacheDir, name, client.jobTimes).catch(() => {})
      await client.close()
    },
  }
}

/** Remote mode for a server's routes (core/server-routes.ts): one sample at a time, with the `selection` it keeps. */
export interface RemoteRoutes {
  /** The service, as the log names it. */
  name: string
  render(url: string, selection: Selection | null): Promise<RenderedPage>
  /** Holds a sample's CSS to this build's stylesheets (`html`: the sample as this build's server answered it). */
  checkAgainstBuild: CheckAgainstBuild
  close(): Promise<void>
}

/**
 * The configured service renders a server's samples where the app is deployed, as it renders
 * built pages: paced by the plan, with this mode's advice, and the CSS held to this build's
 * stylesheets (`output`, served below `base`) by the same check.
 */
export function remoteRoutes(options: ResolvedOptions, service: RemoteService, output: BuildOutput, base: string, logger: BuildLogger): RemoteRoutes {
  const { client, pace, hear } = beginRemote(options, service, null)
  hear(logger)
  const advice = remoteAdvice(options.words)
  return {
    name: describeBaseUrl(service.baseUrl),
    async render(url, selection) {
      await pace
      const renderer = clientRenderer(client, { viewports: options.viewports, thirdParty: options.thirdParty, selection, concurrency: 1, advice })
      return renderer.render(url, { deadline: Date.now() + options.timeoutMs, signal: AbortSignal.timeout(options.timeoutMs) })
    },
    checkAgainstBuild: deployedSheetsCheck(output, base),
    close: () => client.close(),
  }
}
