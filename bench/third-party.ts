/**
 * The network never decides a page's fate. A folder of 32 pages is built in a temp dir: 30
 * template pages (landing, blog, docs, pricing, dashboard and shop layouts, each page with
 * its own class names, content and stylesheets served from the folder) that reference what
 * real templates reference: Bootstrap and Font Awesome from cdnjs.cloudflare.com and
 * cdn.jsdelivr.net, Google Fonts (`<link>` and `@import`), `@font-face` on fonts.gstatic.com,
 * head `<script src>` from a CDN, async and deferred analytics, CDN images. On this machine
 * none of those names resolve. Two more pages point at a "silent host" on 127.0.0.1 that
 * takes the TCP connection and never answers: one with a head `<script src>` from it, one
 * with a head stylesheet from it.
 *
 * Ours: the product's folder command, run as a user runs it (the `critical-css` bin of
 * package.json when dist/ is built, else tsx on src/cli/critical-css.ts; no browser flags,
 * no CHROME_PATH set here), on a fresh copy of the folder, 3 times. `--no-cache`: with the
 * default cache runs 2 and 3 would read run 1's results and be identical by construction.
 * Each run: the report's page outcomes and per-page times (request to the embedded service
 * → answer), the wall time around the process, and a hash of every .html it left; the three
 * runs' hashes are compared page by page.
 *
 * Peer: penthouse (installed into the bench cache as bench:quality does, on the system
 * Chromium with the engine's flags; no host-resolver rules, so it meets the same network
 * ours does) on the same pages served from a loopback static server, one page at a time,
 * kept warm (its fastest mode, the one bench:quality's speed target uses), after one
 * throw-away call. It gets the page's own stylesheets as text, as `critical` hands them
 * over; it could not fetch the CDNs' anyway. Each call has its own timeout. Penthouse
 * renders one viewport per call and ours both in one job: penthouse is run at the first
 * viewport only (both would double its part of the run), so the per-page comparison leans
 * its way. Penthouse waits for the `load` event, so a CDN name that takes long to fail
 * costs it the whole wait.
 *
 * Targets: 0 failed pages, byte-identical output across runs, both stalled pages inlined,
 * no page over 3 s.
 *
 *   npm run bench:third-party
 *   BENCH_CLI=source npm run bench:third-party     (tsx on src/ even when dist/ is built)
 *   BENCH_RUNS=1 npm run bench:third-party         (one run of ours: no identity check, faster)
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_VIEWPORTS } from '../src/contract/api-contract.ts'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { chromiumFlags } from '../src/engine/flags.ts'
import { serveStatic } from './quality/corpus.ts'
import { rebaseUrls, stylesheetsOf } from './quality/html.ts'
import { createPenthouse, installedVersion, type PenthouseRunner } from './quality/peers.ts'
import { startSilentHost } from '../test/fixtures/silent-host.ts'
import { seeded } from './seeded.ts'
import { newest } from './newest-file.ts'

const TEMPLATE_PAGES = 30
const RUNS = Math.max(1, Math.floor(Number(process.env.BENCH_RUNS)) || 3)
/** The target: no page of ours takes longer than this, the stalled ones included. */
const SLOW_PAGE_MS = 3000
/** A run of the folder command this long is stuck: its process group is killed and the run reported as such. */
const RUN_TIMEOUT_MS = 150_000
/** Penthouse waits for `load`, which a silent host never lets come: each call gets this long. */
const PENTHOUSE_TIMEOUT_MS = 10_000
/** Penthouse's one viewport: the first of ours (1300×900). */
const PEER_VIEWPORT = DEFAULT_VIEWPORTS[0]!
const REPO = fileURLToPath(new URL('..', import.meta.url))
/** The service's variables: unset, so the command runs in embedded mode whatever the shell has. */
const SERVICE_ENV = ['CRITICAL_CSS_BASE_URL', 'CRITICAL_CSS_API_TOKEN', 'CRITICAL_CSS_SITE_URL']

/**
 * The report file as this bench reads it: the fields of src/core/report.ts it needs. The
 * engine is being reworked: skippedHosts and unreadStylesheets are newer and may be absent.
 */
interface ReportPage {
  file: string
  outcome: 'inlined' | 'unchanged' | 'failed'
  ms: number
  cssBytes: number
  message: string | null
  stillBlocking?: number
  skippedHosts?: { host: string; reason: string }[]
  unreadStylesheets?: string[]
}

interface Report {
  ms: number
  pages: ReportPage[]
}

