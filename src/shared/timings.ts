/**
 * Where a render's time goes, step by step, for whoever asks: each timed step is published
 * on a `node:diagnostics_channel` channel (the way undici and Node itself report their
 * steps). With no subscriber nothing is measured or kept, so a long-running service pays
 * nothing; the demo's `--verbose` subscribes and prints the breakdown.
 */
import { channel } from 'node:diagnostics_channel'

/** The channel name a subscriber passes to `diagnostics_channel.subscribe`. */
export const TIMINGS_CHANNEL = 'unplugin-critical-css:timings'

/** One timed step: `startMs` on `performance.now()`'s clock, `page` the URL it was for (none for a build's own steps). */
export interface StepTiming {
  step: string
  startMs: number
  ms: number
  page?: string
}

const timings = channel(TIMINGS_CHANNEL)

/** Runs `work`, publishing how long it took (failed or not) when someone listens. */
export async function timed<T>(step: string, work: () => Promise<T>, page?: string): Promise<T> {
  if (!timings.hasSubscribers) return await work()
  const startMs = performance.now()
  try {
    return await work()
  } finally {
    const timing: StepTiming = { step, startMs, ms: performance.now() - startMs, ...(page === undefined ? {} : { page }) }
    timings.publish(timing)
  }
}
