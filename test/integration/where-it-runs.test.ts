/**
 * Builds where users build: with no browser anywhere (PATH holding only Node's folder, no
 * CHROME_PATH, an empty HOME and empty browser caches), with a browser only in Playwright's
 * cache, with a browser on PATH that does not start, and with `@sparticuz/chromium` the only
 * browser a project has. Each build runs in a process of its own, with that environment.
 */
import { spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { readFileSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import type { BuildReport } from '../../src/core/report.ts'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { CLI, TSX } from '../fixtures/cli.ts'
import { tree } from '../fixtures/folders.ts'
import { readStyles } from '../fixtures/html.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'

const SITE_BUILD = fileURLToPath(new URL('../fixtures/site-build.ts', import.meta.url))
const SPARTICUZ_PROJECT = fileURLToPath(new URL('../frameworks/sparticuz/', import.meta.url))
const CHROMIUM = findChromium()
const temps: string[] = []

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `ucc-${prefix}-`))
  temps.push(dir)
  return dir
}

/** A folder with only Node in it: the PATH of a host with no browser (Node's own folder may be /usr/bin, beside a chromium). */
let nodeOnly: Promise<string> | null = null
function nodeDir(): Promise<string> {
  nodeOnly ??= temp('node').then(async (dir) => {
    await symlink(process.execPath, join(dir, 'node'))
    return dir
  })
  return nodeOnly
}

/** An environment with no browser to be found: only Node on PATH, an empty HOME, empty browser caches. */
async function bare(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const home = await temp('home')
  await mkdir(join(home, 'tmp'))
  return { PATH: await nodeDir(), HOME: home, PLAYWRIGHT_BROWSERS_PATH: join(home, 'playwright'), PUPPETEER_CACHE_DIR: join(home, 'puppeteer'), TMPDIR: join(home, 'tmp'), ...extra }
}

function run(command: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd, env })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A built folder of one page, in a project of its own. */
async function project(): Promise<{ root: string; dist: string }> {
  const root = await temp('where')
  const dist = join(root, 'dist')
  await mkdir(dist)
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  await writeFile(join(dist, 'index.html'), page('Home', '<link rel="stylesheet" href="/style.css">\n'))
  // Rules the page never uses, enough that its critical CSS is far from the whole sheet (which would be inlined whole).
  const unused = Array.from({ length: 40 }, (_, index) => `.unused-${index}{color:red;margin:${index}px}`).join('\n')
  await writeFile(join(dist, 'style.css'), `${SITE_CSS}${unused}\n`)
  return { root, dist }
}

function folderCommand(root: string, args: readonly string[], env: Record<string, string>) {
  return run(process.execPath, ['--import', TSX, CLI, 'dist', '--no-cache', '--json', ...args], root, env)
}

const engines = (stdout: string): (string | null)[] => (JSON.parse(stdout) as BuildReport).pages.map((entry) => entry.engine)
const fallbacks = (stderr: string): string[] => stderr.split('\n').filter((line) => line.includes('no Chrome or Chromium was found'))
/** The line that names what renders. */
const renderingLine = (stderr: string): string => stderr.split('\n').find((line) => /rendering \d+ pages? (in|with)/.test(line)) ?? ''

