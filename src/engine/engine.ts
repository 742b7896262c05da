/** The part of the service that makes the CSS: the Chromium engine, or a stub in tests. */
import type { FirstScreenDifference, JobNetwork, Selection, ThirdPartyPolicy, Viewport } from '../contract/api-contract.ts'
import type { EngineName } from '../shared/engines.ts'

export interface EngineInput {
  url: string
  viewports: Viewport[]
  /** Aborted at the job's deadline or when the service shuts down. */
  signal: AbortSignal
  /** When the job's time is up (epoch ms): an engine sizes its own waits to finish before it. */
  deadline?: number
  /**
   * Whose job it is (the service passes the token). Jobs of one tenant may reuse a warm page,
   * cleared between them; jobs of different tenants never share a browser context. Without
   * one, every job gets a fresh context.
   */
  tenant?: string
  /** What the job does with other hosts than the page's own. Default `cut`. */
  thirdParty?: ThirdPartyPolicy
  /**
   * The user's say over the critical set: selectors whose rules are always kept (`keep`) or
   * never (`drop`), other states of `<html>` to read the first screen in too (`states`), and
   * `fontFaces` / `keyframes` false for none at all. Absent: what the first screen uses.
   */
  selection?: Selection
}

/** A render's result: the CSS, and what the render went without (absent: nothing, or an engine that does not say). */
export interface EngineResult {
  css: string
  network?: JobNetwork
  /** Where the first screen with only the CSS still differs from the full page, per viewport (absent: not checked). */
  firstScreen?: FirstScreenDifference[]
  /** What made it (`chromium`, `static`); absent: an engine that does not say. */
  engine?: EngineName
}

export interface Engine {
  generate(input: EngineInput): Promise<EngineResult>
  close?(): Promise<void>
  /** Jobs at once that keep it busy, when the engine knows best (the static engine: a few per thread of its own); absent: as its caller sizes them. */
  readonly jobsAtOnce?: number
}

/** An engine failure the job reports with this code (`fetch_failed`, `render_failed`, `blocked_url`, …). */
export class EngineError extends Error {
  override name = 'EngineError'
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}
