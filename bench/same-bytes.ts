/**
 * Same input, same bytes: the same site rendered through the reference service again gives
 * the same CSS, byte for byte, whether the render's HTTP cache is cold or warm.
 *
 * The site is served by this script on 127.0.0.1: 20 pages that share three stylesheets
 * written the way people write them, not the way the CSSOM gives them back (`#222`,
 * `margin:0`, `RED`, `translate(0,0)`, shorthands, comments, upper-case units, a custom
 * property with odd spaces, a declaration the browser drops). Each page has its own inline
 * `<style>` and its own mix of blocks above and below the fold.
 *   - base.css: `ETag` + `cache-control: no-cache`; a matching `If-None-Match` gets a 304.
 *   - theme.css: `cache-control: max-age=3600`, no validator: a warm cache does not ask again.
 *   - extra.css (every other page): no caching headers at all: every render fetches it.
 *   - every 5th page also links a stylesheet on a second loopback port (another host for the
 *     engine) that takes the TCP connection and never answers.
 * The server counts what it answered (200s and 304s per stylesheet), per pass.
 *
 * Ours: `startService` in-process (its own Chromium engine, 2 workers, one ent token), each
 * page through `createClient` (generate + waitForCss), 4 pages in flight as embedded mode
 * has them, at the service's default viewports and third-party policy (`cut`). Passes:
 *   A1  a fresh service, one pass (cold);
 *   A2  the same service and token again (the tenant's warm page keeps its HTTP cache);
 *   A3  once more;
 *   B1  a second fresh service, one pass (cold again).
 * Every page's CSS is compared across the four passes, byte for byte.
 *
 * Peer: penthouse (installed into the bench cache as bench:quality does), kept warm
 * (`unstableKeepBrowserAlive`, its one browser for every call), on the system Chromium with
 * the engine's flags, the same pages twice, one at a time, at 1300×900 with the page's own
 * CSS as `critical` hands it over (what it could read: the silent host's is not). Penthouse
 * waits for `load`, which the silent host never lets come, so those pages go last and each
 * call has its own timeout. Its two passes are compared the same way. No target: a report.
 *
 *   npm run bench:same-bytes
 */
import { createHash } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createClient } from '../src/client/client.ts'
import { isJobData } from '../src/client/types.ts'
import { DEFAULT_VIEWPORTS, type JobData } from '../src/contract/api-contract.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { CHECK_INTERVAL, PAGES_PER_WORKER } from '../src/core/modes/embedded.ts'
import { createToken } from '../src/service/auth.ts'
import { startService, type RunningService } from '../src/service/server.ts'
import { rebaseUrls } from './quality/html.ts'
import { createPenthouse, installedVersion, type PenthouseRunner } from './quality/peers.ts'
import { startSilentHost, type SilentHost } from '../test/fixtures/silent-host.ts'
import { seeded } from './seeded.ts'

const PAGES = 20
/** Every STALLED_EVERY-th page links the silent host's stylesheet. */
const STALLED_EVERY = 5
const WORKERS = 2
const IN_FLIGHT = PAGES_PER_WORKER * WORKERS
/** A page's job this long is stuck: the client gives up and the page counts as failed. */
const JOB_DEADLINE_MS = 60_000
/** Penthouse waits for `load`, which the silent host never lets come: each call gets this long. */
const PENTHOUSE_TIMEOUT_MS = 4000
const PEER_VIEWPORT = DEFAULT_VIEWPORTS[0]!

const started = performance.now()
const progress = (message: string): void => void process.stderr.write(`${message}\n`)

// ─── the site ─────────────────────────────────────────────────────────────────────────

