/**
 * The named peers: beasties (a devDependency; static, viewport-less) and penthouse
 * (installed at bench time into the bench cache, not as a devDependency: its puppeteer's
 * install script downloads a browser, which would break `npm ci` offline). Penthouse runs
 * on the system Chromium through its `puppeteer.getBrowser` option.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import BeastiesExport from 'beasties'
import type { Viewport } from '../../src/contract/api-contract.ts'
import { CACHE_DIR } from './corpus.ts'
import { styleContents } from './html.ts'

export const PENTHOUSE_VERSION = '2.3.3'
const PEERS_DIR = join(CACHE_DIR, 'peers')

export interface Timed {
  css: string
  ms: number
}

// beasties' types describe a CommonJS default export; under ESM the import is the class itself.
const Beasties = ((BeastiesExport as unknown as { default?: unknown }).default ?? BeastiesExport) as unknown as typeof import('beasties').default

/** The installed version of one of the repo's own dependencies (not every package exports its package.json). */
export function installedVersion(name: string): string {
  const manifest = fileURLToPath(new URL(`../../node_modules/${name}/package.json`, import.meta.url))
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

export interface BeastiesRunner {
  /** beasties' critical CSS for the page: the text of the `<style>`s in its output. */
  run(html: string): Promise<Timed>
}

/** One instance per site (it caches stylesheets between pages), default options. */
export function createBeasties(siteDir: string): BeastiesRunner {
  const beasties = new Beasties({ path: siteDir, publicPath: '/', logLevel: 'silent' })
  return {
    async run(html) {
      const started = performance.now()
      const out = await beasties.process(html)
      const ms = performance.now() - started
      return { css: styleContents(out).join('\n'), ms }
    },
  }
}

// ─── penthouse ────────────────────────────────────────────────────────────────────────

/** The puppeteer 2 browser penthouse drives: only what the bench touches. */
interface PuppeteerBrowser {
  version(): Promise<string>
  close(): Promise<void>
}

interface PenthouseOptions {
  url: string
  cssString: string
  width: number
  height: number
  puppeteer: { getBrowser: () => PuppeteerBrowser | Promise<PuppeteerBrowser> }
  unstableKeepBrowserAlive?: boolean
  timeout?: number
}

type Penthouse = (options: PenthouseOptions) => Promise<string>

interface Puppeteer {
  launch(options: { executablePath: string; args: string[]; headless: boolean }): Promise<PuppeteerBrowser>
}

export interface PenthouseRunner {
  version: string
  puppeteerVersion: string
  /**
   * Penthouse's own life cycle, as the issue measured it: `getBrowser` launches the system
   * Chromium for the call and penthouse closes it when the call ends.
   */
  run(url: string, cssString: string, viewport: Viewport): Promise<Timed>
  /**
   * Penthouse kept warm with its `unstableKeepBrowserAlive` option: one browser for every
   * call, and penthouse navigates the page it kept to the next URL (no new renderer, no
   * isolation between calls).
   */
  runWarm(url: string, cssString: string, viewport: Viewport): Promise<Timed>
  close(): Promise<void>
}

/** `npm install` into the bench cache (no browser download), unless that version is there. */
function installPenthouse(): void {
  const manifest = join(PEERS_DIR, 'node_modules', 'penthouse', 'package.json')
  if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version === PENTHOUSE_VERSION) return
  console.error(`Installing penthouse@${PENTHOUSE_VERSION} into ${PEERS_DIR} (no browser download) …`)
  execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', PEERS_DIR, `penthouse@${PENTHOUSE_VERSION}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1', PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: '1' },
  })
}

/**
 * Penthouse keeps its browser and pages in module state; each way of running it gets its
 * own copy of the module, so the warm one's kept pages never serve the other's calls.
 */
function loadPenthouse(require: NodeJS.Require): Penthouse {
  for (const path of Object.keys(require.cache)) if (path.includes(join('node_modules', 'penthouse'))) delete require.cache[path]
  return require('penthouse') as Penthouse
}

/**
 * Penthouse, installed at bench time, on the system Chromium with the bench's flags, run
 * two ways: as the issue measured it (a browser per call, penthouse's default life cycle)
 * and kept warm (its unstable keep-alive options, the fastest it goes).
 */
export async function createPenthouse(executablePath: string, args: string[]): Promise<PenthouseRunner> {
  installPenthouse()
  const require = createRequire(join(PEERS_DIR, 'node_modules', '.bench.cjs'))
  const penthouse = loadPenthouse(require)
  const penthouseWarm = loadPenthouse(require)
  const puppeteer = require('puppeteer') as Puppeteer
  const version = (require('penthouse/package.json') as { version: string }).version
  const puppeteerVersion = (require('puppeteer/package.json') as { version: string }).version
  const launch = (): Promise<PuppeteerBrowser> => puppeteer.launch({ executablePath, args, headless: true })
  const warmBrowser = await launch()
  return {
    version,
    puppeteerVersion,
    async run(url, cssString, { width, height }) {
      const started = performance.now()
      const css = await penthouse({ url, cssString, width, height, puppeteer: { getBrowser: launch } })
      return { css, ms: performance.now() - started }
    },
    async runWarm(url, cssString, { width, height }) {
      const started = performance.now()
      const css = await penthouseWarm({ url, cssString, width, height, puppeteer: { getBrowser: () => warmBrowser }, unstableKeepBrowserAlive: true })
      return { css, ms: performance.now() - started }
    },
    close: () => warmBrowser.close(),
  }
}
