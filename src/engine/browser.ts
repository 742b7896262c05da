/**
 * The engine's browser: a system Chrome/Chromium found on this machine (never a downloaded
 * one), launched with the engine's flags, pinged while it is in use, and killed and forgotten
 * when it stops answering, so that the next job launches another.
 */
import { existsSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { delimiter, join } from 'node:path'
import type { Duplex } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Browser, BrowserContext, CDPSession } from 'playwright-core'
import { timed } from '../shared/timings.ts'
import type { EgressGate } from './egress.ts'
import { EngineError } from './engine.ts'
import { createRendererBounds, type RendererBounds, type RendererWatch } from './renderers.ts'

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']
const INSTALL_PATHS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
]

export const INSTALL_HINT =
  'No Chrome or Chromium found. Install one (Debian/Ubuntu: `apt-get install -y chromium`; macOS: install Google Chrome) or set CHROME_PATH to its executable.'

/** `CHROME_PATH`, then the usual names on PATH, then the usual install paths; null when none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CHROME_PATH) return existsSync(env.CHROME_PATH) ? env.CHROME_PATH : null
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    for (const name of NAMES) {
      const candidate = join(dir, name)
      if (existsSync(candidate)) return candidate
    }
  }
  return INSTALL_PATHS.find((path) => existsSync(path)) ?? null
}

/**
 * The features playwright-core (1.65) turns off with its own `--disable-features`. Chromium
 * reads only the last `--disable-features` on its command line, and ours comes after
 * Playwright's, so ours must carry its list or undo it (`NetworkTimeServiceQuerying` back on
 * means a request to clients2.google.com at each start). test/integration/browser-walls.test.ts
 * fails when a Playwright upgrade adds one that is not here.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
]

/**
 * Features that send requests of the browser's own from a job's context, through the job's
 * gate, where they read as the page's: a page with a form has Chromium ask
 * content-autofill.googleapis.com what its fields are.
 */
const BACKGROUND_FEATURES = ['AutofillServerCommunication']

/**
 * Chromium keeps one renderer process started ahead of the next navigation, for one browser
 * context at a time: a navigation in another context throws it away and starts another. Jobs
 * run side by side in contexts of their own, so every navigation of one started a renderer
 * the next job's threw away: about one renderer start (and its CPU) per page. The pool opens
 * its own pages ahead of jobs (page-pool.ts).
 */
const SPARE_RENDERER_FEATURES = ['SpareRendererForSitePerProcess']

/**
 * Flags for a browser on a closed network: no traffic of its own, nothing to set up. Playwright
 * passes `--disable-background-networking`, `--disable-component-update`, `--disable-sync` and
 * `--disable-default-apps` too (they stay here for browsers launched without its defaults), and
 * `--disable-field-trial-config` (no variations seed), `--metrics-recording-only`,
 * `--disable-breakpad`, `--no-service-autorun`. Each flag below is one Chromium 156 still
 * knows; its old switches for safe browsing auto-update, client-side phishing detection and
 * translate, and the Debian wrapper's `--media-router`, are gone, and no safe-browsing,
 * translate, variations or sync request was seen at launch or on a page without them.
 */
