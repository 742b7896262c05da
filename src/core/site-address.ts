/**
 * Where a built folder is deployed, as its pages say it (`<link rel=canonical>`, `og:url`):
 * what lets embedded mode serve a theme's absolute stylesheet URLs from the folder when no
 * `--site-url` is given. Taken only when the pages agree and some page needs it.
 */
import type { SitePage } from './base-check.ts'
import { sheetUrls } from './build-sheets.ts'
import { pageFiles, pathBelow } from './pages.ts'
import { onSiteOrigin } from './site-origin.ts'

export type SiteAddress =
  /** The pages agree: `pages` of `of` say it. */
  | { kind: 'agreed'; siteUrl: URL; pages: number; of: number }
  /** Some page links its stylesheets on a host the pages do not agree on being theirs. */
  | { kind: 'unsure'; reason: string }
  /** Nothing to serve from the folder: no page links a stylesheet by absolute URL on its own address. */
  | { kind: 'none' }

/** The site's root as one page says it: its address less the page's own path in the folder. */
function rootOf(address: URL, file: string): string | null {
  const { pathname } = address
  for (let end = pathname.lastIndexOf('/'); end >= 0; end = pathname.lastIndexOf('/', end - 1)) {
    const root = pathname.slice(0, end + 1)
    const rest = pathBelow(pathname, root)
    if (rest !== null && pageFiles(rest).includes(file)) return `${address.origin}${root}`
    if (end === 0) break
  }
  return null
}

/** What the folder's pages say about where they are deployed, decided as the module says. */
export function siteAddress(pages: readonly Pick<SitePage, 'file' | 'hrefs' | 'declared'>[]): SiteAddress {
  const roots = new Map<string, number>()
  for (const { file, declared } of pages) {
    if (declared === null || !URL.canParse(declared)) continue
    const address = new URL(declared)
    if (address.protocol !== 'http:' && address.protocol !== 'https:') continue
    const root = rootOf(address, file)
    if (root !== null) roots.set(root, (roots.get(root) ?? 0) + 1)
  }
  const linksOn = (site: URL): boolean => pages.some(({ file, hrefs }) => sheetUrls(hrefs, `file:///${file}`).some((url) => onSiteOrigin(url, site)))
  const declared = [...roots.keys()].map((root) => new URL(root))
  if (declared.length === 1) {
    const siteUrl = declared[0]!
    const count = roots.get(siteUrl.href)!
    if (!linksOn(siteUrl)) return { kind: 'none' }
    if (count * 2 >= pages.length) return { kind: 'agreed', siteUrl, pages: count, of: pages.length }
    return { kind: 'unsure', reason: `only ${count} of ${pages.length} pages say they are at ${siteUrl.href}` }
  }
  if (declared.length > 1 && declared.some(linksOn)) {
    const shown = declared.slice(0, 3).map((url) => url.href).join(', ')
    return { kind: 'unsure', reason: `the pages say different addresses (${shown}${declared.length > 3 ? ', …' : ''})` }
  }
  return { kind: 'none' }
}
