/**
 * The flags the engine's Chromium starts with, and the proxy settings every context gets: a
 * browser on a closed network whose only way out is the egress gate. Tests and benches that
 * must render as the engine does start their browsers with {@link chromiumFlags}.
 */

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
 * Chromium 156 preloads its omnibox popup, a WebUI page in a renderer of its own
 * (`--top-chrome-webui`), for every browser context: a second renderer per job's context, and
 * most of the 0.2–0.9 s a new context took. A headless browser shows no omnibox. All three
 * switches are needed; with any one left on, the popup is still preloaded.
 */
const OMNIBOX_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxFullPopup', 'WebUIOmniboxAimPopup']

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
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...BACKGROUND_FEATURES, ...SPARE_RENDERER_FEATURES, ...OMNIBOX_FEATURES].join(',')}`,
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

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

/**
 * The browser resolves no name (every context's gate does, within its bound) and sends no
 * UDP outside a proxy (WebRTC), so nothing reaches out beside the gate. Chromium 156 knows the
 * WebRTC switch by this name (it sets the `webrtc.ip_handling_policy` pref); without it a STUN
 * server on loopback gets UDP. WebRTC's TCP candidates follow the proxy and its bypass list,
 * so {@link LOOPBACK_BYPASS} holds them too.
 */
export const EGRESS_FLAGS = ['--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1', '--webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-quic']

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
export const IGNORED_DEFAULT_ARGS = ['--disable-ipc-flooding-protection']
