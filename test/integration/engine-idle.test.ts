/**
 * An idle engine keeps no more than it promises: after its jobs, its spares are closed once
 * no job came for `idleMs.spares`, and its warm pages once none came for `idleMs.warm`; then
 * only the browser's own processes are left. Counted from /proc, below this test's process
 * (its own file: no other engine runs here). The next job opens its page afresh, same bytes.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import { chromiumProcesses } from '../fixtures/process-tree.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'
import { until } from '../fixtures/until.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })

const DESKTOP = { width: 1300, height: 900 }
const WARM_PAGES = 2
const SPARES_IDLE_MS = 2000
const WARM_IDLE_MS = 5000
/**
 * Renderers a kept page costs at most, as documented (docs/engine.md): its own (the omnibox
 * popup Chromium 156 preloads for each browser context is off). None beside them: Chromium's
 * spare renderer is off.
 */
const RENDERERS_PER_PAGE = 1
const RENDERERS_BESIDE = 0

let site: StaticServer

const renderers = (): number => chromiumProcesses().renderer ?? 0
/** Every Chromium process but the renderers: the browser, its zygotes, GPU and utility processes. */
const fixed = (): Record<string, number> => {
  const { renderer: _, ...rest } = chromiumProcesses()
  return rest
}

function generate(engine: ChromiumEngine, tenant: string): Promise<string> {
  return engine.generate({ url: `${site.origin}/index.html`, viewports: [DESKTOP], signal: AbortSignal.timeout(30_000), deadline: Date.now() + 30_000, tenant }).then((result) => result.css)
}

beforeAll(async () => {
  site = await serveFiles({
    '/site.css': '.hero{height:100vh;background:#123}.hero-title{font-size:48px}.spacer{height:3000px}.below{color:purple}',
    '/index.html': '<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="stylesheet" href="/site.css"></head><body><section class="hero"><h1 class="hero-title">Title</h1></section><div class="spacer"></div><p class="below">Below</p></body></html>',
  })
})

afterAll(async () => {
  await site?.close()
})

describe('Chromium engine: idle pages', () => {
  it('closes its spares, then its warm pages, when no job comes; a job after that opens its page afresh, same bytes', async () => {
    const engine = createChromiumEngine({ loadTimeoutMs: 1000, fontsTimeoutMs: 500, warmPages: WARM_PAGES, idleMs: { spares: SPARES_IDLE_MS, warm: WARM_IDLE_MS } })
    try {
      await engine.ready()
      // Three tenants, one job each: the warm bound keeps two of their pages, and one spare is opened after each job.
      const first = await generate(engine, 'tenant-a')
      expect(first).toContain('.hero-title')
      expect(await generate(engine, 'tenant-b')).toBe(first)
      expect(await generate(engine, 'tenant-c')).toBe(first)
      const jobsDone = Date.now()
      const browser = fixed()
      expect(browser.browser).toBe(1)

      // Shortly before the spares' idle time: the warm pages and a spare, each with its renderers
      // (how many a page costs depends on the Chromium: 2 on 156, 1 on 150).
      await sleep(Math.max(0, jobsDone + SPARES_IDLE_MS * 0.75 - Date.now()))
      const open = renderers()
      const warmBound = WARM_PAGES * RENDERERS_PER_PAGE + RENDERERS_BESIDE
      expect(open).toBeGreaterThan(WARM_PAGES)

      // Past it, the spare is closed: fewer renderers, no more than the warm pages the docs promise.
      expect(await until(() => renderers() < open && renderers() <= warmBound, SPARES_IDLE_MS + 3000)).toBe(true)

      // They stay until their own idle time; past it they are closed too: the browser's own processes stay, no renderer.
      await sleep(Math.max(0, jobsDone + WARM_IDLE_MS * 0.8 - Date.now()))
      expect(renderers()).toBeGreaterThan(0)
      expect(await until(() => renderers() === 0, WARM_IDLE_MS + 3000)).toBe(true)
      expect(fixed()).toEqual(browser)

      // The next job, of a tenant that had a warm page, opens one afresh, with the same bytes.
      expect(await generate(engine, 'tenant-c')).toBe(first)
      expect(await generate(engine, 'tenant-a')).toBe(first)
    } finally {
      await engine.close()
    }
    // Closed: nothing of it is left below this process.
    expect(await until(() => Object.keys(chromiumProcesses()).length === 0, 5000)).toBe(true)
  })

  it('refuses an idle time that is not a positive number of milliseconds; Infinity keeps the pages', () => {
    for (const idleMs of [{ spares: 0 }, { warm: -1 }, { spares: Number.NaN }, { warm: '1000' as unknown as number }]) {
      expect(() => createChromiumEngine({ idleMs })).toThrow(/idleMs\.(spares|warm) must be a positive number of milliseconds/)
    }
    expect(() => createChromiumEngine({ idleMs: { spares: 1000, warm: Infinity } })).not.toThrow()
  })
})