const started = performance.now()
const progress = (message: string): void => void process.stderr.write(`${message}\n`)
const temps: string[] = []
/** The folder command's process group while a run is on: it has a group of its own, so Ctrl-C does not reach it by itself. */
let runningGroup: number | null = null
process.once('SIGINT', () => {
  if (runningGroup !== null) {
    try {
      process.kill(-runningGroup, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  for (const dir of temps) rmSync(dir, { recursive: true, force: true })
  process.exit(130)
})

// ─── the site ─────────────────────────────────────────────────────────────────────────

const LAYOUTS = ['landing', 'blog', 'docs', 'pricing', 'dashboard', 'shop'] as const
type Layout = (typeof LAYOUTS)[number]

/** What one page is built from: its layout, its own class prefix, a seeded generator for its content. */
interface Spec {
  index: number
  layout: Layout
  /** Path of the page in the folder. */
  file: string
  /** Class-name prefix of this page's own stylesheet: no two pages share rules. */
  prefix: string
  rand: () => number
  accent: string
  ink: string
}

interface BuiltPage {
  file: string
  layout: Layout | 'stalled'
  /** The third parties the page references, shortly: the per-page table's second column. */
  refs: string
}

const CDN = {
  bootstrapCss: ['https://cdnjs.cloudflare.com/ajax/libs/bootstrap/5.3.3/css/bootstrap.min.css', 'https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css'],
  fontAwesome: 'https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.5.2/css/all.min.css',
  headScripts: [
    'https://code.jquery.com/jquery-3.7.1.min.js',
    'https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js',
    'https://cdnjs.cloudflare.com/ajax/libs/lodash.js/4.17.21/lodash.min.js',
  ],
  bootstrapJs: 'https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js',
  alpine: 'https://unpkg.com/alpinejs@3.14.1/dist/cdn.min.js',
  gstatic: 'https://fonts.gstatic.com/s/inter/v13/UcCO3FwrK3iLTeHuS_fvQtMwCp50KnMw2boKoduKmMEVuLyfAZ9hiA.woff2',
  image: (id: number, width: number): string => `https://images.unsplash.com/photo-${1500000000000 + id * 7919}?w=${width}&q=80`,
}
const FAMILIES = ['Inter', 'Roboto', 'Lato', 'Poppins', 'Merriweather', 'Open+Sans', 'Source+Sans+3', 'Playfair+Display', 'Nunito', 'Work+Sans']
const WORDS = (
  'fast reliable cloud launch build ship team data insight secure scale pixel design motion edge native simple modern growth metric ' +
  'workflow deploy plan budget invoice report chart revenue user account feature release guide tutorial api token query cache render ' +
  'layout theme color grid card table order cart product review rating delivery support community story journey craft studio'
).split(' ')
const ACCENTS = ['#2563eb', '#db2777', '#059669', '#7c3aed', '#ea580c', '#0891b2', '#dc2626', '#4f46e5', '#65a30d', '#c026d3']

const between = (rand: () => number, low: number, high: number): number => low + Math.floor(rand() * (high - low + 1))
const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!
const words = (rand: () => number, count: number): string => Array.from({ length: count }, () => pick(rand, WORDS)).join(' ')
const title = (rand: () => number, count: number): string => words(rand, count).replace(/^\w/, (c) => c.toUpperCase())
const sentences = (rand: () => number, count: number): string => Array.from({ length: count }, () => `${title(rand, between(rand, 6, 14))}.`).join(' ')
const times = (count: number, make: (i: number) => string): string => Array.from({ length: count }, (_, i) => make(i)).join('\n')

/** Rules every page of a layout may have, then a few that are below the fold or never used: what critical CSS must leave out. */
function commonRules({ prefix: p, accent, ink, rand }: Spec): string {
  return `
.${p}-nav { display: flex; align-items: center; justify-content: space-between; padding: ${between(rand, 10, 24)}px 32px; background: ${ink}; color: #fff; }
.${p}-nav a { color: #fff; text-decoration: none; margin-left: ${between(rand, 12, 28)}px; }
.${p}-logo { font-weight: 700; font-size: ${between(rand, 18, 26)}px; letter-spacing: .02em; }
.${p}-btn { display: inline-block; padding: 12px 22px; border-radius: ${between(rand, 0, 12)}px; background: ${accent}; color: #fff; border: 0; }
.${p}-btn:hover { filter: brightness(1.1); }
.${p}-btn-ghost { background: transparent; color: ${accent}; border: 2px solid ${accent}; }
.${p}-footer { margin-top: 80px; padding: 48px 32px; background: #111827; color: #9ca3af; font-size: 14px; }
.${p}-modal { position: fixed; inset: 0; display: none; background: rgba(0,0,0,.5); }
.${p}-toast { position: fixed; bottom: 16px; right: 16px; padding: 12px; background: ${ink}; color: #fff; }
@media (max-width: 768px) { .${p}-nav { flex-direction: column; padding: 12px; } .${p}-nav a { margin: 4px 0; } }
@media print { .${p}-nav, .${p}-footer { display: none; } }
`
}

function nav({ prefix: p, rand }: Spec): string {
  return `<nav class="${p}-nav navbar"><span class="${p}-logo">${title(rand, 1)}</span><div>${times(between(rand, 3, 6), () => `<a href="#">${title(rand, 1)}</a>`)}</div></nav>`
}

function footer({ prefix: p, rand }: Spec): string {
  return `<footer class="${p}-footer"><div class="container">${sentences(rand, 2)}</div></footer>`
}

/** One layout: the page's body and its own stylesheet, from the spec. */
type LayoutMaker = (spec: Spec) => { body: string; css: string }

const layouts: Record<Layout, LayoutMaker> = {
  landing(spec) {
    const { prefix: p, rand, accent, index } = spec
    const features = between(rand, 3, 6)
    return {
      body: `${nav(spec)}
<header class="${p}-hero"><div class="container"><div class="row"><div class="col-md-6">
<h1 class="${p}-title display-4">${title(rand, between(rand, 3, 7))}</h1><p class="${p}-lead lead">${sentences(rand, 2)}</p>
<a class="${p}-btn btn btn-primary" href="#">${title(rand, 2)}</a> <a class="${p}-btn ${p}-btn-ghost btn" href="#">${title(rand, 2)}</a>
</div><div class="col-md-6"><img class="${p}-shot img-fluid" src="${CDN.image(index, 800)}" width="640" height="400" alt=""></div></div></div></header>
<section class="${p}-features container"><div class="row">${times(features, () => `<div class="col-md-4 ${p}-feature"><i class="fa-solid fa-bolt ${p}-icon"></i><h3>${title(rand, 3)}</h3><p>${sentences(rand, 2)}</p></div>`)}</div></section>
<section class="${p}-quotes">${times(between(rand, 2, 4), () => `<blockquote class="${p}-quote">${sentences(rand, 2)}<cite>${title(rand, 2)}</cite></blockquote>`)}</section>
${footer(spec)}`,
      css: `${commonRules(spec)}
.${p}-hero { padding: ${between(rand, 48, 120)}px 0; background: linear-gradient(135deg, ${accent}22, #fff); min-height: ${between(rand, 380, 620)}px; }
.${p}-title { font-size: ${between(rand, 36, 64)}px; line-height: 1.1; margin: 0 0 16px; }
.${p}-lead { font-size: ${between(rand, 18, 22)}px; color: #4b5563; max-width: 36em; }
.${p}-shot { border-radius: 12px; box-shadow: 0 20px 40px rgba(0,0,0,.15); max-width: 100%; height: auto; }
.${p}-features { padding: 80px 32px; display: grid; gap: 24px; }
.${p}-feature h3 { font-size: 20px; margin: 12px 0; }
.${p}-icon { color: ${accent}; font-size: 28px; }
.${p}-quotes { background: #f9fafb; padding: 64px 32px; }
.${p}-quote { font-style: italic; border-left: 4px solid ${accent}; padding-left: 16px; }
`,
    }
  },

  blog(spec) {
    const { prefix: p, rand, accent, index } = spec
    return {
      body: `${nav(spec)}
<main class="${p}-wrap container"><article class="${p}-post">
<p class="${p}-kicker">${title(rand, 2)}</p><h1 class="${p}-title">${title(rand, between(rand, 5, 10))}</h1>
<p class="${p}-meta">${title(rand, 2)} · ${between(rand, 3, 14)} min read</p>
<img class="${p}-cover" src="${CDN.image(index, 1200)}" width="1200" height="600" alt="">
${times(between(rand, 8, 14), () => `<p class="${p}-para">${sentences(rand, between(rand, 3, 6))}</p>`)}
</article><aside class="${p}-side">${times(between(rand, 5, 12), () => `<a class="${p}-tag badge" href="#">${words(rand, 1)}</a>`)}</aside></main>
${footer(spec)}`,
      css: `${commonRules(spec)}
.${p}-wrap { display: grid; grid-template-columns: minmax(0, 1fr) ${between(rand, 200, 300)}px; gap: 48px; max-width: 1100px; margin: 0 auto; padding: 48px 24px; }
.${p}-kicker { text-transform: uppercase; color: ${accent}; font-size: 13px; letter-spacing: .1em; }
.${p}-title { font-size: ${between(rand, 32, 48)}px; margin: 8px 0 12px; font-family: Georgia, serif; }
.${p}-meta { color: #6b7280; margin-bottom: 24px; }
.${p}-cover { width: 100%; height: auto; aspect-ratio: 2 / 1; background: #e5e7eb; border-radius: 8px; }
.${p}-para { font-size: ${between(rand, 17, 20)}px; line-height: 1.7; color: #1f2937; }
.${p}-tag { display: inline-block; margin: 4px; padding: 4px 10px; background: ${accent}18; color: ${accent}; border-radius: 999px; }
@media (max-width: 768px) { .${p}-wrap { grid-template-columns: 1fr; } .${p}-side { display: none; } }
`,
    }
  },

  docs(spec) {
    const { prefix: p, rand, accent } = spec
    return {
      body: `<div class="${p}-top"><span class="${p}-logo">${title(rand, 1)} Docs</span><input class="${p}-search" placeholder="Search"></div>
<div class="${p}-shell"><nav class="${p}-side">${times(between(rand, 10, 20), () => `<a class="${p}-link" href="#">${title(rand, 2)}</a>`)}</nav>
<main class="${p}-main"><h1 class="${p}-h1">${title(rand, between(rand, 3, 6))}</h1><p>${sentences(rand, 3)}</p>
<div class="${p}-callout">${sentences(rand, 1)}</div>
${times(between(rand, 3, 6), () => `<h2 class="${p}-h2">${title(rand, 3)}</h2><p>${sentences(rand, 3)}</p><pre class="${p}-code"><code>npm install ${words(rand, 1)}\n${words(rand, 3)}</code></pre>`)}
</main><aside class="${p}-toc">${times(between(rand, 3, 6), () => `<a href="#">${title(rand, 2)}</a>`)}</aside></div>`,
      css: `${commonRules(spec)}
.${p}-top { position: sticky; top: 0; display: flex; gap: 24px; align-items: center; height: ${between(rand, 52, 68)}px; padding: 0 24px; border-bottom: 1px solid #e5e7eb; background: #fff; }
.${p}-search { flex: 0 1 320px; padding: 8px 12px; border: 1px solid #d1d5db; border-radius: 6px; }
.${p}-shell { display: grid; grid-template-columns: ${between(rand, 220, 280)}px minmax(0, 1fr) 200px; }
.${p}-side { padding: 24px; border-right: 1px solid #e5e7eb; height: calc(100vh - 60px); overflow: auto; }
.${p}-link { display: block; padding: 6px 0; color: #374151; text-decoration: none; }
.${p}-main { padding: 32px 48px; max-width: 820px; line-height: 1.65; }
.${p}-h1 { font-size: ${between(rand, 30, 40)}px; }
.${p}-h2 { font-size: 24px; margin-top: 40px; border-bottom: 1px solid #e5e7eb; }
.${p}-callout { border-left: 4px solid ${accent}; background: ${accent}12; padding: 12px 16px; margin: 16px 0; }
.${p}-code { background: #0f172a; color: #e2e8f0; padding: 16px; border-radius: 6px; overflow: auto; font-family: ui-monospace, monospace; }
.${p}-toc { padding: 32px 16px; font-size: 14px; }
.${p}-toc a { display: block; color: #6b7280; }
@media (max-width: 1000px) { .${p}-shell { grid-template-columns: 1fr; } .${p}-side, .${p}-toc { display: none; } }
`,
    }
  },

  pricing(spec) {
    const { prefix: p, rand, accent } = spec
    const plans = between(rand, 3, 4)
    return {
      body: `${nav(spec)}
<section class="${p}-head text-center"><h1 class="${p}-title">${title(rand, between(rand, 3, 6))}</h1><p>${sentences(rand, 1)}</p>
<div class="${p}-toggle"><span>Monthly</span><span>Yearly</span></div></section>
<section class="${p}-plans container">${times(plans, (i) => `<div class="${p}-plan ${i === 1 ? `${p}-plan-hot` : ''} card"><h2>${title(rand, 1)}</h2><p class="${p}-price">$${between(rand, 0, 99)}<small>/mo</small></p><ul>${times(between(rand, 4, 8), () => `<li><i class="fa-solid fa-check"></i> ${words(rand, 3)}</li>`)}</ul><a class="${p}-btn" href="#">${title(rand, 2)}</a></div>`)}</section>
<section class="${p}-faq container">${times(between(rand, 4, 8), () => `<details class="${p}-q"><summary>${title(rand, 6)}?</summary><p>${sentences(rand, 2)}</p></details>`)}</section>
${footer(spec)}`,
      css: `${commonRules(spec)}
.${p}-head { padding: ${between(rand, 48, 96)}px 24px 32px; text-align: center; }
.${p}-title { font-size: ${between(rand, 34, 52)}px; margin: 0 0 12px; }
.${p}-toggle { display: inline-flex; gap: 2px; padding: 4px; background: #f3f4f6; border-radius: 999px; }
.${p}-toggle span { padding: 6px 16px; border-radius: 999px; }
.${p}-plans { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 24px; padding: 24px; max-width: 1200px; margin: 0 auto; }
.${p}-plan { border: 1px solid #e5e7eb; border-radius: 12px; padding: 28px; }
.${p}-plan-hot { border: 2px solid ${accent}; transform: scale(1.03); }
.${p}-price { font-size: ${between(rand, 36, 48)}px; font-weight: 800; }
.${p}-plan ul { list-style: none; padding: 0; line-height: 2; }
.${p}-faq { max-width: 760px; margin: 64px auto; }
.${p}-q summary { font-weight: 600; padding: 12px 0; cursor: pointer; }
`,
    }
  },

  dashboard(spec) {
    const { prefix: p, rand, accent, ink } = spec
    return {
      body: `<div class="${p}-app"><aside class="${p}-rail">${times(between(rand, 5, 9), () => `<a class="${p}-item" href="#"><i class="fa-solid fa-chart-line"></i> ${title(rand, 1)}</a>`)}</aside>
<div class="${p}-body"><header class="${p}-bar"><input class="${p}-find" placeholder="Search"><span class="${p}-user">${title(rand, 2)}</span></header>
<section class="${p}-stats">${times(4, () => `<div class="${p}-stat"><p>${title(rand, 2)}</p><strong>${between(rand, 100, 99999).toLocaleString('en')}</strong><span class="${p}-delta">+${between(rand, 1, 40)}%</span></div>`)}</section>
<div class="${p}-chart"></div>
<table class="${p}-table table"><thead><tr><th>${title(rand, 1)}</th><th>${title(rand, 1)}</th><th>${title(rand, 1)}</th><th>Status</th></tr></thead>
<tbody>${times(between(rand, 10, 20), () => `<tr><td>${title(rand, 2)}</td><td>${between(rand, 1, 999)}</td><td>$${between(rand, 10, 9999)}</td><td><span class="${p}-pill">${words(rand, 1)}</span></td></tr>`)}</tbody></table></div></div>`,
      css: `${commonRules(spec)}
.${p}-app { display: grid; grid-template-columns: ${between(rand, 200, 260)}px 1fr; min-height: 100vh; }
.${p}-rail { background: ${ink}; padding: 20px 0; }
.${p}-item { display: block; padding: 10px 20px; color: #cbd5e1; text-decoration: none; }
.${p}-item:first-child { background: ${accent}; color: #fff; }
.${p}-bar { display: flex; justify-content: space-between; padding: 16px 24px; border-bottom: 1px solid #e5e7eb; }
.${p}-find { width: ${between(rand, 220, 360)}px; padding: 8px; border: 1px solid #d1d5db; border-radius: 6px; }
.${p}-stats { display: grid; grid-template-columns: repeat(4, 1fr); gap: 16px; padding: 24px; }
.${p}-stat { background: #fff; border: 1px solid #e5e7eb; border-radius: 10px; padding: 16px; }
.${p}-stat strong { font-size: ${between(rand, 24, 32)}px; display: block; }
.${p}-delta { color: #059669; font-size: 13px; }
.${p}-chart { height: ${between(rand, 220, 320)}px; margin: 0 24px; background: repeating-linear-gradient(90deg, ${accent}10 0 40px, #fff 40px 80px); border-radius: 10px; }
.${p}-table { width: calc(100% - 48px); margin: 24px; border-collapse: collapse; }
.${p}-table td, .${p}-table th { padding: 10px; border-bottom: 1px solid #f3f4f6; text-align: left; }
.${p}-pill { padding: 2px 8px; border-radius: 999px; background: ${accent}18; color: ${accent}; font-size: 12px; }
`,
    }
  },

  shop(spec) {
    const { prefix: p, rand, accent, index } = spec
    return {
      body: `${nav(spec)}
<section class="${p}-banner"><h1 class="${p}-title">${title(rand, between(rand, 2, 5))}</h1><p>${sentences(rand, 1)}</p></section>
<div class="${p}-filters">${times(between(rand, 4, 8), () => `<button class="${p}-chip">${title(rand, 1)}</button>`)}</div>
<section class="${p}-grid">${times(between(rand, 8, 16), (i) => `<div class="${p}-product"><img src="${CDN.image(index * 100 + i, 400)}" width="400" height="400" alt=""><h3>${title(rand, 3)}</h3><p class="${p}-cost">$${between(rand, 5, 500)}.${between(rand, 10, 99)}</p><button class="${p}-btn">Add to cart</button></div>`)}</section>
${footer(spec)}`,
      css: `${commonRules(spec)}
.${p}-banner { padding: ${between(rand, 40, 80)}px 32px; background: ${accent}; color: #fff; }
.${p}-title { font-size: ${between(rand, 32, 56)}px; margin: 0; }
.${p}-filters { display: flex; flex-wrap: wrap; gap: 8px; padding: 16px 32px; }
.${p}-chip { border: 1px solid #d1d5db; background: #fff; border-radius: 999px; padding: 6px 14px; }
.${p}-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(${between(rand, 180, 240)}px, 1fr)); gap: 24px; padding: 16px 32px; }
.${p}-product img { width: 100%; height: auto; aspect-ratio: 1; background: #f3f4f6; border-radius: 8px; }
.${p}-product h3 { font-size: 16px; margin: 8px 0 4px; }
.${p}-cost { font-weight: 700; color: ${accent}; }
`,
    }
  },
}

/** The site-wide stylesheet every page links first. */
const THEME_CSS = `*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font-family: var(--font, system-ui), -apple-system, "Segoe UI", sans-serif; color: #111827; background: #fff; }
img { display: block; }
.container { max-width: 1140px; margin: 0 auto; padding: 0 16px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`

/**
 * The third parties of page `i`, varied so that every mix appears: a CDN stylesheet or two,
 * Google Fonts, a parser-blocking head script from a CDN, async and deferred scripts.
 */
function thirdParties(i: number, layout: Layout): { before: string[]; after: string[]; bodyEnd: string[]; ownCssHead: string; refs: string[] } {
  const before: string[] = []
  const after: string[] = []
  const bodyEnd: string[] = []
  const refs: string[] = []
  let ownCssHead = ''
  const family = FAMILIES[i % FAMILIES.length]!
  if (i % 4 !== 3) {
    before.push('<link rel="preconnect" href="https://fonts.googleapis.com">', '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>')
    before.push(`<link href="https://fonts.googleapis.com/css2?family=${family}:wght@400;600;700&display=swap" rel="stylesheet">`)
    refs.push('gfonts')
  }
  if (i % 3 !== 2) {
    before.push(`<link rel="stylesheet" href="${CDN.bootstrapCss[i % 3]!}">`)
    refs.push(i % 3 === 0 ? 'bootstrap@cdnjs' : 'bootstrap@jsdelivr')
  }
  if (['landing', 'pricing', 'dashboard'].includes(layout) || i % 5 === 0) {
    before.push(`<link rel="stylesheet" href="${CDN.fontAwesome}" crossorigin="anonymous" referrerpolicy="no-referrer">`)
    refs.push('fontawesome')
  }
  if (i % 4 !== 3) {
    // Half the pages put their head script before their own stylesheets, half after.
    ;(i % 2 === 0 ? before : after).push(`<script src="${CDN.headScripts[i % 3]!}"></script>`)
    refs.push('head js')
  } else {
    bodyEnd.push(`<script src="${CDN.bootstrapJs}"></script>`)
  }
  if (i % 2 === 0) {
    after.push(`<script async src="https://www.googletagmanager.com/gtag/js?id=G-${1000 + i}"></script>`, `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)} gtag('js', new Date()); gtag('config', 'G-${1000 + i}');</script>`)
    refs.push('async gtag')
  }
  if (i % 3 === 0) {
    after.push(`<script defer src="${CDN.alpine}"></script>`)
    refs.push('defer')
  }
  if (i % 5 === 2) {
    ownCssHead += `@import url("https://fonts.googleapis.com/css2?family=${FAMILIES[(i + 3) % FAMILIES.length]}&display=swap");\n`
    refs.push('@import gfonts')
  }
  if (i % 7 === 3) {
    ownCssHead += `@font-face { font-family: "Brand ${i}"; font-display: swap; src: url("${CDN.gstatic}") format("woff2"); }\n:root { --font: "Brand ${i}"; }\n`
    refs.push('@font-face gstatic')
  }
  if (layout === 'landing' || layout === 'blog' || layout === 'shop') refs.push('cdn images')
  return { before, after, bodyEnd, ownCssHead, refs }
}

function htmlDocument(head: string[], body: string, pageTitle: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${pageTitle}</title>
${head.join('\n')}
</head>
<body>
${body}
</body>
</html>
`
}

/** Where page `i` of a layout lives: the first landing is the home page, blogs sit in folders of their own. */
function pagePath(layout: Layout, n: number, index: number): string {
  if (index === 0) return 'index.html'
  if (layout === 'blog') return `blog/post-${n}/index.html`
  return `${layout}/${layout}-${n}.html`
}

function write(root: string, file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true })
  writeFileSync(join(root, file), text)
}

/** The 30 template pages, each with its own stylesheet (and its layout's, for half of them). */
function writeTemplatePages(root: string): BuiltPage[] {
  write(root, 'assets/css/theme.css', THEME_CSS)
  const pages: BuiltPage[] = []
  for (let index = 0; index < TEMPLATE_PAGES; index++) {
    const layout = LAYOUTS[index % LAYOUTS.length]!
    const n = Math.floor(index / LAYOUTS.length) + 1
    const rand = seeded(index * 104729 + 17)
    const spec: Spec = { index, layout, file: pagePath(layout, n, index), prefix: `${layout.slice(0, 3)}${n}`, rand, accent: ACCENTS[index % ACCENTS.length]!, ink: pick(rand, ['#111827', '#1e293b', '#0f172a', '#312e81', '#3f3f46']) }
    const { body, css } = layouts[layout](spec)
    const third = thirdParties(index, layout)
    const own = ['<link rel="stylesheet" href="/assets/css/theme.css">']
    if (index % 2 === 1) {
      // Half the pages share their layout's stylesheet beside their own: the extra own sheet of a real theme.
      write(root, `assets/css/${layout}.css`, `.${layout}-shared-banner { padding: 8px; background: #fef3c7; }\n.${layout}-shared-unused { outline: 1px dashed red; }\n`)
      own.push(`<link rel="stylesheet" href="/assets/css/${layout}.css">`)
    }
    write(root, `assets/css/${spec.prefix}.css`, third.ownCssHead + css)
    own.push(`<link rel="stylesheet" href="/assets/css/${spec.prefix}.css">`)
    const html = htmlDocument([...third.before, ...own, ...third.after], body + (third.bodyEnd.length ? `\n${third.bodyEnd.join('\n')}` : ''), `${title(seeded(index), 3)} · ${layout}`)
    write(root, spec.file, html)
    pages.push({ file: spec.file, layout, refs: third.refs.join(', ') })
  }
  return pages
}

/** The two pages whose head waits on the silent host: a parser-blocking script, and a render-blocking stylesheet. */
function writeStalledPages(root: string, silentPort: number): BuiltPage[] {
  const silent = `http://127.0.0.1:${silentPort}`
  const cases = [
    { file: 'stalled/head-script.html', head: `<script src="${silent}/app.js"></script>`, refs: 'head <script src> on the silent host' },
    { file: 'stalled/head-stylesheet.html', head: `<link rel="stylesheet" href="${silent}/theme.css">`, refs: 'head stylesheet on the silent host' },
  ]
  return cases.map(({ file, head, refs }, k) => {
    const spec: Spec = { index: 100 + k, layout: 'landing', file, prefix: `stl${k}`, rand: seeded(9000 + k), accent: ACCENTS[k]!, ink: '#111827' }
    const { body, css } = layouts.landing(spec)
    write(root, `assets/css/${spec.prefix}.css`, css)
    write(root, file, htmlDocument(['<link rel="stylesheet" href="/assets/css/theme.css">', head, `<link rel="stylesheet" href="/assets/css/${spec.prefix}.css">`], body, `Stalled ${k}`))
    return { file, layout: 'stalled' as const, refs }
  })
}

// ─── ours: the folder command ─────────────────────────────────────────────────────────

interface Cli {
  label: string
  argv: string[]
  /** Said beside the figures when the build may not be what src/ holds now. */
  warning: string | null
  /** The folder the command runs from (dist/ or src/): its newest file is stamped on each run. */
  codeDir: string
}

/** The command as a user gets it: package.json's bin when dist/ is built, else tsx on the source. */
function resolveCli(): Cli {
  const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }
  const bin = join(REPO, manifest.bin['critical-css']!)
  const source = { label: 'tsx src/cli/critical-css.ts', argv: [join(REPO, 'node_modules/.bin/tsx'), join(REPO, 'src/cli/critical-css.ts')], warning: null, codeDir: join(REPO, 'src') }
  if (process.env.BENCH_CLI === 'source' || !existsSync(bin)) return source
  // dist/ is not rebuilt by this bench: if src/ changed since, the figures are the old build's.
  const src = newest(join(REPO, 'src'))
  const built = statSync(bin).mtimeMs
  const warning = src.mtimeMs > built ? `dist/ was built ${new Date(built).toISOString()}, before ${relative(REPO, src.path)} changed (${new Date(src.mtimeMs).toISOString()}): run \`npm run build\` or BENCH_CLI=source to measure src/` : null
  return { label: `${relative(REPO, bin)} (package.json bin)`, argv: [process.execPath, bin], warning, codeDir: dirname(bin) }
}

interface Run {
  run: number
  wallMs: number
  /** The exit code, "killed after …" or the spawn error. */
  exit: string
  report: Report | null
  /** Newest modification time under the command's folder as the run began: another build landing between runs shows here. */
  codeStamp: number
  /** sha256 of every .html the run left, by path in the folder. */
  hashes: Map<string, string>
  stderrTail: string
}

function htmlHashes(dir: string): Map<string, string> {
  const hashes = new Map<string, string>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.html')) continue
    const path = join(entry.parentPath, entry.name)
    hashes.set(relative(dir, path).split(sep).join('/'), createHash('sha256').update(readFileSync(path)).digest('hex'))
  }
  return hashes
}

