/**
 * Remote mode renders the deployed site, which may run another release than this build.
 * Before a page's critical CSS is inlined, the stylesheets the deployed page links on its own
 * origin are fetched and held against the ones the same page links in this build; when they
 * differ, only this build's rules are kept (own-css.ts). Each URL is fetched once per build.
 */
import { buildFileFinder, type BuildOutput } from '../build-server.ts'
import { linkedSheets } from '../build-sheets.ts'
import { describeError } from '../errors.ts'
import type { OptionWords } from '../options.ts'
import { keepOwnRules, type OwnSheet } from '../own-css.ts'

/** A deployed page or stylesheet that takes longer is not waited for: the page is inlined as the service found it, and the build says so. */
const FETCH_TIMEOUT_MS = 10_000
const UTF8 = new TextDecoder('utf-8')

/** The site answered, without the page or sheet asked for. */
class PageMissing extends Error {}

export type DeployedCheck =
  /** The deployed page's own stylesheets hold the critical CSS's rules as this build does: the CSS as it came. */
  | { kind: 'same'; css: string }
  /** Some of its rules are not this build's: the CSS with only this build's rules. */
  | { kind: 'other'; css: string; dropped: number; replaced: number }
  /** The deployed page or one of its stylesheets could not be read: the CSS as it came, and why. */
  | { kind: 'unchecked'; css: string; reason: string }

/** Holds a page's critical CSS to this build's stylesheets (`html`: the page as this build emitted it). */
export type CheckAgainstBuild = (pageUrl: string, html: string, css: string) => Promise<DeployedCheck>

/** The stylesheet URLs a page links on its own origin, in document order. */
function ownSheetUrls(html: string, pageUrl: string): URL[] {
  const { origin } = new URL(pageUrl)
  return linkedSheets(html, pageUrl).filter((url) => url.origin === origin)
}

export function deployedSheetsCheck(output: BuildOutput, base: string): CheckAgainstBuild {
  const find = buildFileFinder(output, base)
  const fetched = new Map<string, Promise<string>>()
  const fetchText = (url: string): Promise<string> => {
    let text = fetched.get(url)
    if (text === undefined) {
      text = fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: url.endsWith('.css') ? 'text/css,*/*;q=0.1' : 'text/html,*/*;q=0.1' } }).then(async (response) => {
        if (!response.ok) throw new PageMissing(`${url} answered ${response.status}`)
        return response.text()
      })
      fetched.set(url, text)
    }
    return text
  }
  // A site the build machine cannot reach (behind a VPN, silent) is tried once per build, not once per page.
  const unreachable = new Map<string, string>()
  return async (pageUrl, html, css) => {
    const { origin } = new URL(pageUrl)
    const known = unreachable.get(origin)
    if (known !== undefined) return { kind: 'unchecked', css, reason: known }
    let deployed: OwnSheet[]
    try {
      const deployedHtml = await fetchText(pageUrl)
      deployed = await Promise.all(ownSheetUrls(deployedHtml, pageUrl).map(async (url) => ({ text: await fetchText(url.href), url: url.href })))
    } catch (error) {
      const reason = describeError(error)
      // A page the site does not have is that page's; a site that does not answer is every page's.
      if (!(error instanceof PageMissing)) unreachable.set(origin, reason)
      return { kind: 'unchecked', css, reason }
    }
    const build: OwnSheet[] = []
    for (const url of ownSheetUrls(html, pageUrl)) {
      const found = await find(url.pathname)
      // A sheet the build does not have is the deployed site's to serve: nothing of this build to hold it to.
      if (found !== null) build.push({ text: typeof found.body === 'string' ? found.body : UTF8.decode(found.body), url: url.href })
    }
    if (deployed.length === build.length && deployed.every((sheet, i) => sheet.text === build[i]!.text)) return { kind: 'same', css }
    // Sheets that differ only in what the critical CSS does not hold (formatting, rules below the fold) leave it this build's.
    const own = keepOwnRules(css, { deployed, build, pageUrl })
    return own.dropped + own.replaced === 0 ? { kind: 'same', css } : { kind: 'other', ...own }
  }
}

/** A page of this build that the deployed site serves other stylesheets for. */
export interface OtherRelease {
  name: string
  dropped: number
  replaced: number
}

/** Said once for every such page of the build (and the `strict` error's reason). */
export function otherReleaseMessage(siteUrl: URL | null, pages: readonly OtherRelease[], words: OptionWords): string {
  const sum = (field: 'dropped' | 'replaced'): number => pages.reduce((total, page) => total + page[field], 0)
  const names = pages.map((page) => page.name)
  const listed = names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ')
  const site = siteUrl ? `the deployed site at ${siteUrl.href}` : 'the deployed site'
  const one = pages.length === 1
  return `critical CSS: ${site} serves other stylesheets than this build (${one ? 'page' : `${pages.length} pages`} ${listed}). Remote mode renders the site where it is deployed, so ${one ? 'its' : 'their'} critical CSS keeps only this build's rules: ${sum('dropped')} dropped, ${sum('replaced')} given this build's declarations; deploy first, or use embedded mode (no ${words.name('baseUrl')}).`
}
