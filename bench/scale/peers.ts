/**
 * The peers on the same site, through the runners bench:quality already has
 * (bench/quality/peers.ts): beasties over every page, penthouse over a sample.
 *
 * beasties reads a stylesheet from `path` + the link's href, and refuses one outside `path`:
 * MkDocs links every page below the root relatively (`../../css/base.css`), so on all but
 * the top-level pages beasties finds no stylesheet and does nothing. It is run twice: as
 * the folder is (what a user gets), and on the same pages with their stylesheet links made
 * root-relative in memory, so that its time per page is the time of doing the work.
 *
 * Penthouse (bench:quality's install, kept warm: its fastest, as bench:third-party runs
 * it) on `sample` pages spread evenly over the site, served from loopback, both of our
 * viewports per page (ours renders both), the page's own stylesheets as its input (as
 * `critical` hands them over; the cdnjs one cannot be fetched offline). Extrapolated to
 * the whole site from the mean per page.
 */
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join, posix } from 'node:path'
import { chromium } from 'playwright-core'
import { DEFAULT_VIEWPORTS } from '../../src/contract/api-contract.ts'
import { chromiumFlags } from '../../src/engine/flags.ts'
import { serveStatic } from '../quality/corpus.ts'
import { rebaseUrls, stylesheetsOf } from '../quality/html.ts'
import { watchTree } from '../embedded/tree.ts'
import { createBeasties, createPenthouse, installedVersion } from '../quality/peers.ts'