/** Spawns the command in a process group of its own, so a stuck run can be ended with its browser. */
function spawnTimed(argv: string[], cwd: string): Promise<{ wallMs: number; exit: string; stderr: string }> {
  const env = { ...process.env }
  for (const name of SERVICE_ENV) delete env[name]
  return new Promise((resolve) => {
    const began = performance.now()
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
    runningGroup = child.pid ?? null
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
    }, RUN_TIMEOUT_MS)
    child.on('error', (error) => {
      clearTimeout(timer)
      resolve({ wallMs: performance.now() - began, exit: `spawn failed: ${error.message}`, stderr })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      runningGroup = null
      const exit = killed ? `killed after ${RUN_TIMEOUT_MS / 1000} s` : String(code ?? signal)
      resolve({ wallMs: performance.now() - began, exit, stderr })
    })
  })
}

/** One run: a fresh copy of the folder, the command on it, its report and what it left. */
async function runOurs(cli: Cli, siteDir: string, run: number): Promise<Run> {
  const codeStamp = newest(cli.codeDir).mtimeMs
  const root = mkdtempSync(join(tmpdir(), `ucc-third-party-run${run}-`))
  temps.push(root)
  const dir = join(root, 'site')
  cpSync(siteDir, dir, { recursive: true })
  const reportFile = join(root, 'report.json')
  const { wallMs, exit, stderr } = await spawnTimed([...cli.argv, dir, '--report', reportFile, '--no-cache'], root)
  const report = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as Report) : null
  const hashes = htmlHashes(dir)
  rmSync(root, { recursive: true, force: true })
  return { run, wallMs, exit, report, codeStamp, hashes, stderrTail: stderr.trim().split('\n').slice(-8).join('\n') }
}

