/**
 * A framework's route, as its pages' URLs match it: `/blog/[slug]` (Astro, SvelteKit),
 * `/docs/[...path]`, an optional `[[lang]]`, SvelteKit's `(group)` folders, Nuxt's
 * `/blog/:slug()`, `/:lang?` and `/:path(.*)*`. Matched against a URL's path, its trailing
 * slash aside.
 */

/** One segment's pattern, or null for a segment that is not in the URL (a SvelteKit group). */
function segmentPattern(segment: string): { pattern: string; optional: boolean } | null {
  if (/^\(.+\)$/.test(segment)) return null
  if (/^\[\[[^\]/]+\]\]$/.test(segment) || /^:[A-Za-z_]\w*(?:\(\))?\?$/.test(segment)) return { pattern: '[^/]+', optional: true }
  if (/^\[\.\.\.[^\]/]+\]$/.test(segment) || /^:[^/]+\(\.\*\)\*?$/.test(segment)) return { pattern: '.*', optional: true }
  // Brackets or a colon inside a segment name a part of it (`[id].json`, `post-[slug]`, `:id`).
  let pattern = ''
  for (const part of segment.split(/(\[[^\]/]+\]|:[A-Za-z_][\w]*(?:\(\))?)/)) {
    if (part === '') continue
    pattern += /^\[[^\]/]+\]$/.test(part) || /^:[A-Za-z_]/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  return { pattern, optional: false }
}

/** The RegExp a route's URLs match: their path, with or without the trailing slash. */
export function routePattern(route: string): RegExp {
  let source = ''
  for (const segment of route.split('/').filter((part) => part !== '')) {
    const match = segmentPattern(segment)
    if (match === null) continue
    source += match.optional ? `(?:/${match.pattern})?` : `/${match.pattern}`
  }
  return new RegExp(`^${source}/?$`)
}

/**
 * How specific a route is, for the order routes are tried in: a static segment before a
 * parameter, a parameter before an optional one or a rest (as the frameworks' routers rank them).
 */
export function routeRank(route: string): number[] {
  return route
    .split('/')
    .filter((part) => part !== '' && !/^\(.+\)$/.test(part))
    .map((segment) => (/^\[\[|^\[\.\.\.|\(\.\*\)|\?$/.test(segment) ? 3 : /\[|:/.test(segment) ? 2 : 1))
}