/** Written as people write CSS: the CSSOM gives most of it back in other words. */
const SHEETS: Record<string, string> = {
  'base.css': `/* base.css: reset and type. Comments are not in the CSSOM. */
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0;color:#222;background:#FFF}
h1,h2,h3{margin:0 0 .5em;font-weight:700;line-height:1.2}
h1{font-size:2.5REM}
p{margin:0 0 1em}
a{color:RED;text-decoration:underline dotted}
a:hover,a:focus-visible{color:#c00}
/* layout */
.wrap{max-width:1100px;margin:0 auto;padding:0 24px}
.nav{display:flex;justify-content:space-between;align-items:center;padding:12px 24px;background:#222;color:#EEE}
.nav a{color:inherit;margin-left:1.5em;text-decoration:none}
.hero{padding:64px 0;background:#fafafa url(/img/dot.svg) repeat 0 0;border-bottom:1px solid #ddd}
.hero-title{transform:translate(0,0);transition:transform .3s ease-in-out,opacity .3s}
.lead{font-size:1.25em;color:rgba(34,34,34,.8)}
.btn{display:inline-block;padding:10px 20px;border:2px solid currentColor;border-radius:4px 4px 0 0;font:bold 14px/1 system-ui,sans-serif}
.btn:not(.btn-ghost){color:#FFF;background-color:#0A58CA}
.btn-ghost{background:none;color:#0a58ca}
.bad{color:#22;margin:0 auto auto auto}
.footer{margin-top:80px;padding:48px 0;background:#111;color:#999;font-size:14px}
@media (max-width:767.98px){.nav{flex-direction:column}.nav a{margin:4px 0 0 0}}
`,
  'theme.css': `/* theme.css: colours and components */
:root{--accent:  #E11D48 ;--gap:16px;--shadow:0 1px 2px RGBA(0,0,0,.2),0 0 0 1px #0001}
.title{text-transform:UPPERCASE;letter-spacing:.05EM;color:var(--accent)}
.grid{display:grid;gap:var(--gap);grid-template-columns:1fr}
@media (min-width:768px){.grid{grid-template-columns:repeat(3,1fr)}}
.card{padding:16px;border:1px solid #e5e5e5;border-radius:8px;box-shadow:var(--shadow);background:white}
.card h3{font-size:1.1em;margin:0 0 8px 0}
.badge::before{content:"\\2022  ";color:var(--accent)}
.badge{display:inline-block;padding:2px 8px;border-radius:999px;background:#E11D4818;font-size:12px}
@supports (display:grid){.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr))}}
@keyframes fade{from{opacity:0}to{opacity:1}}
.fade{animation:fade .2s ease-out both}
.quote{font-style:italic;border-left:4px solid var(--accent);padding:0 0 0 16px;margin:24px 0}
.muted{color:#6B7280!important}
.below{padding:40px 0;background:linear-gradient(180deg,#fff 0%,#F3F4F6 100%)}
.ribbon{position:absolute;top:0;right:0;inset-inline-end:0;transform:rotate(45DEG) translate(25%,0)}
`,
  'extra.css': `/* extra.css: tables and forms, on every other page */
.table{border-collapse:collapse;width:100%;margin:0}
.table th,.table td{padding:8px 12px;border-bottom:1px solid #e5e5e5;text-align:LEFT}
.table tr:nth-child(2n+1) td{background:#FAFAFA}
.form{display:flex;flex-flow:row wrap;gap:8px}
.form input{flex:1 1 0%;border:1px solid #CCC;padding:8px;outline:none}
.form input:focus{border-color:#0A58CA;box-shadow:0 0 0 3px rgba(10,88,202,.25)}
@media print{.form{display:none}}
`,
}
const DOT_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><circle cx="4" cy="4" r="1" fill="#ddd"/></svg>'
const BASE_ETAG = `"${createHash('sha256').update(SHEETS['base.css']!).digest('hex').slice(0, 16)}"`
const WORDS = 'fast reliable cloud launch build ship team data insight secure scale pixel design motion edge native simple modern growth metric workflow deploy plan budget invoice report chart revenue user account feature release guide'.split(' ')

const between = (rand: () => number, low: number, high: number): number => low + Math.floor(rand() * (high - low + 1))
const words = (rand: () => number, count: number): string => Array.from({ length: count }, () => WORDS[Math.floor(rand() * WORDS.length)]!).join(' ')
const times = (count: number, make: (i: number) => string): string => Array.from({ length: count }, (_, i) => make(i)).join('\n')

interface SitePage {
  path: string
  /** Own-origin stylesheets it links, in document order. */
  sheets: string[]
  /** Its inline `<style>`. */
  style: string
  /** Links the silent host's stylesheet. */
  stalled: boolean
}

function sitePages(): SitePage[] {
  return Array.from({ length: PAGES }, (_, index) => {
    const id = String(index).padStart(2, '0')
    return {
      path: `/p/${id}.html`,
      sheets: ['base.css', 'theme.css', ...(index % 2 === 0 ? ['extra.css'] : [])],
      style: `.page-${id} .hero{border-top:${(index % 4) + 1}px solid #${(0x123 + index * 0x111).toString(16).slice(-3)}}\n.page-${id} .hero-title{margin:0 0 ${index}px 0}/* page ${id} */`,
      stalled: index % STALLED_EVERY === STALLED_EVERY - 1,
    }
  })
}

