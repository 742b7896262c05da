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
import type { Viewport } from '../../src/api/contract.ts'
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
  run(url: string, cssString: string, viewport: Viewport): Promise<Timed>
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
 * Penthouse on one warm browser, launched by the puppeteer penthouse installed, with the
 * bench's flags. `unstableKeepBrowserAlive` keeps penthouse from closing that browser
 * after each call (it otherwise closes whatever `getBrowser` gave it): penthouse gets a
 * warm browser, as our engine does.
 */
export async function createPenthouse(executablePath: string, args: string[]): Promise<PenthouseRunner> {
  installPenthouse()
  const require = createRequire(join(PEERS_DIR, 'node_modules', '.bench.cjs'))
  const penthouse = require('penthouse') as Penthouse
  const puppeteer = require('puppeteer') as Puppeteer
  const version = (require('penthouse/package.json') as { version: string }).version
  const puppeteerVersion = (require('puppeteer/package.json') as { version: string }).version
  const browser = await puppeteer.launch({ executablePath, args, headless: true })
  return {
    version,
    puppeteerVersion,
    async run(url, cssString, { width, height }) {
      const started = performance.now()
      const css = await penthouse({ url, cssString, width, height, puppeteer: { getBrowser: () => browser }, unstableKeepBrowserAlive: true })
      return { css, ms: performance.now() - started }
    },
    close: () => browser.close(),
  }
}