describe('with no browser anywhere', () => {
  it('the folder command builds with the static engine and says so once; --strict and --engine chromium fail and write nothing', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    const env = await bare()
    const strict = await folderCommand(root, ['--strict'], env)
    expect(strict.code).toBe(1)
    expect(strict.stderr).toContain('--strict is on, and no Chrome or Chromium was found')
    const chromium = await folderCommand(root, ['--engine', 'chromium'], env)
    expect(chromium.code).toBe(1)
    expect(chromium.stderr).toContain('No Chrome or Chromium found. Install one (Debian/Ubuntu: `apt-get install -y chromium`')
    expect(await tree(dist)).toEqual(before)

    const built = await folderCommand(root, [], env)
    expect(built.code, built.stderr).toBe(0)
    expect(renderingLine(built.stderr)).toContain('rendering 1 page with the static engine')
    expect(fallbacks(built.stderr)).toHaveLength(1)
    expect(fallbacks(built.stderr)[0]).toMatch(/every rule its elements use, not only the first screen's.*To render in a browser (on|in)/)
    expect(engines(built.stdout)).toEqual(['static'])
    const [critical] = readStyles(await readFile(join(dist, 'index.html'), 'utf8')).critical
    expect(critical).toContain('.hero{')
    // Below the fold too: no layout, so every rule the page's elements use.
    expect(critical).toContain('.below{')
    expect(critical).not.toContain('.unused-')
  }, 120_000)

  it('a page its scripts build is left as it was and named, beside a page the static engine inlines', async () => {
    const { root, dist } = await project()
    const app = '<!doctype html>\n<html><head><link rel="stylesheet" href="/style.css"></head><body><div id="app"></div><script type="module" src="/app.js"></script></body></html>\n'
    await writeFile(join(dist, 'app.html'), app)
    await writeFile(join(dist, 'app.js'), "document.querySelector('#app').innerHTML = '<h1 class=hero>Hi</h1>'\n")
    const built = await folderCommand(root, [], await bare())
    expect(built.code, built.stderr).toBe(0)
    const report = JSON.parse(built.stdout) as BuildReport
    const byFile = (name: string) => report.pages.find((entry) => entry.file.endsWith(name))!
    expect([byFile('index.html').outcome, byFile('index.html').engine]).toEqual(['inlined', 'static'])
    const failed = byFile('app.html')
    expect(failed.outcome).toBe('failed')
    expect(failed.message).toContain('its content is rendered by script')
    expect(built.stderr).toContain('its content is rendered by script')
    expect(await readFile(join(dist, 'app.html'), 'utf8')).toBe(app)
    expect(readStyles(await readFile(join(dist, 'index.html'), 'utf8')).critical[0]).toContain('.hero{')
  }, 120_000)

  it('a Vite build succeeds with the static engine and one warning; strict fails it', async () => {
    const env = await bare()
    const build = async (plugin: object) => {
      const result = await run(process.execPath, ['--import', TSX, SITE_BUILD, 'vite', JSON.stringify(plugin)], process.cwd(), env)
      expect(result.code, result.stderr).toBe(0)
      return JSON.parse(result.stdout.trim().split('\n').pop()!) as { error: string | null; warnings: string[]; html: Record<string, string>; report: BuildReport | null }
    }
    const built = await build({ cache: false })
    expect(built.error).toBeNull()
    expect(built.warnings.filter((line) => line.includes('no Chrome or Chromium was found'))).toHaveLength(1)
    expect(built.report?.pages.map((entry) => [entry.outcome, entry.engine])).toEqual([
      ['inlined', 'static'],
      ['inlined', 'static'],
      ['inlined', 'static'],
    ])
    // The site's one small sheet is all used: it goes inline whole, and no link is left to block.
    expect(built.report?.pages.every((entry) => entry.inlinedWhole.length === 1)).toBe(true)
    expect(readStyles(built.html['index.html']!).links.filter((link) => link.rel === 'stylesheet')).toEqual([])
    const strict = await build({ cache: false, strict: true })
    expect(strict.error).toContain('`strict` is on, and no Chrome or Chromium was found')
    expect(Object.keys(strict.html)).toEqual([])
  }, 180_000)
})