/** The page's HTML: its blocks, chosen by its seed, some above the fold and some below. */
function pageHtml(page: SitePage, index: number, silentOrigin: string): string {
  const rand = seeded(1000 + index)
  const id = String(index).padStart(2, '0')
  const links = page.sheets.map((sheet) => `<link rel="stylesheet" href="/css/${sheet}">`)
  if (page.stalled) links.push(`<link rel="stylesheet" href="${silentOrigin}/fonts.css">`)
  const cards = index % 3 === 0 ? `<section class="wrap grid">${times(between(rand, 3, 6), () => `<div class="card fade"><h3 class="title">${words(rand, 2)}</h3><p class="muted">${words(rand, 12)}</p><span class="badge">${words(rand, 1)}</span></div>`)}</section>` : ''
  const table = page.sheets.includes('extra.css')
    ? `<section class="wrap"><table class="table"><tr><th>${words(rand, 1)}</th><th>${words(rand, 1)}</th></tr>${times(between(rand, 2, 5), () => `<tr><td>${words(rand, 2)}</td><td>${between(rand, 1, 999)}</td></tr>`)}</table><form class="form"><input placeholder="${words(rand, 1)}"><button class="btn">${words(rand, 1)}</button></form></section>`
    : ''
  const quote = index % 4 === 1 ? `<blockquote class="quote wrap">${words(rand, 18)}</blockquote>` : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Page ${id}</title>
${links.join('\n')}
<style>${page.style}</style>
</head><body class="page-${id}">
<nav class="nav"><strong>${words(rand, 1)}</strong><div>${times(between(rand, 2, 5), () => `<a href="#">${words(rand, 1)}</a>`)}</div></nav>
<header class="hero"><div class="wrap"><h1 class="hero-title">${words(rand, between(rand, 3, 6))}</h1><p class="lead">${words(rand, between(rand, 10, 20))}</p>
<a class="btn" href="#">${words(rand, 2)}</a> <a class="btn btn-ghost" href="#">${words(rand, 2)}</a>${index % 6 === 0 ? '<span class="ribbon badge">new</span>' : ''}</div></header>
${cards}
${quote}
${table}
<div style="height:${between(rand, 600, 1400)}px"></div>
<section class="below"><div class="wrap">${times(between(rand, 3, 8), () => `<p class="bad">${words(rand, 30)}</p>`)}</div></section>
<footer class="footer"><div class="wrap">${words(rand, 12)}</div></footer>
</body></html>
`
}

/** What the site server answered, per pass: `what status` → count. */
type Tally = Map<string, number>

interface Site {
  origin: string
  pages: (SitePage & { html: string })[]
  /** Counts from now on go to this pass. */
  countAs(pass: string): void
  tally(pass: string): Tally
  close(): Promise<void>
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return (server.address() as { port: number }).port
}

async function startSite(silentOrigin: string): Promise<Site> {
  const tallies = new Map<string, Tally>()
  let pass = 'setup'
  const count = (what: string): void => {
    const tally = tallies.get(pass) ?? new Map<string, number>()
    tallies.set(pass, tally.set(what, (tally.get(what) ?? 0) + 1))
  }
  const pages = sitePages().map((page, index) => ({ ...page, html: pageHtml(page, index, silentOrigin) }))
  const byPath = new Map(pages.map((page) => [page.path, page]))
  const answer = (res: ServerResponse, what: string, status: number, headers: Record<string, string>, body?: string): void => {
    count(`${what} ${status}`)
    res.writeHead(status, body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  }
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    const page = byPath.get(path)
    if (page) return answer(res, 'page', 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, page.html)
    if (path === '/warmup.html') return answer(res, 'warmup', 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, '<!doctype html><title>warm-up</title><style>p{color:#222}</style><p>warm-up</p>')
    if (path === '/img/dot.svg') return answer(res, 'dot.svg', 200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=3600' }, DOT_SVG)
    const sheet = path.startsWith('/css/') ? path.slice('/css/'.length) : ''
    const css = SHEETS[sheet]
    if (css === undefined) return answer(res, 'other', 404, { 'content-type': 'text/plain' }, 'not found')
    const type = { 'content-type': 'text/css; charset=utf-8' }
    if (sheet === 'base.css') {
      const validators = { 'cache-control': 'no-cache', etag: BASE_ETAG }
      const asked = req.headers['if-none-match']
      if (asked !== undefined && asked.split(',').map((tag) => tag.trim().replace(/^W\//, '')).includes(BASE_ETAG)) return answer(res, sheet, 304, validators)
      return answer(res, sheet, 200, { ...type, ...validators }, css)
    }
    if (sheet === 'theme.css') return answer(res, sheet, 200, { ...type, 'cache-control': 'max-age=3600' }, css)
    return answer(res, sheet, 200, type, css)
  })
  server.keepAliveTimeout = 1000
  const port = await listen(server)
  return {
    origin: `http://127.0.0.1:${port}`,
    pages,
    countAs: (next) => void (pass = next),
    tally: (of) => tallies.get(of) ?? new Map(),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}

