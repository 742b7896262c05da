/**
 * What the runtime reads and writes of a page's Content-Security-Policy header: the nonce the
 * server gave this response (its own tags carry it), for the tags the runtime adds; and the
 * hashes of the styles it put in, where the policy would block them: the directive that
 * governs `<style>` elements (`style-src-elem`, else `style-src`, else `default-src`) gets
 * them unless it allows every inline style already (`'unsafe-inline'` with no hash or nonce,
 * which a hash would revoke).
 */
import { NONCE_PATTERN } from '../html/nonce.ts'

const QUOTED = /^'(?:sha(?:256|384|512)-|nonce-)/i
const NONCE_SOURCE = /^'nonce-([^']+)'$/i
const STYLE_DIRECTIVES = ['style-src-elem', 'style-src', 'default-src']
const SCRIPT_DIRECTIVES = ['script-src-elem', 'script-src', 'default-src']

/** Each directive's name (lower case) and its sources. */
function directivesOf(policy: string): { names: string[]; directives: string[] } {
  const directives = policy.split(';')
  return { directives, names: directives.map((directive) => directive.trim().split(/\s+/)[0]?.toLowerCase() ?? '') }
}

/** The first of `order` that the policy has (the one a browser applies), or undefined. */
function governing(names: readonly string[], order: readonly string[]): number | undefined {
  return order.map((name) => names.indexOf(name)).find((found) => found !== -1)
}

/**
 * The nonce the policy allows styles by, else scripts by (frameworks give one nonce to both),
 * or undefined: where a policy names one, the `<style>`, links and loader script the runtime
 * adds must carry it (under `'strict-dynamic'` a script without it never runs).
 */
export function policyNonce(policy: string): string | undefined {
  const { names, directives } = directivesOf(policy)
  for (const order of [STYLE_DIRECTIVES, SCRIPT_DIRECTIVES]) {
    const index = governing(names, order)
    if (index === undefined) continue
    const nonce = directives[index]!.trim().split(/\s+/).slice(1).map((source) => NONCE_SOURCE.exec(source)?.[1]).find((value) => value !== undefined)
    if (nonce !== undefined && NONCE_PATTERN.test(nonce)) return nonce
  }
  return undefined
}

export function withStyleHashes(policy: string, hashes: readonly string[]): string {
  if (hashes.length === 0) return policy
  const { names, directives } = directivesOf(policy)
  const index = governing(names, STYLE_DIRECTIVES)
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
