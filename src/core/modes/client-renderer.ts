/**
 * Both modes render through the API client: generate, then wait for the job's CSS. Here a
 * client failure becomes what the build makes of it: a wrong address, or a 404 from
 * generate, means the base URL is not the API, a URL the client cannot send is the page
 * list's fault (all stop the build), and the mode's advice takes the place of the client's.
 */
import { isJobData, type ClientEvent, type CriticalCssClient } from '../../client/types.ts'
import { CriticalCssError, NotFoundError, WrongAddressError, formatSeconds, rehint } from '../../client/errors.ts'
import { latencyOf } from '../../client/job-times.ts'
import type { Selection, ThirdPartyPolicy, Viewport } from '../../contract/api-contract.ts'
import { timed } from '../../shared/timings.ts'
import { ConfigurationError, PLUGIN_NAME } from '../errors.ts'
import type { BuildLogger } from '../report.ts'
import type { Renderer } from './mode.ts'

/** Which request failed: advice differs (a 404 from generate is the base URL, from a job check a lost job). */
export type RenderStep = 'usage' | 'generate' | 'wait'

/** The mode's advice for a failure, in its own words (env vars in remote mode); null for none. */
export type Advice = (error: unknown, step: RenderStep) => string | null

/** Errors that carry the advice already: the client hands one rejection to every call that waited on it. */
const ADVISED = new WeakSet<Error>()

/** Puts the mode's advice in a client error's message, in place of the client's own (which names only createClient's fields). */
export function advised(error: unknown, step: RenderStep, advice: Advice): unknown {
  const hint = advice(error, step)
  if (hint !== null && error instanceof Error && !ADVISED.has(error)) {
    error.message = error instanceof CriticalCssError ? rehint(error, hint) : `${error.message} ${hint}`
    ADVISED.add(error)
  }
  // Nothing at the address is the API: no page can get CSS, whichever request found it out.
  if (error instanceof WrongAddressError) return new ConfigurationError(error.message)
  if (step !== 'generate') return error
  return error instanceof NotFoundError ? new ConfigurationError(error.message) : error
}

export function clientRenderer(
  client: CriticalCssClient,
  settings: { viewports: Viewport[]; thirdParty: ThirdPartyPolicy | null; selection?: Selection | null; concurrency: number; advice: Advice; pacing?: string | null },
): Renderer {
  const { viewports, thirdParty, selection, advice } = settings
  return {
    concurrency: settings.concurrency,
    pacing: settings.pacing ?? null,
    async render(url, { deadline, signal, onSent }) {
      let answer: Awaited<ReturnType<CriticalCssClient['generate']>>
      try {
        answer = await timed('request: generate', () => client.generate(url, { viewports, ...(thirdParty ? { thirdParty } : {}), ...(selection ? { selection } : {}), ...(onSent ? { onSent } : {}), deadline, signal }), url)
      } catch (error) {
        // The client refuses a URL it cannot send (over 2,048 characters, say) before sending it.
        if (error instanceof TypeError) throw new ConfigurationError(`${PLUGIN_NAME}: page ${url.slice(0, 200)}: ${error.message}`)
        throw advised(error, 'generate', advice)
      }
      try {
        const job = answer
        const data = isJobData(job) ? job : await timed('request: wait for the CSS', () => client.waitForCss(job, { deadline, signal }), url)
        return { css: data.css ?? '', network: data.network ?? null, firstScreen: data.firstScreen ?? null, engine: data.engine ?? null, serviceMs: latencyOf(data) }
      } catch (error) {
        throw advised(error, 'wait', advice)
      }
    },
  }
}

/** The client's retries, in the build's log. */
export function logRetries(logger: BuildLogger): (event: ClientEvent) => void {
  return (event) => logger.info(`critical CSS: ${event.request} answered ${event.error.status ?? event.error.code}; retry ${event.attempt} in ${formatSeconds(event.waitMs)}`)
}