// ─── a pass ───────────────────────────────────────────────────────────────────────────

interface PageResult {
  /** The CSS as the tool gave it; null when the page failed. */
  css: string | null
  ms: number | null
  status: string
  /** Ours: stylesheets the render could not read, and hosts it went without. */
  unread?: number
  skipped?: number
}

interface Pass {
  label: string
  tool: 'ours' | 'penthouse'
  what: string
  results: Map<string, PageResult>
  wallMs: number
  silentConnections: number
}

const sha = (text: string): string => createHash('sha256').update(text).digest('hex')

/** One hash over every page's CSS, in page order (a failed page counts as such). */
function passHash(pass: Pass, pages: readonly SitePage[]): string {
  const hash = createHash('sha256')
  for (const page of pages) hash.update(`${page.path}\0${pass.results.get(page.path)?.css ?? '\u0000failed'}\0`)
  return hash.digest('hex').slice(0, 12)
}

async function inParallel(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await work(next++)
  }))
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!

/** Every page through the service, IN_FLIGHT at a time, as embedded mode sends them. */
async function passOurs(label: string, what: string, service: RunningService, token: string, site: Site, silent: SilentHost): Promise<Pass> {
  site.countAs(label)
  const silentBefore = silent.connections()
  const client = createClient({ baseUrl: service.url, token, checkInterval: CHECK_INTERVAL, rateLimit: { requestsPerMinute: null } })
  const results = new Map<string, PageResult>()
  const began = performance.now()
  try {
    await inParallel(site.pages.length, IN_FLIGHT, async (i) => {
      const page = site.pages[i]!
      const pageBegan = performance.now()
      const deadline = Date.now() + JOB_DEADLINE_MS
      try {
        const job = await client.generate(site.origin + page.path, { deadline })
        const data: JobData = isJobData(job) && job.status === 'done' ? job : await client.waitForCss(job, { deadline })
        results.set(page.path, {
          css: data.css ?? '',
          ms: performance.now() - pageBegan,
          status: data.status,
          unread: data.network?.unreadStylesheets.length ?? 0,
          skipped: data.network?.skippedHosts.length ?? 0,
        })
      } catch (error) {
        results.set(page.path, { css: null, ms: null, status: `failed: ${firstLine(error)}` })
      }
    })
  } finally {
    await client.close()
  }
  const pass: Pass = { label, tool: 'ours', what, results, wallMs: performance.now() - began, silentConnections: silent.connections() - silentBefore }
  progress(`${label} (${what}): ${[...results.values()].filter((result) => result.css !== null).length}/${site.pages.length} done in ${(pass.wallMs / 1000).toFixed(1)} s`)
  return pass
}

/** Resolves to null when `promise` does not settle within `ms`; the late result is dropped. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  promise.catch(() => {})
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<null>((done) => (timer = setTimeout(() => done(null), ms)))
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** The page's own CSS for penthouse, in document order, url()s rebased as `critical` does; the silent host has nothing to read. */
function penthouseInput(site: Site, page: SitePage): string {
  return [...page.sheets.map((sheet) => rebaseUrls(SHEETS[sheet]!, `${site.origin}/css/${sheet}`)), rebaseUrls(page.style, site.origin + page.path)].join('\n')
}

