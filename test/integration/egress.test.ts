/**
 * The egress proxy against every way out a page has, in the real service and Chromium:
 * a hostile site that the service is allowed to render (allowOrigins) tries to reach
 * internal servers on loopback by redirects, subresources, workers, WebSockets,
 * prefetches, WebRTC and DNS tricks. Through the proxy the canaries get nothing; with the
 * policy open (the embedded mode) the same pages do reach them, so each vector is live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { runVectors, SITE_CSS, startSsrfLab, type SsrfLab } from '../fixtures/ssrf-lab.ts'

let lab: SsrfLab
beforeAll(async () => {
  lab = await startSsrfLab()
})
afterAll(async () => {
  await lab?.close()
})

describe.skipIf(!findChromium())('egress proxy', () => {
  it('refuses every vector: the canaries get no connection, no datagram; pages that aim inside fail blocked_url, the rest render their own CSS', async () => {
    const rebinding = lab.site.replace('127.0.0.1', 'rebind.test')
    const outcomes = await runVectors(lab, { allowOrigins: [lab.site] }, [...lab.vectors.map((vector) => vector.path), rebinding])
    for (const vector of lab.vectors) {
      const seen = outcomes.get(vector.path)!
      expect({ vector: vector.name, outcome: seen.outcome, hits: seen.hits }).toEqual({ vector: vector.name, outcome: vector.refused, hits: 0 })
      if (vector.refused === 'done') {
        expect(seen.css).toContain('font-size:40px')
        expect(seen.css).not.toContain('rgb(1, 2, 3)')
      }
    }
    // The service checked the name once (public), the proxy again (loopback): the connection goes where the proxy checked.
    expect(outcomes.get(rebinding)).toMatchObject({ outcome: 'blocked_url', hits: 0 })
  }, 240_000)

  it('the same pages reach the canaries when the policy is open: the vectors are live', async () => {
    // Not WebRTC: the browser sends no UDP outside its proxy in any mode, so that vector is shut with the policy open too.
    const live = ['/redirect', '/redirect-localhost-dot', '/stylesheet', '/stylesheet-redirect', '/import', '/image', '/fetch', '/websocket', '/worker', '/iframe', '/popup', '/prefetch', '/speculation']
    const outcomes = await runVectors(lab, { allowPrivateNetworks: true }, live)
    for (const path of live) expect({ path, reached: outcomes.get(path)!.hits > 0 }).toEqual({ path, reached: true })
    expect(outcomes.get('/stylesheet')!.css).toContain(SITE_CSS.slice(0, 8))
  }, 240_000)
})