// ─── penthouse ────────────────────────────────────────────────────────────────────────

interface PeerResult {
  /** Both viewports, ms; null when a call did not finish. */
  ms: number | null
  /** done, timed out, or error: the first line of its message. */
  status: string
  cssBytes: number | null
}

/** The page's own CSS for penthouse, rebased; other origins (CDNs, the silent host) are left out: there is nothing to read there. */
function penthouseInput(siteDir: string, file: string, pageUrl: string): string {
  const html = readFileSync(join(siteDir, file), 'utf8')
  const origin = new URL(pageUrl).origin
  return stylesheetsOf(html, pageUrl)
    .flatMap((sheet) => {
      if (sheet.kind === 'style') return [rebaseUrls(sheet.css, pageUrl)]
      const url = new URL(sheet.href)
      if (url.origin !== origin) return []
      return [rebaseUrls(readFileSync(join(siteDir, decodeURIComponent(url.pathname)), 'utf8'), sheet.href)]
    })
    .join('\n')
}

/** Resolves to null when `promise` does not settle within `ms`; the late result is dropped. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  promise.catch(() => {})
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<null>((done) => (timer = setTimeout(() => done(null), ms)))
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** One page at the first viewport, within its own timeout. */
async function runPenthouse(penthouse: PenthouseRunner, url: string, css: string): Promise<PeerResult> {
  try {
    const result = await within(penthouse.runWarm(url, css, PEER_VIEWPORT), PENTHOUSE_TIMEOUT_MS)
    if (result === null) return { ms: null, status: 'timed out', cssBytes: null }
    return { ms: result.ms, status: 'done', cssBytes: Buffer.byteLength(result.css) }
  } catch (error) {
    return { ms: null, status: `error: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`, cssBytes: null }
  }
}

