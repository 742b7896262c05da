/**
 * Both modes render through the API client: generate, then wait for the job's CSS. Here a
 * client failure becomes what the build makes of it: a 404 from generate means the base
 * URL is not the API, a URL the client cannot send is the page list's fault (both stop
 * the build), and the mode adds its advice to the message.
 */
import { isJobData, type ClientEvent, type CriticalCssClient } from '../../client/types.ts'
import { NotFoundError, formatSeconds } from '../../client/errors.ts'
import type { ThirdPartyPolicy, Viewport } from '../../contract/api-contract.ts'
import { ConfigurationError, PLUGIN_NAME } from '../errors.ts'
import type { BuildLogger } from '../report.ts'
import type { Renderer } from './mode.ts'

/** Which request failed: advice differs (a 404 from generate is the base URL, from a job check a lost job). */
export type RenderStep = 'usage' | 'generate' | 'wait'

/** The mode's advice for a failure, in its own words (env vars in remote mode); null for none. */
export type Advice = (error: unknown, step: RenderStep) => string | null

/** Errors that carry the advice already: the client hands one rejection to every call that waited on it. */
const ADVISED = new WeakSet<Error>()

/** Appends the mode's advice to a client error's message (the client speaks only of its own fields). */
export function advised(error: unknown, step: RenderStep, advice: Advice): unknown {
  const hint = advice(error, step)
  if (hint !== null && error instanceof Error && !ADVISED.has(error)) {
    error.message = `${error.message} ${hint}`
    ADVISED.add(error)
  }
  if (step !== 'generate') return error
  return error instanceof NotFoundError ? new ConfigurationError(error.message) : error
}

export function clientRenderer(client: CriticalCssClient, settings: { viewports: Viewport[]; thirdParty: ThirdPartyPolicy | null; concurrency: number; advice: Advice }): Renderer {
  const { viewports, thirdParty, advice } = settings
  return {
    concurrency: settings.concurrency,
    async render(url, { deadline, signal }) {
      let answer: Awaited<ReturnType<CriticalCssClient['generate']>>
      try {
        answer = await client.generate(url, { viewports, ...(thirdParty ? { thirdParty } : {}), deadline, signal })
      } catch (error) {
        // The client refuses a URL it cannot send (over 2,048 characters, say) before sending it.
        if (error instanceof TypeError) throw new ConfigurationError(`${PLUGIN_NAME}: page ${url.slice(0, 200)}: ${error.message}`)
        throw advised(error, 'generate', advice)
      }
      try {
        const data = isJobData(answer) ? answer : await client.waitForCss(answer, { deadline, signal })
        return { css: data.css ?? '', network: data.network ?? null }
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
