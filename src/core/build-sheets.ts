/**
 * What a page's cache key holds of its stylesheets: each linked sheet by the hash of its
 * content when this build has it, by its URL otherwise. Embedded mode renders these very
 * files; remote mode holds the deployed site's CSS to them, so a build whose CSS changed
 * never takes a result made for other CSS. Pages share their stylesheets, so each is read
 * and hashed once per build.
 */
import { createHash } from 'node:crypto'
import { stylesheetHrefs } from '../html/scan.ts'
import type { FileFinder } from './build-server.ts'

export function contentHash(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('base64url')
}

/** The hashes of the stylesheets a page links, in document order (`origin`: where this build's files are served). */
export function stylesheetHashes(find: FileFinder, origin: string): (html: string, pageUrl: string) => Promise<string[]> {
  const hashes = new Map<string, Promise<string>>()
  const hashOf = (url: URL): Promise<string> => {
    let hash = hashes.get(url.href)
    if (hash === undefined) {
      // A sheet missing from the build is named by its path: the build server's port changes every build.
      hash = url.origin === origin ? find(url.pathname).then((found) => (found ? contentHash(found.body) : `missing:${url.pathname}${url.search}`)) : Promise.resolve(`url:${url.href}`)
      hashes.set(url.href, hash)
    }
    return hash
  }
  return (html, pageUrl) => Promise.all(linkedSheets(html, pageUrl).map(hashOf))
}

/** The stylesheets a page's head links, resolved from the page, in document order (an href that is no URL is left out). */
export function linkedSheets(html: string, pageUrl: string): URL[] {
  return stylesheetHrefs(html).flatMap((href) => (URL.canParse(href, pageUrl) ? [new URL(href, pageUrl)] : []))
}
