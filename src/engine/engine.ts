/** The part of the service that makes the CSS: the Chromium engine, or a stub in tests. */
import type { Viewport } from '../contract/api-contract.ts'

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
}

export interface Engine {
  generate(input: EngineInput): Promise<{ css: string }>
  close?(): Promise<void>
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

/**
 * One browser context's way out: an HTTP proxy (`server`, `http://127.0.0.1:PORT`) that every
 * connection of the context goes through and that decides which it lets out.
 */
export interface EgressGate {
  readonly server: string
  /** Why it refused one of the context's connections, the first time it did. */
  readonly refused: string | null
  /** Starts a new job's record: `refused` is null again (a warm context's gate serves one job after another). */
  reset(): void
  /** Cuts every connection made through it. */
  close(): void
}