// ─── the run ──────────────────────────────────────────────────────────────────────────

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
const cli = resolveCli()
const silent = await startSilentHost()
const siteRoot = mkdtempSync(join(tmpdir(), 'ucc-third-party-site-'))
temps.push(siteRoot)
const pages = [...writeTemplatePages(siteRoot), ...writeStalledPages(siteRoot, silent.port)]
progress(`site: ${pages.length} pages in ${siteRoot}; silent host on 127.0.0.1:${silent.port}; ours: ${cli.label}`)
if (cli.warning) progress(`  ! ${cli.warning}`)

const runs: Run[] = []
for (let run = 1; run <= RUNS; run++) {
  const result = await runOurs(cli, siteRoot, run)
  progress(`ours, run ${run}/${RUNS}: ${(result.wallMs / 1000).toFixed(1)} s, exit ${result.exit}`)
  if (result.report === null) progress(`  ! no report; the command's last lines:\n${result.stderrTail.replace(/^/gm, '    ')}`)
  runs.push(result)
}
const silentOurs = silent.connections()
// Someone may rebuild dist/ (or edit src/) while the bench runs: runs on different code need not agree.
const codeChanged = new Set(runs.map((run) => run.codeStamp)).size > 1
if (codeChanged) progress(`  ! ${relative(REPO, cli.codeDir)}/ changed between runs: ${runs.map((run) => `run ${run.run} on ${new Date(run.codeStamp).toISOString()}`).join(', ')}`)

