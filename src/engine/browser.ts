/**
 * The engine's browser: a system Chrome/Chromium found on this machine (never a downloaded
 * one), launched with the engine's flags, pinged while it is in use, and killed and forgotten
 * when it stops answering, so that the next job launches another.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Browser, CDPSession } from 'playwright-core'
import { timed } from '../shared/timings.ts'
import { EgressWallBroken, checkForcedThroughProxy, openClosedProxy } from './egress-wall.ts'
import type { EgressGate } from './egress.ts'
import { EngineError } from './engine.ts'
import { EGRESS_FLAGS, IGNORED_DEFAULT_ARGS, LOOPBACK_BYPASS, chromiumFlags, isRoot } from './flags.ts'
import { createRendererBounds, type RendererBounds, type RendererWatch } from './renderers.ts'

/** Longest a browser may take to start, and to be connected to once started. */
const LAUNCH_TIMEOUT_MS = 30_000
/**
 * A live browser opens or closes a context, or answers a ping, well within this (a few hundred
 * ms on a busy machine); one that takes longer has stopped answering (stopped, or its main
 * thread wedged) and is killed and replaced.
 */
const BROWSER_ANSWER_MS = 10_000
/** How often a browser is pinged, so one that stops answering in the middle of a job is noticed. */
const HEARTBEAT_MS = 2000
/** What a launch that failed for want of a sandbox says. */
const SANDBOX_ERROR = /sandbox/i

/** The browser's part of the engine's options, resolved (options.ts). */
export interface BrowserOptions {
  executablePath: string
  /** Extra command-line flags, after ours. */
  browserArgs: string[]
  /** Opens a gate for one browser context: its only way out. */
  egress: () => Promise<EgressGate>
  rendererCpu: { share: number; seconds: number }
  log: (line: Record<string, unknown>) => void
}

/** A launched browser, with the engine's hold on its process. */
export interface LaunchedBrowser {
  readonly browser: Browser
  /** Set once the engine stopped using it (it died, was killed, or the engine closed). */
  dead: boolean
  /** SIGKILL to the browser's whole process group, at once: for a browser that stopped answering. */
  kill(): void
  /** Stops watching its renderers. */
  stop(): void
  /** Closes it, and kills it when it does not close in time. */
  close(): Promise<void>
}


/** The browser died, or stopped answering and was killed, under the job: it is relaunched and the job tried once more. */
export class BrowserGone extends EngineError {
  constructor() {
    super('render_failed', 'The browser crashed while rendering the page.')
  }
}

/** Whether the browser is or gets disconnected within `ms`. */
export function disconnects(browser: Browser, ms: number): Promise<boolean> {
  if (!browser.isConnected()) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      browser.off('disconnected', done)
      resolve(!browser.isConnected())
    }
    const timer = setTimeout(done, ms)
    browser.on('disconnected', done)
  })
}

/**
 * The engine's one live browser, launched when first asked for and shared by every job. One
 * that dies or stops answering is forgotten (its listeners hear of it) and the next ask
 * launches another.
 */
export class Browsers {
  readonly #options: BrowserOptions
  readonly #bounds: RendererBounds
  #browser: Promise<LaunchedBrowser> | null = null
  /** The browser #browser resolved to, so a dead one is forgotten at once. */
  #launched: LaunchedBrowser | null = null
  #closed = false
  /**
   * Chromium's sandbox, on unless the service runs as root (Chromium refuses it there).
   * Playwright turns it off by default; a system that cannot give it turns it off here.
   */
  #sandbox = !isRoot()
  readonly #forgetListeners: ((launched: LaunchedBrowser) => void)[] = []

  constructor(options: BrowserOptions) {
    this.#options = options
    this.#bounds = createRendererBounds({ log: options.log, cpu: options.rendererCpu })
  }

  /** Set once the engine closed: nothing launches any more. */
  get closed(): boolean {
    return this.#closed
  }

  /** Whether `launched` is still the browser jobs are given (not dead, forgotten or closed). */
  isCurrent(launched: LaunchedBrowser): boolean {
    return this.#launched === launched
  }

  /** Called with each browser that is forgotten, after it is. */
  onForget(listener: (launched: LaunchedBrowser) => void): void {
    this.#forgetListeners.push(listener)
  }

