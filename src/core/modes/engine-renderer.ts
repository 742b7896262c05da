/**
 * Embedded mode's renderer for the static engine: the engine called directly, in this
 * process, not through the loopback service. A static job takes a few ms of the engine's
 * threads; the service's HTTP, queue and status checks around it cost the build's own thread
 * about as much again (design.md: embedded mode reaches the engine whichever way the figures
 * favour; the Chromium engine's jobs take hundreds of ms, and go through the service). A job's
 * failure says what the service would have said for it.
 */
import { JobFailedError } from '../../client/errors.ts'
import type { Selection, ThirdPartyPolicy, Viewport } from '../../contract/api-contract.ts'
import type { EngineCall } from './embedded-service.ts'
import type { Renderer } from './mode.ts'

/** Whose jobs they are: one build is one tenant, as its token is to the service. */
const TENANT = 'build'

export function engineRenderer(generate: EngineCall, settings: { viewports: Viewport[]; thirdParty: ThirdPartyPolicy | null; selection: Selection | null; concurrency: number; timeoutMs: number }): Renderer {
  const { viewports, thirdParty, selection, timeoutMs } = settings
  return {
    concurrency: settings.concurrency,
    pacing: null,
    async render(url, { deadline, signal, onSent }) {
      onSent?.()
      const begun = Date.now()
      // The service's job deadline, as embedded mode sets it: the `timeout` option.
      const timedOut = AbortSignal.timeout(Math.max(1, Math.min(timeoutMs, deadline - begun)))
      try {
        const { css, network, engine } = await generate({
          url,
          viewports,
          signal: AbortSignal.any([signal, timedOut]),
          deadline: Math.min(deadline, begun + timeoutMs),
          tenant: TENANT,
          ...(thirdParty ? { thirdParty } : {}),
          ...(selection ? { selection } : {}),
        })
        return { css, network: network ?? null, firstScreen: null, engine: engine ?? null, serviceMs: Date.now() - begun }
      } catch (error) {
        signal.throwIfAborted()
        throw failed(url, error, timedOut.aborted ? timeoutMs : null)
      }
    },
  }
}

/** A job's failure as the service records it and the client reports it: the engine's code and words, else `internal` with no internals. */
function failed(url: string, error: unknown, timedOutAfterMs: number | null): JobFailedError {
  const known = error instanceof Error && error.name === 'EngineError' && typeof (error as Error & { code?: unknown }).code === 'string'
  const { code, detail } =
    timedOutAfterMs !== null
      ? { code: 'timeout', detail: `The page did not finish rendering within ${(timedOutAfterMs / 1000).toFixed(timedOutAfterMs < 10_000 ? 1 : 0)} s.` }
      : known
        ? { code: (error as Error & { code: string }).code, detail: (error as Error).message }
        : { code: 'internal', detail: 'The service failed while rendering this page.' }
  return new JobFailedError(`The critical CSS job for ${url} failed (${code}): ${detail}`, { status: null, code }, '', url, detail)
}
