/**
 * The browsers a machine already has, in the order the engine tries them: `CHROME_PATH`;
 * Chrome/Chromium on PATH; the Chromium Playwright installed for the playwright-core the
 * engine drives (`PLAYWRIGHT_BROWSERS_PATH` honoured), then other revisions in its cache;
 * Puppeteer's cache (`PUPPETEER_CACHE_DIR`, `~/.cache/puppeteer`); `@sparticuz/chromium` when
 * the project can import it; the usual install paths. Nothing is downloaded: each is a file
 * that is there (`@sparticuz/chromium` unpacks the one its package ships).
 */
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir, platform, arch } from 'node:os'
import { delimiter, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** A browser that may render the engine's pages, with where it was found. */
export interface BrowserCandidate {
  /** Where it was found, as messages say it: `CHROME_PATH`, `PATH`, `Playwright's cache`, … */
  source: string
  /** Its executable, when known without work (everything but `@sparticuz/chromium`, which unpacks it first). */
  path: string | null
  /** The executable, and the flags it needs to start here. */
  resolve(): Promise<{ executablePath: string; args: string[] }>
}

export type Env = Readonly<Record<string, string | undefined>>

/** A `CHROME_PATH` that names nothing: the user said which browser, so no other is tried. */
export class ChromePathMissing extends Error {
  override name = 'ChromePathMissing'
  constructor(readonly path: string) {
    super(`CHROME_PATH is set to ${path}, which does not exist.`)
  }
}

export const INSTALL_HINT =
  'No Chrome or Chromium found. Install one (Debian/Ubuntu: `apt-get install -y chromium`; macOS: install Google Chrome; Linux x64 without a package manager: `npm i -D @sparticuz/chromium`) or set CHROME_PATH to its executable.'

const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'google-chrome-beta', 'google-chrome-unstable', 'chrome']
/** Flags `@sparticuz/chromium`'s headless shell needs beside the engine's own: it ships without a zygote helper or sandbox. */
const SPARTICUZ_ARGS = new Set(['--no-zygote', '--no-sandbox'])

function installPaths(env: Env): string[] {
  const home = env.HOME ?? homedir()
  const mac = ['Google Chrome.app/Contents/MacOS/Google Chrome', 'Chromium.app/Contents/MacOS/Chromium', 'Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing']
  const windowsRoots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)'], 'C:\\Program Files', 'C:\\Program Files (x86)'].filter((root): root is string => Boolean(root))
  return [
    '/opt/google/chrome/chrome',
    ...mac.flatMap((app) => [`/Applications/${app}`, ...(home ? [join(home, 'Applications', app)] : [])]),
    ...windowsRoots.flatMap((root) => [`${root}\\Google\\Chrome\\Application\\chrome.exe`, `${root}\\Chromium\\Application\\chrome.exe`]),
  ]
}

/** The first system browser: `CHROME_PATH` (when it exists), else one on PATH, else one at its install path; null when none. */
export function findChromium(env: Env = process.env): string | null {
  if (env.CHROME_PATH) return existsSync(env.CHROME_PATH) ? env.CHROME_PATH : null
  return [...onPath(env), ...installPaths(env).filter(isFile)][0] ?? null
}

function onPath(env: Env): string[] {
  return (env.PATH ?? '').split(delimiter).flatMap((dir) => (dir ? PATH_NAMES.map((name) => join(dir, name)).filter(isFile) : []))
}

/**
 * Every browser found, in the order to try them. `root`: the project, where
 * `@sparticuz/chromium` and playwright-core are looked for. Throws {@link ChromePathMissing}
 * for a `CHROME_PATH` that names nothing.
 */
export async function findBrowsers(env: Env = process.env, root: string = process.cwd()): Promise<BrowserCandidate[]> {
  if (env.CHROME_PATH) {
    if (!existsSync(env.CHROME_PATH)) throw new ChromePathMissing(env.CHROME_PATH)
    return [fixed('CHROME_PATH', env.CHROME_PATH)]
  }
  const found = onPath(env).map((path) => fixed('PATH', path))
  for (const path of await playwrightBrowsers(root)) found.push(fixed('Playwright’s cache', path))
  for (const path of puppeteerBrowsers(env)) found.push(fixed('Puppeteer’s cache', path))
  const sparticuz = sparticuzBrowser(root)
  if (sparticuz) found.push(sparticuz)
  for (const path of installPaths(env)) if (isFile(path)) found.push(fixed('its install path', path))
  return unique(found)
}