  /** The live browser, launched now when there is none. */
  launch(): Promise<LaunchedBrowser> {
    if (this.#closed) return Promise.reject(new EngineError('render_failed', 'The engine is closed.'))
    const launch = (sandbox: boolean): Promise<LaunchedBrowser> => launchBrowser(this.#options.executablePath, this.#options.browserArgs, this.#bounds, sandbox)
    this.#browser ??= launch(this.#sandbox)
      .catch((error: unknown) => {
        if (!this.#sandbox || !SANDBOX_ERROR.test(String(error))) throw error
        // No user namespaces or setuid helper here (a locked-down container): rendering still works without.
        this.#sandbox = false
        this.#options.log({ event: 'chromium_sandbox_unavailable', reason: String(error).split('\n').find((line) => SANDBOX_ERROR.test(line))?.trim() })
        return launch(false)
      })
      .then(
        (launched) => {
          this.#launched = launched
          launched.browser.on('disconnected', () => this.forget(launched))
          void this.#heartbeat(launched)
          return launched
        },
        (error: unknown) => {
          this.#browser = null
          // A job sees only that it failed: the operator learns why here.
          if (error instanceof EgressWallBroken) this.#options.log({ event: 'egress_wall_broken', reason: error.message })
          throw error
        },
      )
    return this.#browser
  }

  /**
   * A browser call a live browser answers at once (opening or closing a context, a ping). One
   * that takes longer than {@link BROWSER_ANSWER_MS} means the browser stopped answering: it
   * is killed (its jobs see it gone) and the next job gets a new one.
   */
  answered<T>(launched: LaunchedBrowser, call: Promise<T>): Promise<T> {
    let settled = false
    let timer: NodeJS.Timeout | undefined
    call.catch(() => {})
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // An event loop that was held up runs timers before the I/O that answered: look once more after it.
        setImmediate(() => {
          if (settled) return
          this.#unresponsive(launched)
          reject(new BrowserGone())
        })
      }, BROWSER_ANSWER_MS)
      timer.unref()
    })
    late.catch(() => {})
    return Promise.race([call, late]).finally(() => {
      settled = true
      clearTimeout(timer)
    })
  }

  /** Forgets a browser that died or was killed: the next job launches another; its listeners close what they kept of it. */
  forget(launched: LaunchedBrowser): void {
    launched.dead = true
    launched.stop()
    if (this.#launched === launched) {
      this.#launched = null
      this.#browser = null
    }
    for (const listener of this.#forgetListeners) listener(launched)
  }

  async close(): Promise<void> {
    this.#closed = true
    const browser = this.#browser
    this.#browser = null
    this.#launched = null
    const launched = await browser?.catch(() => null)
    if (!launched) return
    // Not an unresponsive browser to report: it is closed, or killed when it does not close in time.
    launched.dead = true
    await launched.close()
  }

  /**
   * Pings the browser while it is the engine's: one that stops answering in the middle of a job
   * (stopped, its main thread wedged) is replaced within about {@link BROWSER_ANSWER_MS}, and
   * the job on it tried once more, instead of every job waiting out its own deadline on it.
   */
  async #heartbeat(launched: LaunchedBrowser): Promise<void> {
    let session: CDPSession
    try {
      session = await this.answered(launched, launched.browser.newBrowserCDPSession())
    } catch {
      return
    }
    while (!launched.dead) {
      await sleep(HEARTBEAT_MS, undefined, { ref: false })
      if (launched.dead) return
      try {
        await this.answered(launched, session.send('Browser.getVersion'))
      } catch {
        return
      }
    }
  }

  #unresponsive(launched: LaunchedBrowser): void {
    if (launched.dead) return
    this.#options.log({ event: 'browser_unresponsive', waitedMs: BROWSER_ANSWER_MS })
    launched.kill()
    this.forget(launched)
  }
}

/**
 * Launched over a pipe (`launch`), the way Playwright talks to a browser it starts itself: one
 * hop from this process to the browser. (Through `launchServer` and `connect` every call and
 * event crossed a WebSocket with per-message compression as well: about a third of the
 * engine's own CPU on a 60-page site.) The browser's process, which an unresponsive browser is
 * killed through and whose renderers are bounded by PID, is asked of the browser itself.
 */
async function launchBrowser(executablePath: string, extraArgs: string[], bounds: RendererBounds, sandbox: boolean): Promise<LaunchedBrowser> {
  let playwright: typeof import('playwright-core')
  try {
    playwright = await timed('engine: load playwright-core', () => import('playwright-core'))
  } catch {
    throw new Error('The Chromium engine needs playwright-core: `npm install -D playwright-core` (it drives your system Chrome/Chromium; it downloads nothing).')
  }
  // The browser's own connections (outside any job's context) have nowhere to go: what
  // Chromium still asks for by itself is refused here, never let out by the engine's policy.
  const ownProxy = await openClosedProxy()
  let browser: Browser | undefined
  let pid: number | undefined
  let watch: RendererWatch | undefined
  // Playwright starts the browser in a process group of its own: the group goes at once, renderers included.
  const kill = (): void => {
    if (pid === undefined) return void browser?.close().catch(() => {})
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
  }
  try {
    browser = await playwright.chromium.launch({
      executablePath,
      headless: true,
      args: [...chromiumFlags(), ...bounds.flags, ...EGRESS_FLAGS, ...extraArgs],
      ignoreDefaultArgs: IGNORED_DEFAULT_ARGS,
      chromiumSandbox: sandbox,
      proxy: { server: ownProxy.server, bypass: LOOPBACK_BYPASS },
      timeout: LAUNCH_TIMEOUT_MS,
      // Signals are the host's to handle. Playwright's own SIGTERM and SIGHUP handlers close the
      // browser and leave the process running: the engine took that for a crash and relaunched,
      // and a build sent SIGTERM went on to the end. Its `exit` handler stays: whatever ends the
      // process kills every browser it launched, one still starting included.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    })
    pid = await browserPid(browser)
    watch = await bounds.watch(pid)
    const stopWatching = watch
    const stop = (): void => stopWatching.stop()
    browser.on('disconnected', () => {
      stop()
      ownProxy.close()
    })
    await checkForcedThroughProxy(browser, ownProxy)
    const connected = browser
    return {
      browser: connected,
      dead: false,
      kill,
      stop,
      async close() {
        stop()
        let timer: NodeJS.Timeout | undefined
        const closed = await Promise.race([
          connected.close().then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), BROWSER_ANSWER_MS))),
        ])
        clearTimeout(timer)
        if (!closed) kill()
        ownProxy.close()
      },
    }
  } catch (error) {
    watch?.stop()
    kill()
    ownProxy.close()
    throw error
  }
}

/** The browser's own process ID, as the browser says it; undefined where it does not (its renderers are then not bounded by PID). */
async function browserPid(browser: Browser): Promise<number | undefined> {
  const session = await browser.newBrowserCDPSession()
  try {
    const { processInfo } = await session.send('SystemInfo.getProcessInfo')
    return processInfo.find((each) => each.type === 'browser')?.id
  } catch {
    return undefined
  } finally {
    void session.detach().catch(() => {})
  }
}