/** Every page through penthouse kept warm, one at a time; the stalled pages last (a timed-out call holds a page of its browser until penthouse's own timeout). */
async function passPenthouse(label: string, what: string, penthouse: PenthouseRunner, site: Site, silent: SilentHost): Promise<Pass> {
  site.countAs(label)
  const silentBefore = silent.connections()
  const results = new Map<string, PageResult>()
  const began = performance.now()
  const ordered = [...site.pages.filter((page) => !page.stalled), ...site.pages.filter((page) => page.stalled)]
  for (const page of ordered) {
    try {
      const result = await within(penthouse.runWarm(site.origin + page.path, penthouseInput(site, page), PEER_VIEWPORT), PENTHOUSE_TIMEOUT_MS)
      results.set(page.path, result === null ? { css: null, ms: null, status: 'timed out' } : { css: result.css, ms: result.ms, status: 'done' })
    } catch (error) {
      results.set(page.path, { css: null, ms: null, status: `error: ${firstLine(error)}` })
    }
  }
  const pass: Pass = { label, tool: 'penthouse', what, results, wallMs: performance.now() - began, silentConnections: silent.connections() - silentBefore }
  progress(`${label} (${what}): ${[...results.values()].filter((result) => result.css !== null).length}/${site.pages.length} done in ${(pass.wallMs / 1000).toFixed(1)} s`)
  return pass
}

// ─── the run ──────────────────────────────────────────────────────────────────────────

/**
 * Penthouse's own stray rejections: puppeteer promises inside penthouse that nobody awaits
 * (its kept pages' request interception, a timed-out call's page). Unhandled, the first one
 * ends the process, and silently: penthouse's exit handler calls process.exit before Node
 * prints the error. They are counted and reported; any other unhandled rejection still ends the run.
 */
const strays = new Map<string, number>()
process.on('unhandledRejection', (reason) => {
  const stack = reason instanceof Error ? (reason.stack ?? '') : ''
  if (/[\\/](penthouse|puppeteer)[\\/]/.test(stack)) {
    strays.set(firstLine(reason), (strays.get(firstLine(reason)) ?? 0) + 1)
    return
  }
  console.error(reason)
  process.exit(1)
})

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
const silent = await startSilentHost()
const site = await startSite(silent.origin)
progress(`site: ${site.pages.length} pages on ${site.origin} (${site.pages.filter((page) => page.stalled).length} link the silent host ${silent.origin})`)

/** Service events other than requests (engine trouble, failed jobs), by service and event. */
const events = new Map<string, number>()
async function freshService(name: string): Promise<{ service: RunningService; token: string }> {
  const token = createToken()
  const log = (line: Record<string, unknown>): void => {
    if (line.event === 'request' || line.event === 'listening' || line.event === 'closed') return
    const key = `${name}: ${String(line.event)}${line.code ? ` (${String(line.code)})` : ''}`
    events.set(key, (events.get(key) ?? 0) + 1)
  }
  const service = await startService({ host: '127.0.0.1', port: 0, tokens: [{ token, plan: 'ent' }], allowPrivateNetworks: true, workers: WORKERS, log })
  return { service, token }
}

const passes: Pass[] = []
let penthouseVersion = '—'
try {
  const a = await freshService('A')
  try {
    passes.push(await passOurs('A1', 'service A, cold', a.service, a.token, site, silent))
    passes.push(await passOurs('A2', 'service A, warm', a.service, a.token, site, silent))
    passes.push(await passOurs('A3', 'service A, warm', a.service, a.token, site, silent))
  } finally {
    await a.service.close()
  }
  const b = await freshService('B')
  try {
    passes.push(await passOurs('B1', 'service B, cold', b.service, b.token, site, silent))
  } finally {
    await b.service.close()
  }

  let penthouse: PenthouseRunner | undefined
  try {
    penthouse = await createPenthouse(executablePath, chromiumFlags())
    penthouseVersion = penthouse.version
    // A throw-away call on a page that shares nothing with the site: the browser is warm, its HTTP cache still empty.
    site.countAs('penthouse warm-up')
    await within(penthouse.runWarm(`${site.origin}/warmup.html`, 'p{color:#222}', PEER_VIEWPORT), PENTHOUSE_TIMEOUT_MS).catch(() => null)
    passes.push(await passPenthouse('P1', 'penthouse kept warm, 1st', penthouse, site, silent))
    passes.push(await passPenthouse('P2', 'penthouse kept warm, 2nd', penthouse, site, silent))
  } catch (error) {
    progress(`  ! penthouse did not run: ${firstLine(error)}`)
  } finally {
    await penthouse?.close().catch(() => {})
  }
} finally {
  await site.close()
  await silent.close()
}

