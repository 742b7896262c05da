/**
 * Which engine renders: `chromium` (the first browser found that starts), `static` (no
 * browser), or `auto` (Chromium when a browser is found and starts, else static). A browser
 * that is found but does not start (a missing library, a broken install) is noted with why, and
 * the next one is tried: a host with no working browser builds with the static engine under
 * `auto`, and fails with what was tried under `chromium`.
 */
import type { ChromiumEngine, ChromiumEngineOptions } from './chromium.ts'
import type { EngineChoice, EngineName } from '../shared/engines.ts'
import type { Engine } from './engine.ts'
import { ChromePathMissing, INSTALL_HINT, candidateName, findBrowsers, type BrowserCandidate, type Env } from './find-browsers.ts'
import type { StaticEngineOptions } from './static/static.ts'

/** A browser that was found and did not start, and the line that says why. */
export interface BrowserFailure {
  browser: string
  reason: string
}

export interface StartedEngine {
  engine: Engine & { close(): Promise<void> }
  name: EngineName
  /** The browser it renders in (`Chromium 156.0.8078.114`, its path and where it was found); null for the static engine. */
  browser: { version: string; executablePath: string; source: string } | null
  /** Browsers found that did not start, in the order tried. */
  failed: BrowserFailure[]
  /** `auto` found no browser that starts: the static engine renders instead. */
  fellBack: boolean
}

export interface StartEngineOptions {
  /** The Chromium engine's options but its executable and flags, which the browser found decides. */
  chromium?: Omit<ChromiumEngineOptions, 'executablePath' | 'browserArgs'>
  static?: StaticEngineOptions
  /** Where browsers are looked for (`CHROME_PATH`, PATH, caches). Default: `process.env`. */
  env?: Env
  /** The project: `@sparticuz/chromium` and playwright-core are looked for from it. Default: the working directory. */
  root?: string
}

/** Longest line of a launch's failure kept: Playwright's are pages of logs. */
const MAX_REASON = 200
/** What the browser itself wrote to stderr, in Playwright's launch log: `[pid=26623][err] …`. */
const BROWSER_STDERR = /\[pid=\d+\]\[err\]\s*(.+)/
/** How the browser's process ended, in that log. */
const EXIT = /process did exit: exitCode=(\w+), signal=(\w+)/
const ANSI = /\u001b\[\d+m/g

/** The engine `choice` names, started; throws what `chromium` could not start, and a `CHROME_PATH` that names nothing. */
export async function startEngine(choice: EngineChoice, options: StartEngineOptions = {}): Promise<StartedEngine> {
  if (choice === 'static') return { engine: await staticEngine(options), name: 'static', browser: null, failed: [], fellBack: false }
  let candidates: BrowserCandidate[]
  try {
    candidates = await findBrowsers(options.env ?? process.env, options.root ?? process.cwd())
  } catch (error) {
    if (error instanceof ChromePathMissing) throw new Error(`${error.message} ${INSTALL_HINT}`)
    throw error
  }
  const failed: BrowserFailure[] = []
  const { createChromiumEngine } = await import('./chromium.ts')
  for (const candidate of candidates) {
    let engine: ChromiumEngine | null = null
    let executablePath: string | undefined
    try {
      const resolved = await candidate.resolve()
      executablePath = resolved.executablePath
      engine = createChromiumEngine({ ...options.chromium, executablePath, browserArgs: resolved.args })
      const { version } = await engine.ready()
      return { engine, name: 'chromium', browser: { version, executablePath, source: candidate.source }, failed, fellBack: false }
    } catch (error) {
      await engine?.close().catch(() => {})
      // playwright-core missing is not this browser's fault: no other would start either.
      if (error instanceof Error && /needs playwright-core/.test(error.message)) {
        if (choice === 'chromium') throw error
        failed.push({ browser: 'every browser', reason: error.message })
        break
      }
      failed.push({ browser: candidateName(candidate, executablePath), reason: launchReason(error) })
    }
  }
  if (choice === 'chromium') throw new Error(noBrowserMessage(failed))
  return { engine: await staticEngine(options), name: 'static', browser: null, failed, fellBack: true }
}

async function staticEngine(options: StartEngineOptions): Promise<Engine & { close(): Promise<void> }> {
  const { createStaticEngine } = await import('./static/static.ts')
  return createStaticEngine(options.static)
}

/** Why no Chromium renders: none found, or those found and why each did not start. */
export function noBrowserMessage(failed: readonly BrowserFailure[]): string {
  if (failed.length === 0) return INSTALL_HINT
  return `No Chrome or Chromium found starts: ${failed.map((failure) => `${failure.browser}: ${failure.reason}`).join('; ')}. ${INSTALL_HINT}`
}

/** The line of a launch failure that says why (what the browser wrote, else how it ended), not Playwright's whole log. */
export function launchReason(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).replace(ANSI, '')
  const said = BROWSER_STDERR.exec(text)?.[1]?.trim()
  const ended = EXIT.exec(text)
  const reason = said ?? (ended ? `it exited (code ${ended[1]}, signal ${ended[2]})` : (text.split('\n')[0]?.trim() || 'it did not start'))
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason
}
