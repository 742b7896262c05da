/**
 * Every page of a site in each variant the bench loads: the page as built (`no plugin`),
 * with its stylesheets removed (`no CSS`: the script-timing baseline), our critical CSS
 * with each preload strategy, and beasties' output with its defaults. The critical CSS is
 * computed once per page, by the plugin's folder mode on a copy of the site (as users run
 * it: no browser flags), and shared by every strategy. Variant pages are written to an overlay folder per variant (only the
 * HTML, plus the loader script for `loader`); the server falls back to the built site.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import BeastiesExport from 'beasties'
import { Parser } from 'htmlparser2'
import { processDirectory } from '../../src/core/directory.ts'
import { buildFileFinder, directoryOutput } from '../../src/core/build-server.ts'
import { buildSheetTexts, lazySheetOf, wholeSheets } from '../../src/core/whole-sheets.ts'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import type { PreloadStrategy } from '../../src/html/strategies.ts'
import { LOADER_FILE, LOADER_SCRIPT } from '../../src/html/loader.ts'
import { criticalOnly, stylesheetsOf } from '../quality/html.ts'
import { FCP_DIR, type BenchSite } from './sites.ts'

export const STRATEGIES = ['loader', 'body', 'media', 'swap'] as const satisfies readonly PreloadStrategy[]
export const VARIANTS = ['no plugin', 'no CSS', ...STRATEGIES, 'beasties'] as const
export type Variant = (typeof VARIANTS)[number]

/** Where the `loader` variant's pages load the loader from: the site root, as a build would emit it. */
export const LOADER_SRC = `/${LOADER_FILE}`

export interface FirstScript {
  /** Root-relative path of the script file. */
  path: string
  kind: 'module' | 'classic'
}

export interface PreparedPage {
  site: BenchSite
  /** Root-relative path, e.g. `/pricing/index.html`. */
  page: string
  /** The page's first same-origin module script, else its first same-origin classic script. */
  firstScript: FirstScript | null
  /** Root-relative paths of the same-origin stylesheets the page as built links: what must be applied in the end. */
  sheets: string[]
  /** Our critical CSS for the page; null when the plugin gave it none. */
  criticalBytes: number | null
  beastiesBytes: number
  /** Strategies that left a head stylesheet blocking (the inliner's `stillBlocking`). */
  stillBlocking: Partial<Record<Variant, string[]>>
  /** The stylesheets the plugin puts inline whole on this page (its critical CSS is nearly all of them): the strategies defer nothing then. */
  inlinedWhole: string[]
  /** Same-origin stylesheet bytes the page as built links: with our CSS deferred, the critical part of them is sent twice. */
  sheetBytes: number
}

const slug = (variant: Variant): string => variant.replace(/\s+/g, '-').toLowerCase()

/** The overlay folder of one site and variant: its pages, and the loader for `loader`. */
export function overlayDir(site: BenchSite, variant: Variant): string {
  return join(FCP_DIR, site.name, 'variants', slug(variant))
}

// beasties' types describe a CommonJS default export; under ESM the import is the class itself.
const Beasties = ((BeastiesExport as unknown as { default?: unknown }).default ?? BeastiesExport) as unknown as typeof import('beasties').default

const CRITICAL_STYLE = /<style data-critical-css(?:\s[^>]*)?>([\s\S]*?)<\/style>/i

const quiet = { info: () => {}, warn: (message: string) => console.error(`  ! plugin: ${message}`) }

/**
 * Our critical CSS for every page of the site: the plugin's folder mode (embedded: its own
 * service and Chromium, no cache, `preload: 'none'` so only the style is added) on a copy,
 * then the text of the `<style data-critical-css>` it put into each page.
 */
export async function criticalCssOf(site: BenchSite): Promise<Map<string, string | null>> {
  const copy = join(FCP_DIR, site.name, 'critical')
  rmSync(copy, { recursive: true, force: true })
  cpSync(site.dir, copy, { recursive: true })
  // Pages left out of the bench (BENCH_PAGES) are left out of the run too.
  const wanted = new Set(site.pages)
  for (const file of readdirSync(copy, { recursive: true, encoding: 'utf8' })) {
    const path = `/${file.split(sep).join('/')}`
    if (/\.html?$/i.test(path) && !wanted.has(path)) rmSync(join(copy, file))
  }
  // env {}: a service configured in this shell would turn the run into remote mode. The
  // plugin as users run it: its browser meets this machine's network, and a CDN that does not
  // answer is cut once it holds a page (thirdParty: 'cut', the default).
  await processDirectory(copy, { preload: 'none', cache: false }, { logger: quiet, env: {} })
  const result = new Map<string, string | null>()
  for (const page of site.pages) {
    const match = CRITICAL_STYLE.exec(readFileSync(join(copy, page), 'utf8'))
    result.set(page, match?.[1] ?? null)
  }
  return result
}

