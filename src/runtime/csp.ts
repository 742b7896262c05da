/**
 * A page's Content-Security-Policy header with the hashes of the styles the runtime put in
 * it, where the policy would block them: the directive that governs `<style>` elements
 * (`style-src-elem`, else `style-src`, else `default-src`) gets them unless it allows every
 * inline style already (`'unsafe-inline'` with no hash or nonce, which a hash would revoke).
 */
const QUOTED = /^'(?:sha(?:256|384|512)-|nonce-)/i

export function withStyleHashes(policy: string, hashes: readonly string[]): string {
  if (hashes.length === 0) return policy
  const directives = policy.split(';')
  const names = directives.map((directive) => directive.trim().split(/\s+/)[0]?.toLowerCase() ?? '')
  const index = ['style-src-elem', 'style-src', 'default-src'].map((name) => names.indexOf(name)).find((found) => found !== -1)
  if (index === undefined) return policy
  const sources = directives[index]!.trim().split(/\s+/).slice(1)
  const lowered = sources.map((source) => source.toLowerCase())
  if (lowered.includes("'none'") && sources.length > 1) return policy
  if (lowered.includes("'unsafe-inline'") && !sources.some((source) => QUOTED.test(source))) return policy
  const added = hashes.map((hash) => `'${hash}'`).filter((hash) => !sources.includes(hash))
  if (added.length === 0) return policy
  const kept = lowered.includes("'none'") ? [] : sources
  directives[index] = ` ${[names[index], ...kept, ...added].join(' ')}`
  return directives.join(';').replace(/^ /, '')
}