const CLOSED_NETWORK_FLAGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--no-default-browser-check',
  '--hide-scrollbars',
  '--mute-audio',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...BACKGROUND_FEATURES, ...SPARE_RENDERER_FEATURES].join(',')}`,
  // Beacons about Google hosts' failures, sent from the context of the page that loaded them.
  '--disable-domain-reliability',
  // `--disable-component-update` leaves on-demand installs alone, and the on-device model
  // manifest (ceofaddefefcbblgcgnibnonglccbfja) is one, asked for from update.googleapis.com at
  // each start. An override with no file gives the model broker an empty local manifest: it
  // registers no component and asks for nothing.
  '--optimization-guide-manifest-override=',
]

/**
 * The engine's Chromium flags, for every browser that should render as it does (tests, the
 * quality bench). Chromium refuses to start as root with its sandbox; only then is it off.
 * (Playwright adds `--no-sandbox` itself unless launched with `chromiumSandbox: true`, as the
 * engine is when not root.)
 */
export function chromiumFlags(): string[] {
  return [...CLOSED_NETWORK_FLAGS, ...(isRoot() ? ['--no-sandbox'] : [])]
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

/**
 * The browser resolves no name (every context's gate does, within its bound) and sends no
 * UDP outside a proxy (WebRTC), so nothing reaches out beside the gate. Chromium 156 knows the
 * WebRTC switch by this name (it sets the `webrtc.ip_handling_policy` pref); without it a STUN
 * server on loopback gets UDP. WebRTC's TCP candidates follow the proxy and its bypass list,
 * so {@link LOOPBACK_BYPASS} holds them too.
 */
const EGRESS_FLAGS = ['--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1', '--webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-quic']

/**
 * The proxy bypass list of the browser and of every context: nothing, not even loopback
 * (Chromium bypasses its proxy for loopback unless told `<-loopback>`). Written out rather
 * than left to Playwright: playwright-core adds `<-loopback>` itself only while
 * PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK is unset, and with it set a page
 * reaches every loopback port directly. A bypass that already names loopback is passed to
 * Chromium as it is (`shouldProxyLoopback` in crBrowser.ts, and chromium.ts for the launch),
 * whatever the environment says; the check at launch ({@link checkForcedThroughProxy}) fails
 * the launch if a later Playwright or Chromium reads it otherwise.
 */
export const LOOPBACK_BYPASS = '<-loopback>'

/** The proxy a browser context of the engine is opened with: `server` and nothing bypassing it. */
export function contextProxy(server: string): { server: string; bypass: string } {
  return { server, bypass: LOOPBACK_BYPASS }
}

/**
 * Playwright launches Chromium with `--disable-ipc-flooding-protection` (for its own tests'
 * speed). Without Chromium's flooding protection a page that runs `history.pushState` or sets
 * `location.hash` in a loop floods the browser process and stalls every other context; with
 * it, such a page is throttled in its own renderer.
 */
const IGNORED_DEFAULT_ARGS = ['--disable-ipc-flooding-protection']

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
/** What makes playwright-core let loopback bypass every proxy it is not told otherwise about: named when it is the cause. */
const FORCED_LOOPBACK_ENV = 'PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK'

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

/**
 * The browser would not be held to its proxy: a context opened as jobs open them reached
 * loopback without it, or the check could not tell. A configuration fault, not a page's: no
 * job runs on such a browser, and the message says what to change.
 */
export class EgressWallBroken extends Error {
  override name = 'EgressWallBroken'
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

/** A proxy that lets nothing through, and can say when it is asked for a given `host:port`. */
interface ClosedProxy {
  readonly server: string
  /** Settles once a request or tunnel for `authority` arrives. */
  asked(authority: string): Promise<void>
  close(): void
}

/** Refuses every request, tunnel and upgrade (403), on 127.0.0.1 and a port of its own. */
async function openClosedProxy(): Promise<ClosedProxy> {
  const waiting = new Map<string, () => void>()
  const sockets = new Set<Socket>()
  const heard = (authority: string): void => {
    waiting.get(authority)?.()
    waiting.delete(authority)
  }
  const refuse = (socket: Duplex): void => void socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  const proxy: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (URL.canParse(req.url ?? '')) heard(new URL(req.url!).host)
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('The browser’s own connections are not let out.')
  })
  proxy.on('connect', (req: IncomingMessage, socket: Duplex) => {
    heard(req.url ?? '')
    socket.on('error', () => socket.destroy())
    refuse(socket)
  })
  proxy.on('upgrade', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy())
    refuse(socket)
  })
  proxy.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  proxy.on('clientError', (_error, socket) => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject)
    proxy.listen(0, '127.0.0.1', () => resolve())
  })
  return {
    server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    asked: (authority) => new Promise<void>((resolve) => waiting.set(authority, resolve)),
    close() {
      proxy.close()
      for (const socket of sockets) socket.destroy()
    },
  }
}

/** Longest the check at launch may wait for its request: a browser that just started, on a busy machine. */
const CHECK_TIMEOUT_MS = 10_000

/**
 * Whether a context opened as jobs open theirs ({@link contextProxy}) is held to its proxy: a
 * tab of it is opened on a canary at another loopback port. Held, the request reaches the
 * proxy and the canary never hears of it; not held (Playwright left `<-loopback>` out, as it
 * does under PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK, or Chromium reads the
 * bypass list otherwise), the canary gets the connection and the launch fails with
 * {@link EgressWallBroken}.
 *
 * Behavioural, not a look at the flags: a context's bypass list travels over CDP, where
 * nothing reads it back, and what counts is what Chromium does with it. It is kept cheap: the
 * tab is opened over CDP with the canary as its URL and the check ends as soon as the request
 * lands on one side (the browser sends it before the tab's renderer is up), rather than a
 * Playwright page, whose first renderer takes 150–250 ms to start (a check through one cost
 * 400 ms). Measured on 2 cores: the check alone about 100 ms; `ready()` 310 ms against 220 ms
 * without it, a build's first page (launch included) 690 ms against 530–570 ms (medians of 12).
 *
 * `proxy` is what the check's context is opened with: a test passes a leaky one to see it fail.
 */
export async function checkForcedThroughProxy(
  browser: Browser,
  closed: Pick<ClosedProxy, 'server' | 'asked'>,
  proxy: { server: string; bypass?: string } = contextProxy(closed.server),
): Promise<void> {
  let reached: () => void = () => {}
  const canaryReached = new Promise<'canary'>((resolve) => (reached = () => resolve('canary')))
  const canary = createServer((_req, res) => void res.writeHead(204, { connection: 'close' }).end())
  canary.on('connection', () => reached())
  await new Promise<void>((resolve, reject) => {
    canary.once('error', reject)
    canary.listen(0, '127.0.0.1', () => resolve())
  })
  const authority = `127.0.0.1:${(canary.address() as AddressInfo).port}`
  const proxied = closed.asked(authority).then(() => 'proxy' as const)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CHECK_TIMEOUT_MS)))
  let context: BrowserContext | undefined
  let session: CDPSession | undefined
  try {
    session = await browser.newBrowserCDPSession()
    const before = new Set((await session.send('Target.getBrowserContexts')).browserContextIds)
    context = await browser.newContext({ proxy, serviceWorkers: 'block' })
    const ours = (await session.send('Target.getBrowserContexts')).browserContextIds.filter((id) => !before.has(id))
    if (ours.length !== 1) throw new EgressWallBroken('The browser could not be checked for its egress gate: the context opened for the check could not be told apart from the others.')
    // Not awaited: the request goes out before the tab is ready, and the check is over then.
    const unopened = session.send('Target.createTarget', { url: `http://${authority}/`, browserContextId: ours[0]! }).then(
      () => new Promise<never>(() => {}),
      (error: unknown) => ({ unopened: error }),
    )
    const outcome = await Promise.race([proxied, canaryReached, late, unopened])
    if (typeof outcome === 'object') {
      throw new EgressWallBroken(`The browser could not be checked for its egress gate: its check tab did not open (${String(outcome.unopened).split('\n')[0]}).`)
    }
    if (outcome === 'canary') {
      const cause = process.env[FORCED_LOOPBACK_ENV]
        ? `${FORCED_LOOPBACK_ENV} is set in this process's environment, and with it playwright-core leaves loopback out of the proxy; unset it`
        : 'the proxy bypass list the context was given lets loopback bypass the proxy (has playwright-core changed how it passes `proxy.bypass`?)'
      throw new EgressWallBroken(
        `The browser is not held to its egress gate: a browser context, opened as the engine opens its jobs', reached ${authority} on loopback directly instead of through its proxy, so pages could reach any local service. ${cause}. The engine does not start like this.`,
      )
    }
    if (outcome === 'late') {
      throw new EgressWallBroken(
        `The browser could not be shown to go through its egress gate: within ${CHECK_TIMEOUT_MS / 1000} s a tab of a browser context, opened as the engine opens its jobs', reached neither its proxy nor ${authority}. The engine does not start like this.`,
      )
    }
  } finally {
    clearTimeout(timer)
    // In the background: the launch need not wait for the tab's renderer to start and go.
    void context?.close().catch(() => {})
    void session?.detach().catch(() => {})
    canary.closeAllConnections()
    canary.close()
  }
}
