/**
 * Embedded mode as a user meets it: no service configured, real builds with every
 * bundler, the pages rendered in the system Chromium by the in-process reference service.
 * What is checked is the emitted HTML, the report and the build's error.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { liveTree } from '../../bench/embedded/tree.ts'
import type { BuildReport } from '../../src/core/report.ts'
import { withoutBrowser } from '../fixtures/browser.ts'
import { readStyles } from '../fixtures/html.ts'
import { BUNDLERS, SITE_PAGES, buildSite, createProject, removeProject, type BuildOutput, type BuildSetup, type Bundler } from '../fixtures/sites.ts'
import { until } from '../fixtures/until.ts'

const projects = new Set<string>()
afterAll(async () => {
  await Promise.all([...projects].map(removeProject))
})

/** A build in `setup.root` or a new project, its JSON report in the project's root. */
async function build(bundler: Bundler, setup: BuildSetup = {}): Promise<BuildOutput> {
  const root = setup.root ?? (await createProject(bundler))
  projects.add(root)
  return buildSite(bundler, { ...setup, root, plugin: { report: join(root, 'report.json'), ...setup.plugin } })
}

function criticalCss(output: BuildOutput, file: string): string[] {
  const bytes = output.files.get(file)
  if (!bytes) throw new Error(`${file} was not emitted; emitted: ${[...output.files.keys()].join(', ')}`)
  return readStyles(bytes.toString('utf8')).critical
}

/** Processes below `pid` whose command line names Chrome or Chromium (the process tree as bench:embedded reads it). */
function browsersBelow(pid: number): number[] {
  return liveTree(pid).filter((child) => {
    if (child === pid) return false
    try {
      return /chrom/i.test(readFileSync(`/proc/${child}/cmdline`, 'utf8'))
    } catch {
      return false
    }
  })
}