// Penthouse: the stalled pages last, since a timed-out call may hold a page of its kept-warm browser until penthouse's own 30 s timeout.
const peer = new Map<string, PeerResult>()
let penthouse: PenthouseRunner | undefined
const server = await serveStatic(siteRoot)
try {
  penthouse = await createPenthouse(executablePath, chromiumFlags())
  const first = pages[0]!.file
  await within(penthouse.runWarm(`${server.origin}/${first}`, penthouseInput(siteRoot, first, `${server.origin}/${first}`), PEER_VIEWPORT), PENTHOUSE_TIMEOUT_MS).catch(() => null)
  for (const page of pages) {
    const url = `${server.origin}/${page.file}`
    const result = await runPenthouse(penthouse, url, penthouseInput(siteRoot, page.file, url))
    peer.set(page.file, result)
    progress(`penthouse ${page.file}: ${result.ms === null ? result.status : `${result.ms.toFixed(0)} ms`}`)
  }
} catch (error) {
  progress(`  ! penthouse did not run: ${error instanceof Error ? error.message : String(error)}`)
} finally {
  await penthouse?.close().catch(() => {})
  await server.close()
}
const silentPeer = silent.connections() - silentOurs
await silent.close()
rmSync(siteRoot, { recursive: true, force: true })

// ─── report ───────────────────────────────────────────────────────────────────────────

