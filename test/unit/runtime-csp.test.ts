/** The runtime's CSP header edit: the styles it put in a page are allowed where the policy would block them, and nothing else changes. */
import { describe, expect, it } from 'vitest'
import { policyNonce, withStyleHashes } from '../../src/runtime/csp.ts'

const HASH = 'sha256-AAAA'

describe('withStyleHashes', () => {
  it('adds the hashes to the directive that governs <style> elements: style-src-elem, else style-src, else default-src', () => {
    expect(withStyleHashes("script-src 'self'; style-src 'self' 'sha256-47DEQ='", [HASH])).toBe("script-src 'self'; style-src 'self' 'sha256-47DEQ=' 'sha256-AAAA'")
    expect(withStyleHashes("style-src 'self'; style-src-elem 'self'", [HASH])).toBe("style-src 'self'; style-src-elem 'self' 'sha256-AAAA'")
    expect(withStyleHashes("default-src 'self'", [HASH])).toBe("default-src 'self' 'sha256-AAAA'")
    expect(withStyleHashes("style-src 'nonce-abc'", [HASH, 'sha256-BBBB'])).toBe("style-src 'nonce-abc' 'sha256-AAAA' 'sha256-BBBB'")
    expect(withStyleHashes("style-src 'none'", [HASH])).toBe("style-src 'sha256-AAAA'")
  })

  it('leaves alone a policy that allows every inline style already, one with no directive for styles, and a hash it has', () => {
    for (const policy of ["style-src 'self' 'unsafe-inline'", "script-src 'self'", "style-src 'self' 'sha256-AAAA'", "default-src 'self'; style-src 'unsafe-inline'"]) {
      expect(withStyleHashes(policy, [HASH])).toBe(policy)
    }
    // 'unsafe-inline' beside a hash is ignored by browsers: the policy allows only what it names.
    expect(withStyleHashes("style-src 'unsafe-inline' 'sha256-CCCC'", [HASH])).toBe("style-src 'unsafe-inline' 'sha256-CCCC' 'sha256-AAAA'")
    expect(withStyleHashes("style-src 'self'", [])).toBe("style-src 'self'")
  })
})

describe('policyNonce', () => {
  it('is the nonce of the directive that governs styles, else scripts', () => {
    expect(policyNonce("script-src 'nonce-s1'; style-src 'self' 'nonce-st1'")).toBe('st1')
    expect(policyNonce("style-src-elem 'nonce-e1'; style-src 'nonce-st1'")).toBe('e1')
    expect(policyNonce("style-src 'self'; script-src 'strict-dynamic' 'nonce-s1'")).toBe('s1')
    expect(policyNonce("default-src 'self' 'NONCE-d1'")).toBe('d1')
  })

  it('is undefined where no directive names one, or the value is no nonce', () => {
    for (const policy of ["default-src 'self'", "style-src 'sha256-AAAA'", "style-src 'nonce-a\"b'", '']) expect(policyNonce(policy), policy).toBeUndefined()
  })
})
