/**
 * Remote mode: a configured Critical CSS Generation API renders the pages where the site
 * is deployed (`siteUrl` + base + path). Pages in flight are sized by the plan's pace, read
 * once from the usage endpoint; the env-var advice is this mode's, not the client's.
 */
import { createClient } from '../../client/client.ts'
import type { ClientEvent, CriticalCssClient } from '../../client/types.ts'
import { BadRequestError, NotFoundError, UnauthorizedError, describeBaseUrl } from '../../client/errors.ts'
import type { PaceLimit } from '../../client/rate-window.ts'
import { reachedService } from '../../client/transport.ts'
import { PLAN_REQUESTS_PER_MINUTE, RATE_WINDOW_MS } from '../../contract/api-contract.ts'
import { cacheKey, readJobTimes, writeJobTimes } from '../cache.ts'
import { ENV, type RemoteService, type ResolvedOptions } from '../options.ts'
import { planPages } from '../pages.ts'
import type { BuildLogger } from '../report.ts'
import { advised, clientRenderer, logRetries, type Advice } from './client-renderer.ts'
import type { Mode } from './mode.ts'

/** Requests one page costs at least (generate, a status check, its CSS): sizes the default concurrency. */
const REQUESTS_PER_PAGE = 4

/** What to change when the service says no: the env vars and options of the plugin. */
const remoteAdvice: Advice = (error, step) => {
  if (error instanceof UnauthorizedError) return `Set ${ENV.token} (or the \`token\` option) to a valid token for this service.`
  if (error instanceof BadRequestError && step === 'generate') return `Check the page URL (the \`pages\` and \`siteUrl\` options, or ${ENV.siteUrl}).`
  if (error instanceof NotFoundError && step !== 'wait') return `Check that ${ENV.baseUrl} (the \`baseUrl\` option) points at a Critical CSS Generation API.`
  if (!reachedService(error)) return `Check ${ENV.baseUrl} (the \`baseUrl\` option) and that the service is running.`
  return null
}

/** Pages in flight: what the pace serves within one page's timeout, or all of them without a limit. */
function pagesInFlight(pace: PaceLimit, options: ResolvedOptions, pages: number): number {
  if (options.concurrency !== null) return options.concurrency
  if (pace.requests === null) return Math.max(1, pages)
  return Math.max(1, Math.floor((pace.requests * options.timeoutMs) / pace.windowMs / REQUESTS_PER_PAGE))
}

/** The pace pages are sized by: the one the client keeps (the `rateLimit` option, else usage, read once). */
async function readPace(client: CriticalCssClient, options: ResolvedOptions, signal: AbortSignal | undefined): Promise<PaceLimit> {
  try {
    const pace = await client.pace({ deadline: Date.now() + options.timeoutMs, ...(signal ? { signal } : {}) })
    // Not known yet (a service without the usage endpoint: its answers' headers will tell the
    // client): pages go in flight as if on the smallest plan (`concurrency` overrides).
    return pace ?? { requests: PLAN_REQUESTS_PER_MINUTE.free, windowMs: RATE_WINDOW_MS }
  } catch (error) {
    throw advised(error, 'usage', remoteAdvice)
  }
}

/** The client of the configured service and the read of its pace begun with it: what a cold build begins as the bundler starts. */
interface RemoteStart {
  client: CriticalCssClient
  /** Where what the service's jobs took is kept; null with the cache off. */
  cacheDir: string | null
  /** The `rateLimit` option's pace, else what the usage read says; rejects with the mode's advice. */
  pace: Promise<PaceLimit>
  /** The client's retries go to the build's log from now on, those before included. */
  hear(logger: BuildLogger): void
}

function beginRemote(options: ResolvedOptions, service: RemoteService, cacheDir: string | null, signal?: AbortSignal): RemoteStart {
  let say: ((event: ClientEvent) => void) | null = null
  const missed: ClientEvent[] = []
  const client = createClient({
    baseUrl: service.baseUrl,
    token: service.token.reveal(),
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
    async open({ base, cacheDir }) {
      return {
        name,
        plan: (files) => planPages(options.pages, files, { siteUrl: options.siteUrl, base }),
        shown: (page) => page.url,
        cacheKey: async (page) => cacheKey({ service: name, url: page.url, viewports: options.viewports, thirdParty: options.thirdParty }),
        async renderer(count, logger, signal) {
          const { client, pace, hear } = start(cacheDir, signal)
          hear(logger)
          const concurrency = pagesInFlight(await pace, options, count)
          return clientRenderer(client, { viewports: options.viewports, thirdParty: options.thirdParty, concurrency, advice: remoteAdvice })
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