const seconds = (ms: number): string => (ms / 1000).toFixed(1)
const pageOf = (run: Run, file: string): ReportPage | undefined => run.report?.pages.find((page) => page.file === file)
const count = (run: Run, outcome: ReportPage['outcome']): number => run.report?.pages.filter((page) => page.outcome === outcome).length ?? 0
const slowest = (run: Run): ReportPage | undefined => [...(run.report?.pages ?? [])].sort((a, b) => b.ms - a.ms)[0]
/** What the report says beside the outcome: hosts the render went on without, stylesheets left blocking or unread. */
function notes(page: ReportPage): string {
  const parts: string[] = []
  if (page.skippedHosts?.length) parts.push(`${page.skippedHosts.length} host${page.skippedHosts.length > 1 ? 's' : ''} skipped`)
  if (page.stillBlocking) parts.push(`${page.stillBlocking} left blocking`)
  if (page.unreadStylesheets?.length) parts.push(`${page.unreadStylesheets.length} unread`)
  return parts.join(', ')
}
const median = (values: number[]): number | null => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : null
}

console.log(
  `\nThird-party references offline: ${pages.length} pages (${TEMPLATE_PAGES} templates on CDNs and Google Fonts, 2 on a silent loopback host), ${RUNS} runs on fresh copies, --no-cache. ` +
    `Ours: ${cli.label}, embedded mode; penthouse ${penthouse?.version ?? '—'} kept warm, ${PENTHOUSE_TIMEOUT_MS / 1000} s per call; ${executablePath}; node ${process.version}, playwright-core ${installedVersion('playwright-core')}`,
)
if (cli.warning) console.log(`Note: ${cli.warning}`)
if (codeChanged) console.log(`Note: ${relative(REPO, cli.codeDir)}/ changed between runs (newest file: ${runs.map((run) => `run ${run.run} ${new Date(run.codeStamp).toISOString()}`).join(', ')}); differences between runs may come from that.`)

console.log(`\nOurs, per run (target: 0 failed, no page over ${SLOW_PAGE_MS / 1000} s)`)
console.table(
  runs.map((run) => {
    const slow = slowest(run)
    return {
      run: run.run,
      exit: run.exit,
      pages: run.report?.pages.length ?? '—',
      inlined: run.report ? count(run, 'inlined') : '—',
      unchanged: run.report ? count(run, 'unchanged') : '—',
      failed: run.report ? count(run, 'failed') : '—',
      'slowest page ms': slow ? `${slow.ms.toFixed(0)} (${slow.file})` : '—',
      'report s': run.report ? seconds(run.report.ms) : '—',
      'wall s': seconds(run.wallMs),
    }
  }),
)