describe.skipIf(CHROMIUM === null)('finding the browser the user has', () => {
  it('uses the Chromium in Playwright’s cache, laid out as playwright-core expects, and names it first', async () => {
    const { root, dist } = await project()
    const env = await bare()
    const { browsers } = JSON.parse(readFileSync(fileURLToPath(new URL('../../node_modules/playwright-core/browsers.json', import.meta.url)), 'utf8')) as { browsers: { name: string; revision: string }[] }
    const revision = browsers.find((browser) => browser.name === 'chromium')!.revision
    const executable = join(env.PLAYWRIGHT_BROWSERS_PATH!, `chromium-${revision}`, 'chrome-linux64', 'chrome')
    await mkdir(dirname(executable), { recursive: true })
    await symlink(realpathSync(CHROMIUM!), executable)
    const built = await folderCommand(root, [], env)
    expect(built.code, built.stderr).toBe(0)
    expect(renderingLine(built.stderr)).toMatch(new RegExp(`rendering 1 page in Chromium \\d+ \\(${executable.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, Playwright’s cache\\)`))
    expect(engines(built.stdout)).toEqual(['chromium'])
    expect(fallbacks(built.stderr)).toEqual([])
    const [critical] = readStyles(await readFile(join(dist, 'index.html'), 'utf8')).critical
    // The fold: the browser keeps the first screen's rules only.
    expect(critical).toContain('.hero{')
    expect(critical).not.toContain('.below{')
  }, 120_000)

  it('a browser that is found but does not start is said in one line, and the next one renders', async () => {
    const { root } = await project()
    const broken = await temp('broken')
    await writeFile(join(broken, 'chromium'), '#!/bin/sh\necho "chromium: error while loading shared libraries: libnss3.so: cannot open shared object file: No such file or directory" >&2\nexit 127\n')
    await chmod(join(broken, 'chromium'), 0o755)
    const working = await temp('working')
    await symlink(realpathSync(CHROMIUM!), join(working, 'google-chrome'))
    const built = await folderCommand(root, [], await bare({ PATH: [broken, working, await nodeDir()].join(':') }))
    expect(built.code, built.stderr).toBe(0)
    const said = built.stderr.split('\n').filter((line) => line.includes(join(broken, 'chromium')))
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(/was found but did not start \(.*libnss3\.so/)
    expect(renderingLine(built.stderr)).toMatch(new RegExp(`in Chromium \\d+ \\(${join(working, 'google-chrome')}\\)`))
    expect(engines(built.stdout)).toEqual(['chromium'])
  }, 120_000)

  it('a result the static engine made never answers a build that renders in a browser', async () => {
    const { root, dist } = await project()
    const cacheDir = join(root, '.cache')
    const original = await readFile(join(dist, 'index.html'), 'utf8')
    const withCache = ['--cache-dir', cacheDir]
    const args = (extra: string[]) => ['--import', TSX, CLI, 'dist', '--json', ...withCache, ...extra]
    const staticRun = await run(process.execPath, args([]), root, await bare())
    expect(staticRun.code, staticRun.stderr).toBe(0)
    expect(engines(staticRun.stdout)).toEqual(['static'])
    await writeFile(join(dist, 'index.html'), original)
    const working = await temp('cached')
    await symlink(realpathSync(CHROMIUM!), join(working, 'chromium'))
    const browserRun = await run(process.execPath, args([]), root, await bare({ PATH: [working, await nodeDir()].join(':') }))
    expect(browserRun.code, browserRun.stderr).toBe(0)
    const [entry] = (JSON.parse(browserRun.stdout) as BuildReport).pages
    expect([entry!.engine, entry!.source]).toEqual(['chromium', 'embedded'])
    expect(readStyles(await readFile(join(dist, 'index.html'), 'utf8')).critical[0]).not.toContain('.below{')
  }, 180_000)

  it('renders in @sparticuz/chromium when the project has it and no other browser is visible', async () => {
    const { dist } = await project()
    const env = await bare()
    const bin = join(SPARTICUZ_PROJECT, 'node_modules', '.bin', 'critical-css')
    const built = await run(bin, [dist, '--no-cache', '--json'], SPARTICUZ_PROJECT, env)
    expect(built.code, built.stderr).toBe(0)
    expect(renderingLine(built.stderr)).toMatch(/in Chromium \d+ \(.*chromium, @sparticuz\/chromium\)/)
    expect(engines(built.stdout)).toEqual(['chromium'])
    expect(readStyles(await readFile(join(dist, 'index.html'), 'utf8')).critical[0]).toContain('.hero{')
  }, 180_000)
})