/**
 * Whether any browser is found, asking the cheap places first (playwright-core is loaded only
 * when none of them has one): what a build expects to render with before anything starts.
 * A `CHROME_PATH` counts, found or not: it names the browser the user wants.
 */
export async function anyBrowser(env: Env = process.env, root: string = process.cwd()): Promise<boolean> {
  if (env.CHROME_PATH) return true
  if (onPath(env).length > 0 || installPaths(env).some(isFile) || puppeteerBrowsers(env).length > 0 || sparticuzBrowser(root) !== null) return true
  return (await playwrightBrowsers(root)).length > 0
}

function fixed(source: string, path: string): BrowserCandidate {
  return { source, path, resolve: async () => ({ executablePath: path, args: [] }) }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** One entry per executable, the first kept: `/usr/bin/chromium` on PATH twice, or linked to itself. */
function unique(candidates: BrowserCandidate[]): BrowserCandidate[] {
  const seen = new Set<string>()
  return candidates.filter((candidate) => {
    if (candidate.path === null) return true
    let real = candidate.path
    try {
      real = realpathSync(candidate.path)
    } catch {
      // A path that cannot be resolved stands for itself.
    }
    if (seen.has(real)) return false
    seen.add(real)
    return true
  })
}

/** Where Playwright keeps browsers for `platform()`'s builds: each revision's executable below its folder. */
const PLAYWRIGHT_EXECUTABLES: Record<string, { chromium: string[]; shell: string[] }> = {
  'linux-x64': { chromium: ['chrome-linux64', 'chrome'], shell: ['chrome-headless-shell-linux64', 'chrome-headless-shell'] },
  'linux-arm64': { chromium: ['chrome-linux-arm64', 'chrome'], shell: ['chrome-headless-shell-linux-arm64', 'chrome-headless-shell'] },
  'darwin-x64': { chromium: ['chrome-mac-x64', 'Google Chrome for Testing.app', 'Contents', 'MacOS', 'Google Chrome for Testing'], shell: ['chrome-headless-shell-mac-x64', 'chrome-headless-shell'] },
  'darwin-arm64': { chromium: ['chrome-mac-arm64', 'Google Chrome for Testing.app', 'Contents', 'MacOS', 'Google Chrome for Testing'], shell: ['chrome-headless-shell-mac-arm64', 'chrome-headless-shell'] },
  'win32-x64': { chromium: ['chrome-win64', 'chrome.exe'], shell: ['chrome-headless-shell-win64', 'chrome-headless-shell.exe'] },
}
/** Older revisions' folders (before Chrome for Testing builds). */
const PLAYWRIGHT_OLD_EXECUTABLES = { chromium: ['chrome-linux', 'chrome'], shell: ['chrome-linux', 'headless_shell'] }
const PLAYWRIGHT_FOLDER = /^(chromium|chromium_headless_shell)-(\d+)$/

/**
 * The Chromium Playwright installed for the playwright-core the engine drives (its public
 * `chromium.executablePath()` names the folder; the headless shell of the same revision sits
 * beside it), then every other revision in that folder, newest first.
 */
async function playwrightBrowsers(root: string): Promise<string[]> {
  const expected = await playwrightChromium(root)
  if (expected === null) return []
  const folder = expected.split(/[\\/]/).findLast((part) => PLAYWRIGHT_FOLDER.test(part))
  if (folder === undefined) return existsSync(expected) ? [expected] : []
  const registry = expected.slice(0, expected.lastIndexOf(folder) - 1)
  const revision = Number(PLAYWRIGHT_FOLDER.exec(folder)![2])
  const layout = PLAYWRIGHT_EXECUTABLES[`${platform()}-${arch()}`]
  let folders: { name: string; kind: 'chromium' | 'shell'; revision: number }[] = []
  try {
    folders = readdirSync(registry).flatMap((name) => {
      const match = PLAYWRIGHT_FOLDER.exec(name)
      return match ? [{ name, kind: match[1] === 'chromium' ? ('chromium' as const) : ('shell' as const), revision: Number(match[2]) }] : []
    })
  } catch {
    return []
  }
  // The revision this playwright-core was made for first, its full Chromium before its headless shell; then the others, newest first.
  folders.sort((a, b) => Number(b.revision === revision) - Number(a.revision === revision) || b.revision - a.revision || (a.kind === 'chromium' ? -1 : 1))
  return folders.flatMap(({ name, kind }) =>
    [layout?.[kind], PLAYWRIGHT_OLD_EXECUTABLES[kind]].flatMap((parts) => {
      if (!parts) return []
      const path = join(registry, name, ...parts)
      return isFile(path) ? [path] : []
    }),
  )
}

/** What the project's playwright-core (else ours) says its Chromium's path is; null when it cannot be loaded. */
async function playwrightChromium(root: string): Promise<string | null> {
  for (const from of [join(root, 'package.json'), import.meta.url]) {
    try {
      const resolved = createRequire(from).resolve('playwright-core')
      const playwright = (await import(pathToFileURL(resolved).href)) as { chromium?: { executablePath(): string }; default?: { chromium?: { executablePath(): string } } }
      const chromium = playwright.chromium ?? playwright.default?.chromium
      if (chromium) return chromium.executablePath()
    } catch {
      // Not installed there, or no path for this platform.
    }
  }
  return null
}

/** Puppeteer's platform folders, and where each build keeps its executable below its folder. */
const PUPPETEER_PLATFORMS: Record<string, { prefix: string; chrome: string[]; shell: string[] }> = {
  'linux-x64': { prefix: 'linux', chrome: ['chrome-linux64', 'chrome'], shell: ['chrome-headless-shell-linux64', 'chrome-headless-shell'] },
  'linux-arm64': { prefix: 'linux_arm', chrome: ['chrome-linux-arm64', 'chrome'], shell: ['chrome-headless-shell-linux-arm64', 'chrome-headless-shell'] },
  'darwin-x64': { prefix: 'mac', chrome: ['chrome-mac-x64', 'Google Chrome for Testing.app', 'Contents', 'MacOS', 'Google Chrome for Testing'], shell: ['chrome-headless-shell-mac-x64', 'chrome-headless-shell'] },
  'darwin-arm64': { prefix: 'mac_arm', chrome: ['chrome-mac-arm64', 'Google Chrome for Testing.app', 'Contents', 'MacOS', 'Google Chrome for Testing'], shell: ['chrome-headless-shell-mac-arm64', 'chrome-headless-shell'] },
  'win32-x64': { prefix: 'win64', chrome: ['chrome-win64', 'chrome.exe'], shell: ['chrome-headless-shell-win64', 'chrome-headless-shell.exe'] },
}

/** Chrome and its headless shell in Puppeteer's cache, newest build first. */
function puppeteerBrowsers(env: Env): string[] {
  const home = env.HOME ?? homedir()
  const cache = env.PUPPETEER_CACHE_DIR || (home ? join(home, '.cache', 'puppeteer') : null)
  const layout = PUPPETEER_PLATFORMS[`${platform()}-${arch()}`]
  if (!cache || !layout) return []
  const builds: { path: string; version: number[] }[] = []
  for (const [browser, parts] of [['chrome', layout.chrome], ['chrome-headless-shell', layout.shell]] as const) {
    let names: string[] = []
    try {
      names = readdirSync(join(cache, browser))
    } catch {
      continue
    }
    for (const name of names) {
      if (!name.startsWith(`${layout.prefix}-`)) continue
      const build = name.slice(layout.prefix.length + 1)
      const path = join(cache, browser, name, ...parts)
      if (isFile(path)) builds.push({ path, version: build.split('.').map(Number) })
    }
  }
  return builds.sort((a, b) => compareVersions(b.version, a.version)).map((build) => build.path)
}

function compareVersions(a: number[], b: number[]): number {
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0)
    if (difference !== 0) return difference
  }
  return 0
}

/** `@sparticuz/chromium`, when the project depends on it: it unpacks the Chromium its package ships (into the temp folder, once per machine). */
function sparticuzBrowser(root: string): BrowserCandidate | null {
  let entry: string
  try {
    entry = createRequire(join(root, 'package.json')).resolve('@sparticuz/chromium')
  } catch {
    return null
  }
  return {
    source: '@sparticuz/chromium',
    path: null,
    async resolve() {
      const module = (await import(pathToFileURL(entry).href)) as { default: { executablePath(): Promise<string>; args: string[] } }
      const chromium = module.default
      const executablePath = await chromium.executablePath()
      return { executablePath, args: chromium.args.filter((arg) => SPARTICUZ_ARGS.has(arg)) }
    },
  }
}

/** How messages name a candidate: `/usr/bin/chromium (PATH)`. */
export function candidateName(candidate: BrowserCandidate, executablePath?: string): string {
  const path = executablePath ?? candidate.path
  return path === null ? candidate.source : `${path} (${candidate.source})`
}