// ─── report ───────────────────────────────────────────────────────────────────────────

const median = (values: number[]): number | null => {
  const sorted = [...values].sort((x, y) => x - y)
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : null
}
const byLabel = new Map(passes.map((pass) => [pass.label, pass]))
const ours = passes.filter((pass) => pass.tool === 'ours')
const peers = passes.filter((pass) => pass.tool === 'penthouse')

console.log(
  `\nSame input, same bytes: ${site.pages.length} pages on 127.0.0.1 sharing base.css (ETag, no-cache), theme.css (max-age=3600) and extra.css (no caching headers, ${site.pages.filter((page) => page.sheets.includes('extra.css')).length} pages); ` +
    `${site.pages.filter((page) => page.stalled).length} pages also link a stylesheet on a silent loopback host. ` +
    `Ours: startService in-process (its own Chromium engine, ${WORKERS} workers, one ent token), createClient, ${IN_FLIGHT} pages in flight, default viewports and third-party policy. ` +
    `Peer: penthouse ${penthouseVersion} kept warm, ${PEER_VIEWPORT.width}×${PEER_VIEWPORT.height}, ${PENTHOUSE_TIMEOUT_MS / 1000} s per call. ${executablePath}; node ${process.version}, playwright-core ${installedVersion('playwright-core')}`,
)

console.log('\nPer pass')
console.table(
  passes.map((pass) => {
    const results = [...pass.results.values()]
    const done = results.filter((result) => result.css !== null)
    return {
      pass: pass.label,
      what: pass.what,
      pages: results.length,
      done: done.length,
      failed: results.length - done.length,
      'median ms': median(done.map((result) => result.ms!))?.toFixed(0) ?? '—',
      'CSS bytes total': done.reduce((sum, result) => sum + Buffer.byteLength(result.css!), 0),
      'hash of all CSS': passHash(pass, site.pages),
      'pages with unread sheets': pass.tool === 'ours' ? results.filter((result) => (result.unread ?? 0) > 0).length : '—',
      'wall s': (pass.wallMs / 1000).toFixed(1),
    }
  }),
)

console.log('\nWhat the site server answered, per pass (304: revalidated from cache; a sheet not asked for at all came from cache unasked)')
const tallyLabels = ['setup', ...ours.map((pass) => pass.label), 'penthouse warm-up', ...peers.map((pass) => pass.label)]
console.table(
  tallyLabels
    .filter((label) => label !== 'setup' || site.tally(label).size > 0)
    .map((label) => {
      const tally = site.tally(label)
      const n = (key: string): number => tally.get(key) ?? 0
      return {
        pass: label,
        'pages 200': n('page 200'),
        'base.css 200': n('base.css 200'),
        'base.css 304': n('base.css 304'),
        'theme.css 200': n('theme.css 200'),
        'theme.css 304': n('theme.css 304'),
        'extra.css 200': n('extra.css 200'),
        'dot.svg 200': n('dot.svg 200'),
        'sheet requests / page': ((n('base.css 200') + n('base.css 304') + n('theme.css 200') + n('theme.css 304') + n('extra.css 200')) / site.pages.length).toFixed(2),
        'all 200': [...tally].filter(([key]) => key.endsWith(' 200')).reduce((sum, [, value]) => sum + value, 0),
        'all 304': [...tally].filter(([key]) => key.endsWith(' 304')).reduce((sum, [, value]) => sum + value, 0),
        'silent host connections': byLabel.get(label)?.silentConnections ?? '—',
      }
    }),
)