// Byte identity: every page's hash in every run; a page is identical when all runs left the same bytes.
const files = [...new Set(runs.flatMap((run) => [...run.hashes.keys()]))].sort()
const differing = files.filter((file) => new Set(runs.map((run) => run.hashes.get(file) ?? 'missing')).size > 1)
console.log(`\nOutput across the ${RUNS} runs (target: byte-identical): ${files.length - differing.length}/${files.length} .html files identical`)
if (differing.length) {
  console.table(
    differing.map((file) => ({
      page: file,
      ...Object.fromEntries(runs.map((run) => [`run ${run.run}`, `${pageOf(run, file)?.outcome ?? '—'} ${pageOf(run, file)?.cssBytes ?? '—'} B ${(run.hashes.get(file) ?? 'missing').slice(0, 8)}`])),
    })),
  )
}

console.log(`\nPer page: ours (the report's time per run: both viewports, from the page's request to its answer) beside penthouse kept warm (${PEER_VIEWPORT.width}×${PEER_VIEWPORT.height} only)`)
console.table(
  pages.map((page) => {
    const ours = runs.map((run) => pageOf(run, page.file))
    const outcomes = [...new Set(ours.map((one) => one?.outcome ?? '—'))]
    const oursMedian = median(ours.flatMap((one) => (one ? [one.ms] : [])))
    const theirs = peer.get(page.file)
    return {
      page: page.file,
      references: page.refs,
      'ours ms': ours.map((one) => (one ? one.ms.toFixed(0) : '—')).join(' / '),
      'ours outcome': outcomes.join(' / '),
      'ours CSS B': ours[0]?.cssBytes ?? '—',
      'ours notes (run 1)': (ours[0] && notes(ours[0])) || '—',
      'penthouse ms': theirs ? (theirs.ms === null ? theirs.status : theirs.ms.toFixed(0)) : '—',
      'penthouse CSS B': theirs?.cssBytes ?? '—',
      'penthouse ÷ ours': theirs?.ms != null && oursMedian ? (theirs.ms / oursMedian).toFixed(2) : '—',
    }
  }),
)

// Why pages failed or were left: one line per page and distinct message.
const messages = new Map<string, Set<number>>()
for (const run of runs) {
  for (const page of run.report?.pages ?? []) {
    if (page.outcome === 'inlined') continue
    const key = `${page.file}: ${page.outcome}: ${page.message ?? 'no message'}`
    messages.set(key, (messages.get(key) ?? new Set()).add(run.run))
  }
}
if (messages.size) {
  console.log('\nPages not inlined, and why')
  for (const [line, which] of messages) console.log(`  ${line} (run${which.size > 1 ? 's' : ''} ${[...which].join(', ')})`)
}

// Hosts the render went on without, as the report names them (newer reports only): host and reason, with how many pages of run 1.
const skipped = new Map<string, number>()
for (const page of runs[0]?.report?.pages ?? []) {
  for (const { host, reason } of page.skippedHosts ?? []) skipped.set(`${host}: ${reason}`, (skipped.get(`${host}: ${reason}`) ?? 0) + 1)
}
if (skipped.size) {
  console.log('\nHosts the render went on without (run 1), by pages')
  for (const [line, pagesCount] of [...skipped].sort((a, b) => b[1] - a[1])) console.log(`  ${line} (${pagesCount})`)
}

const stalled = pages.filter((page) => page.layout === 'stalled')
const allPages = runs.flatMap((run) => run.report?.pages ?? [])
const slowestOverall = [...allPages].sort((a, b) => b.ms - a.ms)[0]
const reported = runs.filter((run) => run.report !== null).length
const mark = (ok: boolean): string => (ok ? '✓' : '✗')
const failedPages = allPages.filter((page) => page.outcome === 'failed')
const stalledInlined = runs.flatMap((run) => stalled.map((page) => pageOf(run, page.file))).filter((page) => page?.outcome === 'inlined').length
const fast = allPages.filter((page) => page.ms <= SLOW_PAGE_MS).length
const expected = pages.length * RUNS
console.log('\nTargets')
console.table([
  { target: '0 failed pages, every run', result: `${mark(reported === RUNS && failedPages.length === 0)} ${failedPages.length} failed of ${allPages.length}`, 'worst case': failedPages[0] ? `${failedPages[0].file}: ${failedPages[0].message}` : reported < RUNS ? `${RUNS - reported} run(s) without a report` : '—' },
  { target: 'byte-identical output across runs', result: `${mark(differing.length === 0 && files.length > 0)} ${files.length - differing.length}/${files.length}`, 'worst case': differing.join(', ') || '—' },
  { target: 'stalled pages inlined, every run', result: `${mark(stalledInlined === stalled.length * RUNS)} ${stalledInlined}/${stalled.length * RUNS}`, 'worst case': stalled.map((page) => `${page.file}: ${runs.map((run) => pageOf(run, page.file)?.outcome ?? '—').join('/')}`).join('; ') },
  { target: `no page over ${SLOW_PAGE_MS / 1000} s`, result: `${mark(allPages.length === expected && fast === expected)} ${fast}/${expected}`, 'worst case': slowestOverall ? `${slowestOverall.file}: ${slowestOverall.ms.toFixed(0)} ms` : '—' },
])

const peerResults = [...peer.values()]
const peerDone = peerResults.filter((result) => result.ms !== null)
console.log(
  `Penthouse, for reference: ${peerDone.length}/${pages.length} pages, ${peerResults.filter((result) => result.status === 'timed out').length} timed out, ` +
    `median ${median(peerDone.map((result) => result.ms!))?.toFixed(0) ?? '—'} ms per page; ours median ${median(allPages.map((page) => page.ms))?.toFixed(0) ?? '—'} ms per page. ` +
    `Connections the silent host took: ${silentOurs} during our ${RUNS} runs, ${silentPeer} during penthouse's.`,
)
console.log(`\nRun took ${((performance.now() - started) / 1000).toFixed(0)} s.`)
// A penthouse call that timed out keeps its own 30 s timer, which would hold the process open after the figures.
process.exit(0)