const CLASSIC_TYPES = new Set(['', 'text/javascript', 'application/javascript', 'module'])

/** The first same-origin `<script type="module" src>`; if none, the first same-origin classic `<script src>`. */
export function firstScriptOf(html: string, page: string): FirstScript | null {
  const base = new URL(page, 'http://127.0.0.1/')
  const found: FirstScript[] = []
  new Parser(
    {
      onopentag(name, attributes) {
        if (name !== 'script' || attributes.src === undefined) return
        const type = (attributes.type ?? '').trim().toLowerCase()
        if (!CLASSIC_TYPES.has(type)) return
        if (type !== 'module' && attributes.nomodule !== undefined) return
        const url = new URL(attributes.src, base)
        if (url.origin !== base.origin) return
        found.push({ path: url.pathname, kind: type === 'module' ? 'module' : 'classic' })
      },
    },
    { lowerCaseTags: true, lowerCaseAttributeNames: true, decodeEntities: true },
  ).end(html)
  return found.find((script) => script.kind === 'module') ?? found[0] ?? null
}

function sameOriginSheets(html: string, page: string): string[] {
  const base = new URL(page, 'http://127.0.0.1/')
  return stylesheetsOf(html, base.href).flatMap((sheet) => {
    if (sheet.kind !== 'link') return []
    const url = new URL(sheet.href)
    return url.origin === base.origin ? [url.pathname] : []
  })
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

/** Writes every variant of every page of the site; returns what the bench needs to know of each page. */
export async function writeVariants(site: BenchSite, critical: Map<string, string | null>): Promise<PreparedPage[]> {
  for (const variant of VARIANTS) rmSync(overlayDir(site, variant), { recursive: true, force: true })
  write(join(overlayDir(site, 'loader'), LOADER_FILE), LOADER_SCRIPT)
  // One instance per site, as a build runs it (it caches stylesheets between pages); its own defaults.
  const beasties = new Beasties({ path: site.dir, publicPath: '/', logLevel: 'silent' })
  const prepared: PreparedPage[] = []
  const output = directoryOutput(site.dir)
  const find = buildSheetTexts(buildFileFinder(output, '/'))
  const lazy = lazySheetOf(output)
  for (const page of site.pages) {
    const original = readFileSync(join(site.dir, page), 'utf8')
    const css = critical.get(page) ?? null
    const stillBlocking: PreparedPage['stillBlocking'] = {}
    // What the plugin's run does (core/run.ts): the sheets whole where the critical CSS is nearly all of them.
    const whole = css ? await wholeSheets(original, new URL(page, 'http://127.0.0.1/').href, css, find, lazy, () => false) : null
    let inlinedWhole: string[] = []
    const html: Record<Variant, string> = {
      'no plugin': original,
      'no CSS': criticalOnly(original, ''),
      loader: original,
      body: original,
      media: original,
      swap: original,
      beasties: await beasties.process(original),
    }
    for (const strategy of STRATEGIES) {
      const result = inlineCriticalCss(original, css ?? '', { preload: strategy, loaderSrc: LOADER_SRC, ...(whole ? { wholeSheet: (href: string) => whole.get(href) ?? null } : {}) })
      inlinedWhole = result.inlinedWhole.map((sheet) => sheet.href)
      html[strategy] = result.html
      if (result.stillBlocking.length) stillBlocking[strategy] = result.stillBlocking
    }
    for (const variant of VARIANTS) write(join(overlayDir(site, variant), page), html[variant])
    const beastiesCss = [...html.beasties.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/gi)].map((match) => match[1]).join('')
    prepared.push({
      site,
      page,
      firstScript: firstScriptOf(original, page),
      sheets: sameOriginSheets(original, page),
      criticalBytes: css === null ? null : Buffer.byteLength(css),
      beastiesBytes: Buffer.byteLength(beastiesCss),
      stillBlocking,
      inlinedWhole,
      sheetBytes: sameOriginSheets(original, page).reduce((sum, path) => sum + statSync(join(site.dir, decodeURIComponent(path))).size, 0),
    })
  }
  return prepared
}
