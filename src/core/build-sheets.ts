/**
 * What a page's cache key holds of its stylesheets: each linked sheet by the hash of its
 * content when this build has it, by its path when the build lacks it, by its URL on another
 * origin. Embedded mode renders these very files; remote mode holds the deployed site's CSS
 * to them, so a build whose CSS changed never takes a result made for other CSS. The same
 * lookup tells embedded mode which sheets a page links that the build lacks (a wrong base).
 * Pages share their stylesheets, so each is read and hashed once per build.
 */
import { createHash } from 'node:crypto'
import { stylesheetHrefs } from '../html/scan.ts'
import type { FileFinder } from './build-server.ts'
import { onSiteOrigin } from './site-origin.ts'

export function contentHash(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('base64url')
}

/** `contentHash` of the text `write` gives in parts: the same hash as of the parts joined. */
export function contentHashOfParts(write: (part: (text: string) => void) => void): string {
  const hash = createHash('sha256')
  write((text) => hash.update(text))
  return hash.digest('base64url')
}

/** What this build has at a stylesheet URL on its own origin: the hash of the file's content, or the path it lacks (as linked, with its query). */
export type BuildSheet = { hash: string } | { missing: string }

/** A sheet's `BuildSheet`; null for a URL on another origin, which is not this build's to have. */
export type SheetLookup = (url: URL) => Promise<BuildSheet | null>

/**
 * Looks each stylesheet URL up once per build (`origin`: where this build's files are served;
 * `site`: where the site is deployed, whose URLs name the same files):
 * the cache key and the check for sheets the build lacks ask the same lookup.
 */
export function sheetLookup(find: FileFinder, origin: string, site: URL | null = null): SheetLookup {
  const known = new Map<string, Promise<BuildSheet | null>>()
  return (url) => {
    let sheet = known.get(url.href)
    if (sheet === undefined) {
      // The site's own absolute URLs are served from the build (site-origin.ts).
      sheet = url.origin === origin || onSiteOrigin(url, site) ? find(url.pathname).then((found) => (found ? { hash: contentHash(found.body) } : { missing: `${url.pathname}${url.search}` })) : Promise.resolve(null)
      known.set(url.href, sheet)
    }
    return sheet
  }
}

/** The hashes of the stylesheets a page links, in document order, from `lookup`. */
export function sheetHashes(lookup: SheetLookup): (html: string, pageUrl: string) => Promise<string[]> {
  // A sheet missing from the build is named by its path: the build server's port changes every build.
  const hashOf = async (url: URL): Promise<string> => {
    const sheet = await lookup(url)
    return sheet === null ? `url:${url.href}` : 'hash' in sheet ? sheet.hash : `missing:${sheet.missing}`
  }
  return (html, pageUrl) => Promise.all(linkedSheets(html, pageUrl).map(hashOf))
}

/** The hashes of the stylesheets a page links, in document order (`origin`: where this build's files are served). */
export function stylesheetHashes(find: FileFinder, origin: string): (html: string, pageUrl: string) => Promise<string[]> {
  return sheetHashes(sheetLookup(find, origin))
}

/** The stylesheets a page links, head then body, resolved from the page, in document order (an href that is no URL is left out). */
export function linkedSheets(html: string, pageUrl: string): URL[] {
  return sheetUrls(stylesheetHrefs(html), pageUrl)
}

/** Stylesheet hrefs as written, resolved from the page at `pageUrl` (an href that is no URL is left out). */
export function sheetUrls(hrefs: readonly string[], pageUrl: string): URL[] {
  return hrefs.flatMap((href) => (URL.canParse(href, pageUrl) ? [new URL(href, pageUrl)] : []))
}
