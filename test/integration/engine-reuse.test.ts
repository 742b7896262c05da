/**
 * What a tenant's jobs on one site keep from each other, and what a page's own background work
 * costs them: one renderer serves job after job (no renderer started per page), and the page's
 * dedicated workers stop as the page is read. Renderers are counted from /proc below this
 * test's process (its own file: no other engine runs here).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createChromiumEngine, type ChromiumEngine } from '../../src/engine/chromium.ts'
import { descendants } from '../fixtures/process-tree.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 })

const DESKTOP = { width: 1300, height: 900 }
const PHONE = { width: 412, height: 915 }
const PAGES = 10

let site: StaticServer
let engine: ChromiumEngine
/** The engine's events: a warm page renewed (not cleared in time on a loaded machine) costs renderers, and says so. */
const events: Record<string, unknown>[] = []

const renderers = (): Set<number> => new Set([...descendants(process.pid)].filter(([, command]) => command.includes('--type=renderer')).map(([pid]) => pid))

function generate(path: string, tenant: string, viewports = [DESKTOP, PHONE]): Promise<string> {
  return engine.generate({ url: `${site.origin}${path}`, viewports, signal: AbortSignal.timeout(30_000), deadline: Date.now() + 30_000, tenant }).then((result) => result.css)
}

const page = (title: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/site.css"><script src="/app.js"></script></head><body><header class="top"><h1>${title}</h1></header><div class="spacer"></div><p class="below">Below</p></body></html>`

beforeAll(async () => {
  const files: Record<string, string> = {
    '/site.css': '.top{background:#123;color:#fff}.spacer{height:3000px}.below{color:purple}.alive{color:red}',
    '/app.js': 'document.documentElement.dataset.app = "1"',
    // Its resize handler asks the worker; a worker that answers puts an element above the fold.
    '/worker.html':
      '<!doctype html><html><head><meta charset="utf-8"><title>w</title><link rel="stylesheet" href="/site.css"></head><body><header class="top"><h1>Worker</h1></header><div class="spacer"></div>' +
      '<script>const worker = new Worker("/worker.js"); worker.onmessage = () => { const p = document.createElement("p"); p.className = "alive"; p.textContent = "alive"; document.body.prepend(p) }; addEventListener("resize", () => worker.postMessage("ping"))</script></body></html>',
    '/worker.js': 'onmessage = () => postMessage("pong")',
  }
  for (let index = 0; index < PAGES; index++) files[`/page-${index}.html`] = page(`Page ${index}`)
  site = await serveFiles(Object.fromEntries(Object.entries(files).map(([path, body]) => [path, { body, cacheControl: 'max-age=3600' }])))
  engine = createChromiumEngine({ warmPages: 2, log: (line) => void events.push(line) })
  await engine.ready()
})

afterAll(async () => {
  await engine?.close()
  await site?.close()
})

describe('a tenant’s jobs on one site', () => {
  it('run in the renderers the first ones started, two at a time as the service runs them: no renderer is started per page', async () => {
    const pair = (index: number): Promise<string[]> => Promise.all([generate(`/page-${index}.html`, 'reuse'), generate(`/page-${index + 1}.html`, 'reuse')])
    // The first pair's two pages, and the spare the pool opens after them for a job of another tenant.
    for (const css of await pair(0)) expect(css).toContain('.top')
    await pair(2)
    const settled = renderers()
    const seen = new Set(settled)
    for (let index = 4; index < PAGES; index += 2) {
      for (const css of await pair(index)) expect(css).toContain('.top')
      for (const pid of renderers()) seen.add(pid)
    }
    // None, but for what a warm page renewed costs: one that could not be cleared in time on a loaded machine
    // is closed, its job takes a new page and the pool opens a spare after it (two); one the browser moved on
    // starts one. The old engine started one for every page.
    const renewed = events.filter((line) => line.event === 'warm_page_renewed').length
    expect([...seen].filter((pid) => !settled.has(pid)).length).toBeLessThanOrEqual(2 * renewed)
  })

  it('a page’s worker is stopped as the page is read: it answers no message the page sends it after that', async () => {
    const css = await generate('/worker.html', 'workers')
    expect(css).toContain('.top')
    // The resize to the phone's viewport asks the worker; a live one would have shown `.alive` above the fold.
    expect(css).not.toContain('.alive')
  })

  it('an engine of one tenant (the embedded service) keeps its warm pages and opens no spare after their jobs', async () => {
    const browsers = (): Set<number> => new Set([...descendants(process.pid)].filter(([, command]) => /chrom/i.test(command) && !command.includes('--type=')).map(([pid]) => pid))
    const before = browsers()
    const single = createChromiumEngine({ warmPages: 2, sparesAfterJobs: false, idleMs: { spares: 120_000 } })
    const run = (index: number): Promise<string> =>
      single.generate({ url: `${site.origin}/page-${index}.html`, viewports: [DESKTOP], signal: AbortSignal.timeout(30_000), deadline: Date.now() + 30_000, tenant: 'build' }).then((result) => result.css)
    try {
      await single.ready()
      for (let index = 0; index < 6; index += 2) for (const css of await Promise.all([run(index), run(index + 1)])) expect(css).toContain('.top')
      // Its two warm pages' renderers, once a page that could not be cleared in time (a loaded machine) has gone:
      // an engine that opens spares after jobs keeps a third for the spare's idle time.
      const [browser] = [...browsers()].filter((pid) => !before.has(pid))
      const own = (): number => [...descendants(browser!).values()].filter((command) => command.includes('--type=renderer')).length
      const end = Date.now() + 10_000
      while (own() > 2 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100))
      expect(own()).toBe(2)
    } finally {
      await single.close()
    }
  })
})
