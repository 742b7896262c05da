/**
 * Where a build's critical CSS comes from. Remote mode asks a configured service; embedded
 * mode serves the build to the reference service it starts in this process. The run
 * (`core/run.ts`) only speaks to this interface, so it has no mode of its own.
 */
import type { Page } from '../pages.ts'
import type { BuildLogger } from '../report.ts'

export interface Mode {
  /** The service as reports and cache keys name it, without credentials. */
  readonly name: string
  /** This build's pages with the URLs the renderer fetches (`files`: the emitted HTML files). */
  plan(files: readonly string[]): Page[]
  /** What reports and warnings call a page. */
  shown(page: Page): string
  /** Where a page's result is kept in the cache (`html`: the page as emitted). */
  cacheKey(page: Page, html: string): Promise<string>
  /**
   * Starts what renders `count` pages (a client, in embedded mode also the browser), once
   * some page is not in the cache. What the user must fix (a ConfigurationError, a 400 or
   * 401 from the service) stops the build.
   */
  open(count: number, logger: BuildLogger, signal?: AbortSignal): Promise<Renderer>
  /** Stops everything the mode started; safe to call more than once. */
  close(): Promise<void>
}

export interface RenderOptions {
  /** Epoch ms: the page's time is up. */
  deadline: number
  signal: AbortSignal
}

export interface Renderer {
  /** Pages in flight at once. */
  readonly concurrency: number
  /**
   * The page's critical CSS. A failure the user must fix in the configuration (a bad token,
   * a base URL that is not the API, a page the service refuses) is a `ConfigurationError`
   * or a `BadRequestError`/`UnauthorizedError`, with the mode's hint in its message.
   */
  render(url: string, options: RenderOptions): Promise<string>
  close(): Promise<void>
}