/** A call that takes longer is given up (penthouse waits for `load`). */
const PENTHOUSE_TIMEOUT_MS = 10_000
/** A stylesheet link's href, for making it root-relative: the generated pages write `<link href="…" rel="stylesheet">`. */
const LINK_HREF = /(<link\b[^>]*?\bhref=")([^"]+)("[^>]*>)/g
const ABSOLUTE = /^(?:[a-z][a-z0-9+.-]*:|\/)/i

export interface BeastiesPass {
  version: string
  wallMs: number
  /** Pages whose output has a `<style>` beasties added (its critical CSS). */
  inlined: number
  pages: number
}

/** beasties over every page, one instance (it keeps stylesheets between pages); `rootRelative` rewrites the links first. */
export async function runBeasties(siteDir: string, files: readonly string[], rootRelative: boolean): Promise<BeastiesPass> {
  const beasties = createBeasties(siteDir)
  let inlined = 0
  let wallMs = 0
  for (const file of files) {
    const html = readFileSync(join(siteDir, file), 'utf8')
    const input = rootRelative ? rootRelativeLinks(html, file) : html
    // Timed around beasties alone, as createBeasties does: reading the file is not its work.
    const { css, ms } = await beasties.run(input)
    wallMs += ms
    if (css.trim()) inlined += 1
  }
  return { version: installedVersion('beasties'), wallMs, inlined, pages: files.length }
}

/** The page with every relative `<link href>` resolved against its own path, from the site's root. */
export function rootRelativeLinks(html: string, file: string): string {
  const dir = posix.dirname(`/${file}`)
  return html.replace(LINK_HREF, (whole, before: string, href: string, after: string) => (ABSOLUTE.test(href) ? whole : `${before}${posix.join(dir, href)}${after}`))
}

export interface PenthouseSample {
  version: string
  pages: number
  /** Calls that finished, of pages × viewports. */
  done: number
  calls: number
  /** Mean time per page (both viewports), ms, over pages whose calls all finished. */
  perPageMs: number | null
  wallMs: number
}

/** `count` pages spread evenly over `files`. */
export function sampleOf(files: readonly string[], count: number): string[] {
  if (files.length <= count) return [...files]
  return Array.from({ length: count }, (_, i) => files[Math.floor((i * files.length) / count)]!)
}

export async function runPenthouse(siteDir: string, files: readonly string[], executablePath: string, log: (message: string) => void): Promise<PenthouseSample> {
  const server = await serveStatic(siteDir)
  const penthouse = await createPenthouse(executablePath, chromiumFlags())
  const input = (file: string): { url: string; css: string } => {
    const url = `${server.origin}/${file}`
    const css = stylesheetsOf(readFileSync(join(siteDir, file), 'utf8'), url)
      .flatMap((sheet) => {
        if (sheet.kind === 'style') return [rebaseUrls(sheet.css, url)]
        const href = new URL(sheet.href)
        if (href.origin !== server.origin) return []
        return [rebaseUrls(readFileSync(join(siteDir, decodeURIComponent(href.pathname)), 'utf8'), sheet.href)]
      })
      .join('\n')
    return { url, css }
  }
  const began = performance.now()
  let done = 0
  const perPage: number[] = []
  try {
    // One throw-away call: the kept-warm browser's first page.
    const first = input(files[0]!)
    await within(penthouse.runWarm(first.url, first.css, DEFAULT_VIEWPORTS[0]!), PENTHOUSE_TIMEOUT_MS)
    for (const [index, file] of files.entries()) {
      const { url, css } = input(file)
      let pageMs = 0
      let complete = true
      for (const viewport of DEFAULT_VIEWPORTS) {
        const result = await within(penthouse.runWarm(url, css, viewport), PENTHOUSE_TIMEOUT_MS).catch(() => null)
        if (result === null) complete = false
        else {
          done += 1
          pageMs += result.ms
        }
      }
      if (complete) perPage.push(pageMs)
      if ((index + 1) % 10 === 0 || index + 1 === files.length) log(`penthouse: ${index + 1}/${files.length} pages`)
    }
  } finally {
    await penthouse.close().catch(() => {})
    await server.close()
  }
  const perPageMs = perPage.length ? perPage.reduce((sum, ms) => sum + ms, 0) / perPage.length : null
  return { version: penthouse.version, pages: files.length, done, calls: files.length * DEFAULT_VIEWPORTS.length, perPageMs, wallMs: performance.now() - began }
}

export interface FloorSample {
  pages: number
  /** Pages loaded and read at both viewports. */
  done: number
  wallMs: number
  /** CPU time of this process (Playwright, the static server) and of the browser's whole tree, over the run, ms. */
  cpuMs: number
  workers: number
}

/**
 * The floor under any tool that measures a page in a browser: bare Playwright, with the
 * flags ours launches with, one page per core reused for every load (no context per page,
 * nothing cleared), each page loaded once at the first viewport and resized to the second,
 * every element's box read at both (what finding the first screen needs at the least),
 * and no CSS work at all. The network is the one ours gets: the pages' other hosts (cdnjs)
 * are asked as they are (on this offline machine the name does not resolve). Wall time over
 * `files`, the workers sharing them.
 */
export async function runBarePlaywright(siteDir: string, files: readonly string[], executablePath: string): Promise<FloorSample> {
  const ownBefore = process.cpuUsage()
  const tree = watchTree(process.pid, 200)
  const server = await serveStatic(siteDir)
  const browser = await chromium.launch({ executablePath, args: chromiumFlags() })
  const workers = Math.max(1, cpus().length)
  let next = 0
  let done = 0
  const began = performance.now()
  try {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        const page = await browser.newPage({ viewport: DEFAULT_VIEWPORTS[0]! })
        while (next < files.length) {
          const file = files[next++]!
          await page.setViewportSize(DEFAULT_VIEWPORTS[0]!)
          const loaded = await page.goto(`${server.origin}/${file}`, { waitUntil: 'load', timeout: PENTHOUSE_TIMEOUT_MS }).catch(() => null)
          if (!loaded) continue
          let read = true
          for (const [index, viewport] of DEFAULT_VIEWPORTS.entries()) {
            if (index > 0) await page.setViewportSize(viewport)
            const boxes = await page
              .evaluate(async () => {
                await document.fonts.ready
                let shown = 0
                for (const element of Array.from(document.querySelectorAll('*'))) if (element.getBoundingClientRect().top < innerHeight) shown += 1
                return shown
              })
              .catch(() => 0)
            if (boxes === 0) read = false
          }
          if (read) done += 1
        }
        await page.close()
      }),
    )
  } finally {
    await browser.close().catch(() => {})
    await server.close()
  }
  const wallMs = performance.now() - began
  // The tree's count holds this process's CPU from its start: what it spent before the floor's run is not the floor's.
  const before = (ownBefore.user + ownBefore.system) / 1000
  return { pages: files.length, done, wallMs, cpuMs: tree.stop().cpuMs - before, workers }
}

/** Resolves to null when `promise` does not settle within `ms`; the late result is dropped. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  promise.catch(() => {})
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<null>((done) => (timer = setTimeout(() => done(null), ms)))
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
