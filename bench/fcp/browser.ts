/**
 * Page loads in the system Chromium, each in a fresh browser context (no cache, no
 * connection shared with another load), offline but for 127.0.0.1 (the resolver rules): first contentful paint
 * and the first script's mark, read from the page's own performance timeline (ms since
 * navigation start); and, on request, a screenshot of the first viewport once the load
 * event has fired and every stylesheet has been applied.
 */
import { chromium, type Browser } from 'playwright-core'
import { FIRST_SCRIPT_MARK } from './server.ts'

export const VIEWPORT = { width: 1300, height: 900 }
/** Every host but loopback fails to resolve, as in the quality bench. */
export const OFFLINE = '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1'
const NO_MOTION = '*,*::before,*::after{transition:none!important;animation:none!important}'
const SETTLE_MS = 300

export interface LoadResult {
  /** First contentful paint; null when there was none before the timeout. */
  fcp: number | null
  /** When the first script began to run; null when it did not (or the page has none). */
  script: number | null
  /** A PNG of the first viewport after the load event, when asked for. */
  shot?: Buffer
  /**
   * With the screenshot: when every stylesheet of the page as built was found applied (in
   * `document.styleSheets`, enabled, not `print`), ms since navigation start, polled every
   * 20 ms; null when they were not all applied within the wait.
   */
  applied?: number | null
}

export interface Loader {
  version: string
  /**
   * Loads `url` and waits for first paint and, when `expectScript`, the script's mark (at
   * most `timeoutMs`). With `shoot`, it then waits for the load event and for `sheets`
   * (root-relative paths of the stylesheets the page as built links) to be applied, then
   * the fonts and a settle, and takes the screenshot.
   */
  load(url: string, options: { expectScript: boolean; timeoutMs: number; shoot: boolean; sheets: string[] }): Promise<LoadResult>
  close(): Promise<void>
}

export async function createLoader(executablePath: string, args: string[]): Promise<Loader> {
  const browser: Browser = await chromium.launch({ executablePath, headless: true, args })
  return {
    version: browser.version(),
    async load(url, { expectScript, timeoutMs, shoot, sheets }) {
      const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 })
      try {
        // No request interception: it would hold every request for a round trip to this process.
        const page = await context.newPage()
        const read = (): Promise<{ fcp: number | null; script: number | null }> =>
          page.evaluate((mark) => {
            const fcp = performance.getEntriesByName('first-contentful-paint')[0]
            const script = performance.getEntriesByName(mark, 'mark')[0]
            return { fcp: fcp ? fcp.startTime : null, script: script ? script.startTime : null }
          }, FIRST_SCRIPT_MARK)
        await page.goto(url, { waitUntil: 'commit', timeout: timeoutMs })
        // Polled on animation frames: none run while render is blocked, so the polling costs the page nothing then.
        await page
          .waitForFunction(
            ({ mark, expectScript }) => performance.getEntriesByName('first-contentful-paint').length > 0 && (!expectScript || performance.getEntriesByName(mark, 'mark').length > 0),
            { mark: FIRST_SCRIPT_MARK, expectScript },
            { polling: 'raf', timeout: timeoutMs },
          )
          .catch(() => {})
        const result: LoadResult = await read()
        if (shoot) {
          await page.waitForLoadState('load', { timeout: timeoutMs })
          result.applied = await page
            .waitForFunction(
              (paths) => {
                const applied = Array.from(document.styleSheets).filter((sheet) => sheet.href && !sheet.disabled && sheet.media.mediaText !== 'print')
                const all = paths.every((path) => applied.some((sheet) => new URL(sheet.href!).pathname === path))
                return all ? performance.now() : null
              },
              sheets,
              { polling: 20, timeout: timeoutMs },
            )
            .then((handle) => handle.jsonValue() as Promise<number>)
            .catch(() => null)
          await page.addStyleTag({ content: NO_MOTION })
          await page.evaluate(async (settle) => {
            await document.fonts.ready
            await new Promise((done) => setTimeout(done, settle))
            await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))
          }, SETTLE_MS)
          result.shot = await page.screenshot({ animations: 'disabled', caret: 'hide', type: 'png' })
        }
        return result
      } finally {
        await context.close()
      }
    },
    close: () => browser.close(),
  }
}
