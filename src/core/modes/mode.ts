/**
 * Where a build's critical CSS comes from. Remote mode asks a configured service; embedded
 * mode serves the build to the reference service it starts in this process. A plugin
 * instance has one mode (its build session picks it); the run (`core/run.ts`) only speaks
 * to these interfaces, so it has no mode of its own.
 */
import type { FirstScreenDifference, JobNetwork } from '../../contract/api-contract.ts'
import type { BuildOutput } from '../build-server.ts'
import type { Page } from '../pages.ts'
import type { BuildLogger } from '../report.ts'
import type { CheckAgainstBuild } from './deployed-sheets.ts'

/** The mode of one plugin instance, across its builds: what it starts, each build's view, and its release. */
export interface Mode {
  /**
   * Starts what renders now, before any page is known (embedded: the service and the
   * browser; remote: the client and its pace read), so that it overlaps the bundling.
   * A build that renders takes it over; one that renders nothing leaves it to `release`.
   */
  begin(cacheDir: string | null): void
  /** One build's view of the mode (the output is what the embedded service serves). */
  open(build: ModeBuild): Promise<ModeRun>
  /** Stops everything begun or opened for the build; safe more than once. The next build begins afresh. */
  release(): Promise<void>
}

export interface ModeBuild {
  /** The bundler's base / publicPath. */
  base: string
  /** Where results and what the service's jobs took are kept; null with the cache off. */
  cacheDir: string | null
  /** The whole build output (embedded mode serves it to its browser). */
  output: BuildOutput | undefined
  /** The project root: what warnings name the project's files relative to. */
  root: string
}

/** The mode as one build's run sees it. */
export interface ModeRun {
  /** The service as reports and cache keys name it, without credentials. */
  readonly name: string
  /** This build's pages with the URLs the renderer fetches (`files`: the emitted HTML files). */
  plan(files: readonly string[]): Page[]
  /** The URL path the output directory is served at (`/`, `/project/`): the rendered CSS names the build's files below it. */
  readonly prefix: string
  /** What the run warns about once before its pages (markers that name no rule of the build). */
  readonly notes: readonly string[]
  /** What reports and warnings call a page. */
  shown(page: Page): string
  /**
   * The engine this build's pages are looked up for in the cache: the one it expects to render
   * with (embedded mode: a browser found, or none), null where the service decides (remote mode).
   */
  readonly engine: string | null
  /**
   * Where a page's result is kept in the cache (`html`: the page as emitted; `engine`: what made
   * it, so a result of one engine never answers a build that renders with the other).
   */
  cacheKey(page: Page, html: string, engine: string | null): Promise<string>
  /**
   * Embedded mode: the stylesheets the page links on its own origin that the build lacks (a
   * missing or wrong base), asked before the cache; null when it lacks none. Absent in remote
   * mode, whose service renders the deployed site, not this build.
   */
  missingSheets?(page: Page, html: string): Promise<MissingSheets | null>
  /**
   * What renders `count` pages (a client, in embedded mode also the browser), once some
   * page is not in the cache. What the user must fix (a ConfigurationError, a 400 or 401
   * from the service) stops the build. The mode's release stops it.
   */
  renderer(count: number, logger: BuildLogger, signal?: AbortSignal): Promise<Renderer>
  /**
   * Remote mode: holds a page's critical CSS to this build's own stylesheets, since the
   * service rendered the deployed site, which may run another release. Absent in embedded
   * mode, which renders this build.
   */
  checkAgainstBuild?: CheckAgainstBuild
}

/** Stylesheets a page links that the build lacks. */
export interface MissingSheets {
  /** Their paths, as the page links them. */
  paths: string[]
  /** Whether they are every sheet the page links on its own origin: rendered, it would get none of its own CSS. */
  all: boolean
  /** When `all`: the bases that would serve them (base-check.ts `BaseFinding`); else empty. */
  bases: string[]
}

export interface RenderOptions {
  /** Epoch ms: the page's time is up. */
  deadline: number
  signal: AbortSignal
  /** Called once, when the page's request leaves (after any wait for the pace): where the page's own time begins. */
  onSent?: () => void
}

/** A page's result: its critical CSS, and what the render went without (null: nothing, or a service that does not say). */
export interface Rendered {
  css: string
  network: JobNetwork | null
  /** Where the first screen with only the CSS still differs from the full page (null: not checked, or a service that does not say). */
  firstScreen: FirstScreenDifference[] | null
  /** What made the CSS (`chromium`, `static`); null: a service that does not say. */
  engine: string | null
}

/** A render's result, with how long the page took at the service. */
export interface RenderedPage extends Rendered {
  /** The job's own time at the service, from creation to done; null when the service does not say. */
  serviceMs: number | null
}

export interface Renderer {
  /** Pages in flight at once. */
  readonly concurrency: number
  /** Why pages wait, for the progress line (`paced at 5 requests/min`); null when nothing holds them. */
  readonly pacing: string | null
  /**
   * The page's critical CSS. A failure the user must fix in the configuration (a bad token,
   * a base URL that is not the API, a page the service refuses) is a `ConfigurationError`
   * or a `BadRequestError`/`UnauthorizedError`, with the mode's hint in its message.
   */
  render(url: string, options: RenderOptions): Promise<RenderedPage>
}