/** Where two CSS texts part: the offset, a few characters of each from just before it, and the rules only one of them has. */
function diffHint(a: string, b: string): string {
  let at = 0
  while (at < a.length && at < b.length && a[at] === b[at]) at++
  const from = Math.max(0, at - 20)
  const snippet = (text: string): string => JSON.stringify(text.slice(from, at + 40))
  const rules = (text: string): Set<string> => new Set(text.split('}').map((rule) => rule.trim()).filter(Boolean))
  const [ra, rb] = [rules(a), rules(b)]
  const onlyA = [...ra].filter((rule) => !rb.has(rule))
  const onlyB = [...rb].filter((rule) => !ra.has(rule))
  return `${a.length} vs ${b.length} B, first difference at byte ${at}: ${snippet(a)} vs ${snippet(b)}; rules only in the first: ${onlyA.length}${onlyA[0] ? ` (e.g. ${JSON.stringify(onlyA[0].slice(0, 60))})` : ''}, only in the second: ${onlyB.length}${onlyB[0] ? ` (e.g. ${JSON.stringify(onlyB[0].slice(0, 60))})` : ''}`
}

/** The pairs compared: ours against its first cold pass and the warm passes against each other; penthouse against itself. */
const PAIRS: [string, string][] = [
  ['A1', 'A2'],
  ['A1', 'A3'],
  ['A2', 'A3'],
  ['A1', 'B1'],
  ['P1', 'P2'],
].filter(([x, y]) => byLabel.has(x!) && byLabel.has(y!)) as [string, string][]

type Verdict = 'yes' | 'no' | 'failed'
function verdict(x: Pass, y: Pass, path: string): Verdict {
  const a = x.results.get(path)?.css ?? null
  const b = y.results.get(path)?.css ?? null
  if (a === null || b === null) return 'failed'
  return a === b ? 'yes' : 'no'
}

console.log('\nIdentical bytes, per page and pair of passes (failed: one of the two has no CSS)')
console.table(
  site.pages.map((page) => ({
    page: page.path + (page.stalled ? ' (silent host)' : ''),
    'CSS B (A1)': byLabel.get('A1')?.results.get(page.path)?.css != null ? Buffer.byteLength(byLabel.get('A1')!.results.get(page.path)!.css!) : '—',
    ...Object.fromEntries(PAIRS.map(([x, y]) => [`${x}=${y}`, verdict(byLabel.get(x)!, byLabel.get(y)!, page.path)])),
    'sha (A1)': byLabel.get('A1')?.results.get(page.path)?.css != null ? sha(byLabel.get('A1')!.results.get(page.path)!.css!).slice(0, 8) : '—',
  })),
)

console.log('\nSummary per pair')
console.table(
  PAIRS.map(([x, y]) => {
    const verdicts = site.pages.map((page) => verdict(byLabel.get(x)!, byLabel.get(y)!, page.path))
    return {
      pair: `${x}=${y}`,
      tool: byLabel.get(x)!.tool,
      identical: verdicts.filter((one) => one === 'yes').length,
      differ: verdicts.filter((one) => one === 'no').length,
      'failed in one or both': verdicts.filter((one) => one === 'failed').length,
      'all identical': verdicts.every((one) => one === 'yes') ? 'yes' : 'no',
    }
  }),
)

const differing = PAIRS.flatMap(([x, y]) =>
  site.pages.filter((page) => verdict(byLabel.get(x)!, byLabel.get(y)!, page.path) === 'no').map((page) => ({ pair: `${x}=${y}`, page: page.path, hint: diffHint(byLabel.get(x)!.results.get(page.path)!.css!, byLabel.get(y)!.results.get(page.path)!.css!) })),
)
if (differing.length) {
  console.log('\nPages whose bytes differ')
  for (const { pair, page, hint } of differing) console.log(`  ${pair} ${page}: ${hint}`)
}

const failures = new Map<string, string[]>()
for (const pass of passes) {
  for (const [path, result] of pass.results) {
    if (result.css !== null) continue
    const key = `${pass.tool}: ${result.status}`
    failures.set(key, [...(failures.get(key) ?? []), `${pass.label} ${path}`])
  }
}
if (failures.size) {
  console.log('\nPages without CSS, and why')
  for (const [why, where] of failures) console.log(`  ${why}: ${where.length} (${where.slice(0, 6).join(', ')}${where.length > 6 ? ', …' : ''})`)
}
if (strays.size) {
  console.log("\nPenthouse's stray rejections (inside penthouse and puppeteer, awaited by nobody), by message")
  for (const [message, n] of strays) console.log(`  ${message}: ${n}`)
}
if (events.size) {
  console.log('\nService events (requests aside)')
  for (const [event, n] of events) console.log(`  ${event}: ${n}`)
}

console.log(`\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s.`)
// A penthouse call that timed out keeps its own 30 s timer, which would hold the process open after the figures.
process.exit(0)