/** Whether a Chrome or Chromium process showed below this one while `work` ran (looked at every 25 ms). */
async function browserSeenDuring(work: () => Promise<unknown>): Promise<boolean> {
  let seen = false
  let working = true
  const watching = (async () => {
    while (working) {
      if (browsersBelow(process.pid).length > 0) seen = true
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })()
  try {
    await work()
  } finally {
    working = false
    await watching
  }
  return seen
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function report(output: BuildOutput): Promise<BuildReport> {
  return JSON.parse(await readFile(join(output.root, 'report.json'), 'utf8')) as BuildReport
}

describe.each(BUNDLERS)('embedded mode with %s', (bundler) => {
  it('renders every page of the fresh build in Chromium and inlines what is above the fold', async () => {
    const output = await build(bundler, { plugin: { cache: false } })
    expect(output.error).toBeNull()
    for (const { file } of SITE_PAGES) {
      const [css, ...more] = criticalCss(output, file)
      expect(more).toEqual([])
      // The 100vh hero fills the first viewport; the grid and the footer come after it.
      expect(css).toMatch(/\.hero\{[^}]*min-height:100vh/)
      expect(css).toMatch(/body\{[^}]*margin:0/)
      expect(css).not.toContain('.grid')
      expect(css).not.toContain('.below')
    }
    const { service, pages } = await report(output)
    expect(service).toMatch(/embedded/)
    // Paths, not the build server's address: its port changes every build.
    expect(pages.map((page) => page.url).sort()).toEqual(SITE_PAGES.map(({ path }) => path).sort())
    expect(pages.every((page) => page.source === 'embedded' && page.outcome === 'inlined')).toBe(true)
  }, 60_000)
})

describe('embedded mode', () => {
  it.each(['vite', 'webpack'] as const)('honours %s base path when serving the build', async (bundler) => {
    const output = await build(bundler, { base: '/app/', plugin: { cache: false } })
    expect(output.error).toBeNull()
    for (const { file } of SITE_PAGES) expect(criticalCss(output, file)[0]).toMatch(/\.hero\{/)
  }, 60_000)

  it('serves a relative-base build where its pages are, whatever path the deployed site has', async () => {
    const output = await build('vite', {
      base: './',
      plugin: { cache: false, siteUrl: 'https://example.com/app/', pages: ['https://example.com/app/', 'about.html'] },
    })
    expect(output.error).toBeNull()
    const { pages } = await report(output)
    expect(pages.map((page) => [page.url, page.outcome])).toEqual([['/', 'inlined'], ['/about.html', 'inlined']])
  }, 60_000)

  it('caches by content: an unchanged page costs nothing, a changed page or stylesheet is rendered again', async () => {
    const first = await build('vite', { plugin: {} })
    expect(first.error).toBeNull()
    const root = first.root
    // Without a browser on the machine: a warm build must not need one.
    const again = await withoutBrowser(() => build('vite', { root, plugin: {} }))
    expect(again.error).toBeNull()
    expect((await report(again)).pages.map((page) => page.source)).toEqual(['cache', 'cache', 'cache'])
    for (const { file } of SITE_PAGES) expect(again.files.get(file)).toEqual(first.files.get(file))

    const about = join(root, 'pages', 'about.html')
    await writeFile(about, (await readFile(about, 'utf8')).replace('<h1>About</h1>', '<h1>About us</h1>'))
    const pageChanged = await build('vite', { root, plugin: {} })
    const sources = Object.fromEntries((await report(pageChanged)).pages.map((page) => [page.file, page.source]))
    expect(sources).toEqual({ 'about.html': 'embedded', 'index.html': 'cache', 'pricing/index.html': 'cache' })

    const style = join(root, 'src', 'style.css')
    await writeFile(style, `${await readFile(style, 'utf8')}.hero h1{letter-spacing:.1em}\n`)
    const cssChanged = await build('vite', { root, plugin: {} })
    expect((await report(cssChanged)).pages.map((page) => page.source)).toEqual(['embedded', 'embedded', 'embedded'])
    expect(criticalCss(cssChanged, 'index.html')[0]).toContain('letter-spacing:.1em')
  }, 120_000)

  it.each(['vite', 'webpack'] as const)('without a browser, %s fails with the install hint and writes no page', async (bundler) => {
    const output = await withoutBrowser(() => build(bundler, { plugin: { cache: false } }))
    expect(output.error?.message).toMatch(/apt-get install -y chromium/)
    // The way out without a browser is a service: named by the options this user has not set, no env var of remote mode.
    expect(output.error?.message).toMatch(/`baseUrl` and `token` options/)
    expect(output.error?.message).not.toMatch(/CRITICAL_CSS_/)
    expect([...output.files.keys()].filter((file) => file.endsWith('.html'))).toEqual([])
  }, 60_000)

  it('a build that fails leaves no browser behind', async () => {
    const output = await build('vite', { plugin: { cache: false, strict: true, timeout: 1 } })
    expect(output.error?.message).toMatch(/3 of 3 pages got no critical CSS, and `strict` is on/)
    expect(await until(() => browsersBelow(process.pid).length === 0, 5000)).toBe(true)
  }, 60_000)

  it('a cold build starts its browser while it bundles, and one that fails then leaves no browser behind', async () => {
    // The bundling waits for a browser before it fails: only one started as the build began is there.
    let seen = false
    const output = await build('vite', { plugin: { cache: false }, failBundling: async () => void (seen = await until(() => browsersBelow(process.pid).length > 0, 20_000)) })
    expect(output.error?.message).toMatch(/this build fails while it bundles/)
    expect(seen).toBe(true)
    expect(await until(() => browsersBelow(process.pid).length === 0, 5000)).toBe(true)
  }, 60_000)

  it('a build with results in its cache starts no browser before it knows a page misses', async () => {
    const root = await createProject('vite')
    projects.add(root)
    expect((await build('vite', { root })).error).toBeNull()
    // The bundling waits a while for a browser that must not come, then fails.
    let seen = true
    const output = await build('vite', { root, failBundling: async () => void (seen = await until(() => browsersBelow(process.pid).length > 0, 2000)) })
    expect(output.error?.message).toMatch(/this build fails while it bundles/)
    expect(seen).toBe(false)
  }, 60_000)

  it('a build whose cache holds another build’s results, or lacks one of its own, starts its browser while it bundles', async () => {
    // Two projects with one cache (a monorepo's apps, the demo's two playgrounds).
    const shared = join(await createProject('vite'), 'shared-cache')
    const [first, second] = [await createProject('vite'), await createProject('vite')]
    for (const root of [shared, first, second]) projects.add(root)
    const cache = { dir: shared }
    expect((await build('vite', { root: first, plugin: { cache } })).error).toBeNull()
    const launchesWhileBundling = async (root: string, ms: number): Promise<boolean> => {
      expect(await until(() => browsersBelow(process.pid).length === 0, 5000)).toBe(true)
      let seen = false
      const output = await build('vite', { root, plugin: { cache }, failBundling: async () => void (seen = await until(() => browsersBelow(process.pid).length > 0, ms)) })
      expect(output.error?.message).toMatch(/this build fails while it bundles/)
      return seen
    }
    expect(await launchesWhileBundling(second, 20_000)).toBe(true)
    // The first project's own results are all kept: no browser before a page misses.
    expect(await launchesWhileBundling(first, 2000)).toBe(false)
    const last = (await readdir(shared)).find((file) => file.startsWith('last-build-') && readFileSync(join(shared, file), 'utf8').includes(first))!
    const [gone] = (JSON.parse(readFileSync(join(shared, last), 'utf8')) as { keys: string[] }).keys
    await rm(join(shared, `${gone}.json`))
    expect(await launchesWhileBundling(first, 20_000)).toBe(true)
    expect(await until(() => browsersBelow(process.pid).length === 0, 5000)).toBe(true)
  }, 120_000)

  it('a page with no stylesheet to defer, never kept in the cache, does not make the next build start a browser', async () => {
    const root = await createProject('vite')
    projects.add(root)
    await writeFile(join(root, 'pages/about.html'), '<!doctype html><html><head><title>About</title><style>h1{color:red}</style></head><body><h1>About</h1></body></html>\n')
    const cold = await build('vite', { root })
    expect((await report(cold)).pages.map((page) => page.message)).toContain('no render-blocking stylesheet link to defer')
    expect(await until(() => browsersBelow(process.pid).length === 0, 5000)).toBe(true)
    let seen = true
    const output = await build('vite', { root, failBundling: async () => void (seen = await until(() => browsersBelow(process.pid).length > 0, 2000)) })
    expect(output.error?.message).toMatch(/this build fails while it bundles/)
    expect(seen).toBe(false)
  }, 60_000)

  it('a Vite library build (build.lib, no HTML) starts no browser, creates no cache dir and hints at nothing', async () => {
    const root = await createProject('vite')
    projects.add(root)
    await writeFile(join(root, 'lib.js'), 'export const answer = 42\n')
    const { build: viteBuild } = await import('vite')
    const criticalCssPlugin = (await import('../../src/vite.ts')).default
    const messages: string[] = []
    const note = (message: string): void => void messages.push(message)
    const logger = { info: note, warn: note, warnOnce: note, error: note, clearScreen: () => {}, hasErrorLogged: () => false, hasWarned: false }
    const seen = await browserSeenDuring(() => viteBuild({ root, configFile: false, mode: 'production', customLogger: logger, build: { lib: { entry: join(root, 'lib.js'), formats: ['es'], fileName: 'lib' }, outDir: join(root, 'lib-dist') }, plugins: [criticalCssPlugin()] }))
    expect({ browser: seen, cacheDir: existsSync(join(root, 'node_modules/.cache/unplugin-critical-css')), hinted: messages.filter((m) => /critical CSS|critical-css/.test(m)) }).toEqual({ browser: false, cacheDir: false, hinted: [] })
    expect(readFileSync(join(root, 'lib-dist/lib.js'), 'utf8')).toContain('42')
  }, 60_000)

  it("Rolldown's [PLUGIN_TIMINGS] warning naming the plugin gets one line saying why, beside the warning", async () => {
    // Rolldown warns for a build of 3 s or more spent in plugins, naming those of 1 s or more: each page
    // waits 1.5 s for a loopback stylesheet (our generateBundle), and another plugin's renderStart 2 s.
    const slow = createServer((_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'text/css' }).end('.late{color:red}'), 1500).unref())
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    try {
      const root = await createProject('vite')
      projects.add(root)
      for (const { file } of SITE_PAGES) {
        const path = join(root, 'pages', file)
        await writeFile(path, (await readFile(path, 'utf8')).replace('</head>', `<link rel="stylesheet" href="http://127.0.0.1:${(slow.address() as AddressInfo).port}/late.css">\n</head>`))
      }
      const sleeper = { name: 'takes-two-seconds', renderStart: () => new Promise((resolve) => setTimeout(resolve, 2000)) }
      const output = await build('vite', { root, plugin: { cache: false, thirdParty: 'wait' }, vitePlugins: [sleeper] })
      expect(output.error).toBeNull()
      const warned = output.warnings.filter((line) => line.includes('PLUGIN_TIMINGS'))
      expect(warned).toEqual([expect.stringMatching(/plugin unplugin-critical-css generateBundle/)])
      const notes = output.infos.filter((line) => line.includes('[PLUGIN_TIMINGS]'))
      expect(notes).toEqual([expect.stringMatching(/^critical CSS: the \[PLUGIN_TIMINGS\] warning counts this plugin's generateBundle because rendering 3 pages in a browser took \d+\.\d s of it\. That is expected on a cold build/)])
    } finally {
      slow.closeAllConnections()
      slow.close()
    }
  }, 60_000)

  /** A library of `bundler` (its configuration names no page): built with the plugin, the Chromium processes seen meanwhile counted. */
  async function buildLibrary(bundler: Exclude<Bundler, 'vite'>, root: string): Promise<{ browser: boolean; warnings: string[] }> {
    const entry = join(root, 'lib.js')
    const outDir = join(root, 'lib-dist')
    await writeFile(entry, 'export const answer = 42\n')
    const warnings: string[] = []
    const seen = await browserSeenDuring(async () => {
      if (bundler === 'webpack' || bundler === 'rspack') {
        const plugin = (await import(bundler === 'webpack' ? '../../src/webpack.ts' : '../../src/rspack.ts')).default({ cache: false })
        const config = { mode: 'production', context: root, entry, output: { path: outDir, library: { name: 'lib', type: 'umd' } }, plugins: [plugin], infrastructureLogging: { level: 'none' } }
        const compiler = bundler === 'webpack' ? (await import('webpack')).default(config as never) : (await import('@rspack/core')).rspack(config as never)
        await new Promise<void>((resolve, reject) =>
          (compiler as unknown as { run(done: (error: Error | null, stats?: { toJson(o: object): { warnings?: { message: string }[] } }) => void): void }).run((error, stats) => {
            for (const warning of stats?.toJson({ all: false, warnings: true }).warnings ?? []) warnings.push(warning.message)
            if (error) reject(error)
            else resolve()
          }),
        )
        await new Promise<void>((resolve) => (compiler as unknown as { close(done: () => void): void }).close(resolve))
      } else if (bundler === 'esbuild') {
        const plugin = (await import('../../src/esbuild.ts')).default({ cache: false })
        const result = await (await import('esbuild')).build({ absWorkingDir: root, entryPoints: [entry], bundle: true, format: 'esm', outdir: outDir, logLevel: 'silent', plugins: [plugin] })
        warnings.push(...result.warnings.map((warning) => warning.text))
      } else {
        const plugin = (await import(bundler === 'rollup' ? '../../src/rollup.ts' : '../../src/rolldown.ts')).default({ cache: false })
        // Bundling waits up to 2 s for a browser: these bundlers are done too soon for one started at buildStart to show.
        const waits = { name: 'waits-for-a-browser', buildEnd: async () => void (await until(() => browsersBelow(process.pid).length > 0, 2000)) }
        const input = { input: entry, plugins: [waits, plugin], onLog: (level: string, log: { message: string }) => void (level === 'warn' && warnings.push(log.message)) }
        const bundle = bundler === 'rollup' ? await (await import('rollup')).rollup(input as never) : await (await import('rolldown')).rolldown(input as never)
        await bundle.write({ dir: outDir, format: 'es' })
        await bundle.close()
      }
    })
    return { browser: seen, warnings: warnings.filter((warning) => /critical CSS/.test(warning)) }
  }

  // The early start follows the configuration: no HTML entry or HTML plugin, no browser (before, every cold build launched one).
  it.each(['webpack', 'rspack', 'rollup', 'rolldown', 'esbuild'] as const)('a %s library build (no page in its configuration) starts no browser', async (bundler) => {
    const root = await createProject(bundler)
    projects.add(root)
    const { browser, warnings } = await buildLibrary(bundler, root)
    expect(browser).toBe(false)
    // webpack says it is a library (output.library): like Vite's build.lib, nothing to say. The others may have meant to emit pages: they are told none came.
    if (bundler === 'webpack' || bundler === 'rspack') expect(warnings).toEqual([])
    else expect(warnings.map((warning) => warning.replace(/^\[plugin [^\]]+\] /, ''))).toEqual([expect.stringMatching(/^critical CSS: the build's output has no HTML page/)])
  }, 60_000)

  // Before issue 30 only SIGINT did: Playwright's SIGTERM and SIGHUP handlers closed the browser, the engine relaunched it, and the build went on to exit 0.
  const interrupted = [['vite', 'SIGINT', 2], ['vite', 'SIGTERM', 15], ['vite', 'SIGHUP', 1], ['webpack', 'SIGTERM', 15]] as const
  for (const [bundler, signal, number] of interrupted) {
    it(`an interrupted ${bundler} build (${signal}) ends within 2 s by it, says so, and takes its browser down with it`, async () => {
      const script = fileURLToPath(new URL('../fixtures/embedded-build.ts', import.meta.url))
      const child = spawn(process.execPath, ['--import', 'tsx', script, bundler], { stdio: ['ignore', 'pipe', 'pipe'] })
      const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
      let seen = ''
      let said = ''
      child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()))
      // Mid-render: the browser asked the slow host for a page's stylesheet.
      expect(await until(() => /^asked$/m.test(seen), 30_000)).toBe(true)
      const browsers = browsersBelow(child.pid!)
      expect(browsers.length).toBeGreaterThan(0)
      const sent = performance.now()
      child.kill(signal)
      const code = await exited
      expect({ code, within2s: performance.now() - sent <= 2000 }).toEqual({ code: 128 + number, within2s: true })
      expect(said).toContain(`stopped by ${signal}`)
      expect(seen).not.toMatch(/^(built|error)/m)
      expect(await until(() => browsers.every((pid) => !alive(pid)), 5000)).toBe(true)
    }, 60_000)
  }
})
