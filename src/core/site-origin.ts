/**
 * A site that names its own files by absolute URL (Hugo's `absURL`, `https://example.org/css/main.css`)
 * links nothing the build server has: the render would fetch the deployed site, or nothing
 * at all, instead of this build. Embedded mode serves such URLs from the build: the pages
 * and stylesheets it serves name the build server where they named the site's origin.
 */

/** What follows an origin in a URL: a path, a query, a fragment, or the end of the attribute or `url()`. */
const AFTER_ORIGIN = String.raw`(?=[/?#"'\s)>\\]|$)`

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * `https://host`, `http://host` and `//host` (the default port written out or not) in
 * `text`, followed by what may follow an origin: `https://host.evil` or `https://hostname` are not it.
 */
function originPattern(site: URL): RegExp {
  const host = escapeRegExp(site.hostname)
  const port = site.port === '' ? String.raw`(?::(?:80|443))?` : `:${escapeRegExp(site.port)}`
  return new RegExp(String.raw`(?:https?:)?//${host}${port}${AFTER_ORIGIN}`, 'gi')
}

/** `text` (HTML or CSS) with the site's origin, however written, replaced by `local`'s. */
export function servedFromBuild(text: string, site: URL, local: URL): string {
  return text.replace(originPattern(site), local.origin)
}

/** Whether `url` is on the site's origin (either scheme): a file of this build, not another host's. */
export function onSiteOrigin(url: URL, site: URL | null): boolean {
  if (site === null) return false
  return url.hostname === site.hostname && url.port === site.port && (url.protocol === 'http:' || url.protocol === 'https:')
}
