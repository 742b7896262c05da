/**
 * One job on the engine, within its deadline, and how it ended: the store write that
 * records it and the log line that reports it. Both queues, local and shared, render
 * through it; what happens around a render (taking the job, writing the result) is theirs.
 */
import { DEFAULT_THIRD_PARTY, JOB_FAILURE_CODES } from '../contract/api-contract.ts'
import { EngineError } from '../engine/engine.ts'
import { abortable } from '../shared/abortable.ts'
import { timed } from '../shared/timings.ts'
import type { QueueOptions } from './queue-options.ts'
import type { Store, StoredJob } from './store/types.ts'

const MAX_ERROR_MESSAGE = 500

type JobPatch = Parameters<Store['updateJob']>[1]

/** What a job's run ends with: the write that records it, and the line that reports it. */
export interface Outcome {
  patch: JobPatch
  line: Record<string, unknown>
  /** Preempted: once recorded as queued, the job goes back to the front of its token's line. */
  again?: true
}

/**
 * Renders a job within its deadline and says how it ended: done, or failed (the deadline,
 * the engine's own code). Rejects only when `stop` aborts it first; what that means (back
 * to the queue) is the caller's. `renderMs` is set for a finished render.
 */
export async function renderJob(
  job: StoredJob,
  options: Pick<QueueOptions, 'engine' | 'now' | 'jobTimeoutMs' | 'beforeRun'>,
  started: number,
  stop: AbortSignal,
): Promise<Outcome & { renderMs?: number }> {
  const { engine, now, jobTimeoutMs } = options
  const id = job.id
  const endsAt = Date.now() + jobTimeoutMs
  const deadline = AbortSignal.timeout(jobTimeoutMs)
  const signal = AbortSignal.any([deadline, stop])
  // A job accepted before `third_party` existed has none: it renders with the default, and says so.
  const thirdParty = job.thirdParty ?? DEFAULT_THIRD_PARTY
  try {
    // Aborted while its processing write waited on a busy store: the engine is not started.
    signal.throwIfAborted()
    await options.beforeRun?.(job, signal)
    const { css, network, firstScreen, engine: madeBy } = await timed('service: job', () => abortable(engine.generate({ url: job.url, viewports: job.viewports, signal, deadline: endsAt, tenant: job.tokenId, thirdParty, ...(job.selection ? { selection: job.selection } : {}) }), signal), job.url)
    const finished = now()
    const cssBytes = Buffer.byteLength(css)
    return {
      patch: { status: 'done', cssAvailable: true, css, cssBytes, durationMs: finished - started, updatedAt: new Date(finished).toISOString(), error: null, thirdParty, network: network ?? null, firstScreen: firstScreen ?? null, engine: madeBy ?? null },
      line: { event: 'job_done', job: id, ms: finished - started, css_bytes: cssBytes },
      renderMs: finished - started,
    }
  } catch (error) {
    if (stop.aborted && !deadline.aborted) throw stop.reason
    const failure = deadline.aborted ? { code: 'timeout', message: `The page did not finish rendering within ${seconds(jobTimeoutMs)} s.` } : describeFailure(error)
    return { patch: { status: 'failed', error: failure, durationMs: now() - started, updatedAt: new Date(now()).toISOString(), thirdParty }, line: { event: 'job_failed', job: id, code: failure.code } }
  }
}

export function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000))
}

function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof EngineError) {
    const code = (JOB_FAILURE_CODES as readonly string[]).includes(error.code) ? error.code : 'render_failed'
    return { code, message: error.message.slice(0, MAX_ERROR_MESSAGE) }
  }
  // An unexpected fault: its text may hold internals, so the job says only that it failed.
  return { code: 'internal', message: 'The service failed while rendering this page.' }
}
