import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bearerToken, createToken, hashToken, sameHash } from '../../src/service/auth.ts'
import { SlidingWindows, quotaPeriod, quotaResetsAt } from '../../src/service/limits.ts'

describe('sliding window', () => {
  it('counts exactly the limit per window, then refuses with the headers the contract names', () => {
    const windows = new SlidingWindows(60_000)
    const decisions = [0, 1000, 2000, 3000, 4000].map((at) => windows.take('t', 5, at))
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0])
    expect(decisions[4]!.resetSeconds).toBe(56)
    const refused = windows.take('t', 5, 10_000)
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 50 })
    expect(windows.take('other', 5, 10_000).allowed).toBe(true)
  })

  it('a refused request is not counted, and no limit keeps nothing', () => {
    const windows = new SlidingWindows(1000)
    windows.take('t', 1, 0)
    for (let at = 1; at < 1000; at += 100) expect(windows.take('t', 1, at).allowed).toBe(false)
    expect(windows.take('t', 1, 1000).allowed).toBe(true)
    expect(windows.take('t', null, 0)).toEqual({ allowed: true, remaining: null, resetSeconds: null, retryAfterSeconds: null })
  })

  it('Retry-After is true: a request at that moment is accepted, one a second earlier is not (when ≥ 2 s)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 40 }),
        (limit, gaps) => {
          const windows = new SlidingWindows(10_000)
          let now = 0
          for (const gap of gaps) {
            now += gap
            const decision = windows.take('t', limit, now)
            if (decision.allowed) continue
            const retry = decision.retryAfterSeconds!
            expect(retry).toBeGreaterThanOrEqual(1)
            if (retry >= 2) expect(windows.peek('t', limit, now + (retry - 1) * 1000 - 1).remaining).toBe(0)
            expect(windows.peek('t', limit, now + retry * 1000).remaining).toBeGreaterThan(0)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('quota period', () => {
  it('is the UTC calendar month', () => {
    expect(quotaPeriod(Date.parse('2026-11-30T23:59:59.999Z'))).toBe('2026-11')
    expect(quotaPeriod(Date.parse('2026-12-01T00:00:00.000Z'))).toBe('2026-12')
    expect(quotaResetsAt(Date.parse('2026-12-31T12:00:00Z'))).toBe('2027-01-01T00:00:00.000Z')
  })
})

describe('tokens', () => {
  it('reads only well-formed bearer tokens', () => {
    const token = createToken()
    expect(bearerToken(`Bearer ${token}`)).toBe(token)
    for (const header of [undefined, '', 'Bearer', 'Bearer short', `Basic ${token}`, `Bearer ${token} x`]) expect(bearerToken(header)).toBeNull()
  })

  it('compares hashes, never tokens', () => {
    const token = createToken()
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashToken(token)).not.toContain(token)
    expect(sameHash(hashToken(token), hashToken(token))).toBe(true)
    expect(sameHash(hashToken(token), hashToken(createToken()))).toBe(false)
    expect(sameHash(hashToken(token), '')).toBe(false)
  })
})
