/**
 * The plugin's behaviour as a user sees it, through real builds against the fake service:
 * which pages are asked for, the cache, the failure policy, the report, and where the
 * token never goes. The failure policy is checked with every bundler; the rest with Vite
 * (and webpack where its publicPath differs from Vite's base).
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../src/core/options.ts'
import { startFakeService, type FakeService, type JobBehaviour } from '../fixtures/fake-service.ts'
import { readStyles } from '../fixtures/html.ts'
import { BUNDLERS, SITE_PAGES, buildSite, createProject, removeProject, type BuildOutput, type Bundler } from '../fixtures/sites.ts'

const TOKEN = 'tok_plugin_0a1b2c3d4e5f6789'
const SITE = 'https://site.example'
const GENERATE = '/api/critical-css/generate'
/** Tokens whose monthly quota allows two generations, one per bundler's build; and one allowing one. */
const quotaToken = (bundler: Bundler): string => `tok_quota2_${bundler}_0123456789`
const QUOTA_ONE = 'tok_quota1_0123456789abcdef'

let fake: FakeService
let behave: (url: string) => JobBehaviour = () => ({ instant: true })
const projects: string[] = []
/** Everything any build printed or emitted: the last test checks the token is in none of it. */
const everything: string[] = []

beforeAll(async () => {
  const quotaTokens = Object.fromEntries(BUNDLERS.map((bundler) => [quotaToken(bundler), { plan: 'ent' as const, quota: 2 }]))
  fake = await startFakeService({
    tokens: { [TOKEN]: { plan: 'ent' }, [QUOTA_ONE]: { plan: 'ent', quota: 1 }, ...quotaTokens },
    behaviour: (url) => ({ css: `.hero{color:#123}/*${url}*/`, ...behave(url) }),
  })
})
afterEach(() => {
  behave = () => ({ instant: true })
})
afterAll(async () => {
  await fake.close()
  await Promise.all(projects.map(removeProject))
})

function remote(extra: Options = {}): Options {
  return { baseUrl: fake.url, token: TOKEN, siteUrl: SITE, cache: false, ...extra }
}

async function build(bundler: Bundler, setup: Parameters<typeof buildSite>[1] = {}): Promise<BuildOutput & { generates: string[] }> {
  const before = fake.requests.length
  const output = await buildSite(bundler, setup)
  if (!setup.root) projects.push(output.root)
  everything.push(...output.infos, ...output.warnings, output.error?.message ?? '', output.error?.stack ?? '')
  for (const bytes of output.files.values()) everything.push(bytes.toString('latin1'))
  const generates = fake.requests
    .slice(before)
    .filter((request) => request.path === GENERATE)
    .map((request) => (JSON.parse(request.body) as { url: string }).url)
  return { ...output, generates }
}

function html(output: BuildOutput, file: string): string {
  const bytes = output.files.get(file)
  if (!bytes) throw new Error(`${file} was not emitted; emitted: ${[...output.files.keys()].join(', ')}`)
  return bytes.toString('utf8')
}

describe.each(BUNDLERS)('failure policy with %s', (bundler) => {
  let reference: BuildOutput
  beforeAll(async () => {
    reference = await build(bundler, { withoutPlugin: true })
  }, 60_000)

  it('401 fails the build with one message naming CRITICAL_CSS_API_TOKEN, and writes no page', async () => {
    const output = await build(bundler, { plugin: remote({ token: 'tok_wrong_0000000000000' }) })
    expect(output.error?.message).toMatch(/rejected the API token \(401/)
    expect(output.error?.message).toContain('CRITICAL_CSS_API_TOKEN')
    for (const { file } of SITE_PAGES) {
      // Nothing emitted, or (esbuild writes before plugins end) the page as the bundler made it.
      const bytes = output.files.get(file)
      if (bytes) expect(bytes.equals(reference.files.get(file)!), file).toBe(true)
    }
  })

  it('a failed job on one page and 402 on another: one warning per cause, leaves both byte-identical, inlines the rest', async () => {
    // Pages go in file order, one in flight, on a quota of two: about.html's job fails,
    // index.html is inlined, pricing/index.html gets 402 plan_limit_reached.
    behave = (url) => (url.endsWith('/about.html') ? { statuses: ['failed'], failure: { code: 'render_failed', message: 'the page crashed' } } : { instant: true })
    const output = await build(bundler, { plugin: remote({ token: quotaToken(bundler), concurrency: 1 }) })
    expect(output.error).toBeNull()
    const failed = SITE_PAGES.filter(({ file }) => readStyles(html(output, file)).critical.length === 0)
    expect(failed.map(({ file }) => file)).toEqual(['pricing/index.html', 'about.html'])
    for (const { file } of failed) expect(output.files.get(file)!.equals(reference.files.get(file)!), file).toBe(true)
    const warnings = output.warnings.join('\n')
    expect(warnings).toMatch(/402 plan_limit_reached/)
    expect(warnings).toMatch(/render_failed|the page crashed/)
    expect(warnings).toMatch(/2 of 3 pages left unchanged/)
  }, 30_000)

  it('strict: fails the build after every page finished, naming the pages', async () => {
    behave = (url) => (url.endsWith('/about.html') ? { statuses: ['failed'], failure: { code: 'render_failed', message: 'the page crashed' } } : { instant: true })
    const output = await build(bundler, { plugin: remote({ strict: true }) })
    expect(output.error?.message).toMatch(/1 of 3 pages got no critical CSS, and `strict` is on/)
    expect(output.generates).toHaveLength(3)
    for (const { file } of SITE_PAGES) {
      const bytes = output.files.get(file)
      if (bytes) expect(bytes.equals(reference.files.get(file)!), file).toBe(true)
    }
  })
})

it('after a 402 the pages not yet sent fail at once, without a request each', async () => {
  const output = await build('vite', { plugin: remote({ token: QUOTA_ONE, concurrency: 1 }) })
  expect(output.error).toBeNull()
  expect(output.generates).toHaveLength(2)
  // One line for the cause, naming both pages.
  expect(output.warnings.filter((line) => line.includes('402 plan_limit_reached'))).toEqual([expect.stringMatching(/2 of 3 pages left unchanged \(\/[^,)]*, \/[^,)]*\)/)])
})

describe('pages', () => {
  it('derives each file from its URL: / → index.html, /pricing/ → pricing/index.html, /about → about.html', async () => {
    const output = await build('vite', { plugin: remote({ pages: ['/', '/pricing/', '/about'] }) })
    expect(output.error).toBeNull()
    expect(output.generates.sort()).toEqual([`${SITE}/`, `${SITE}/about`, `${SITE}/pricing/`])
    expect(readStyles(html(output, 'about.html')).critical).toEqual([`.hero{color:#123}/*${SITE}/about*/`])
    expect(readStyles(html(output, 'pricing/index.html')).critical).toEqual([`.hero{color:#123}/*${SITE}/pricing/*/`])
  })

  it('takes { url, html } as given, and leaves pages not listed alone', async () => {
    const output = await build('vite', { plugin: remote({ pages: [{ url: 'https://other.example/p?x=1', html: 'pricing/index.html' }] }) })
    expect(output.generates).toEqual(['https://other.example/p?x=1'])
    expect(readStyles(html(output, 'pricing/index.html')).critical).toHaveLength(1)
    expect(readStyles(html(output, 'index.html')).critical).toHaveLength(0)
  })

  it('strips the base path: /app/pricing/ is pricing/index.html under base /app/', async () => {
    const output = await build('vite', { base: '/app/', plugin: remote({ pages: ['/app/pricing/'] }) })
    expect(output.error).toBeNull()
    expect(readStyles(html(output, 'pricing/index.html')).critical).toEqual([`.hero{color:#123}/*${SITE}/app/pricing/*/`])
  })

  it('without pages, serves every emitted HTML file below the publicPath (webpack)', async () => {
    const output = await build('webpack', { base: '/docs/', plugin: remote() })
    expect(output.generates.sort()).toEqual([`${SITE}/docs/`, `${SITE}/docs/about.html`, `${SITE}/docs/pricing/`])
  })

  it('a page whose HTML was not emitted fails the build naming both', async () => {
    const output = await build('vite', { plugin: remote({ pages: ['/', '/missing/'] }) })
    expect(output.error?.message).toContain(`page ${SITE}/missing/ would be "missing/index.html" or "missing/index.htm", which the build did not emit`)
    expect(output.generates).toEqual([])
  })

  it('a relative page without a site URL fails when the build starts, naming CRITICAL_CSS_SITE_URL', async () => {
    const output = await build('vite', { plugin: { baseUrl: fake.url, token: TOKEN, cache: false, pages: ['/'] } })
    expect(output.error?.message).toContain('CRITICAL_CSS_SITE_URL')
    expect(output.files.size).toBe(0)
  })
})

describe('when it runs', () => {
  it('not in an SSR build', async () => {
    const output = await build('vite', { ssr: true, plugin: remote() })
    expect(output.error).toBeNull()
    expect(output.generates).toEqual([])
  })

  it('not when `enabled: false`', async () => {
    const output = await build('webpack', { plugin: remote({ enabled: false }) })
    expect(output.error).toBeNull()
    expect(output.generates).toEqual([])
  })

  it('reads the service, token and site from the env vars', async () => {
    process.env.CRITICAL_CSS_BASE_URL = fake.url
    process.env.CRITICAL_CSS_API_TOKEN = TOKEN
    process.env.CRITICAL_CSS_SITE_URL = SITE
    try {
      const output = await build('vite', { plugin: { cache: false } })
      expect(output.error).toBeNull()
      expect(output.generates).toHaveLength(3)
    } finally {
      delete process.env.CRITICAL_CSS_BASE_URL
      delete process.env.CRITICAL_CSS_API_TOKEN
      delete process.env.CRITICAL_CSS_SITE_URL
    }
  })

  it('a service without a token fails when the build starts, naming CRITICAL_CSS_API_TOKEN', async () => {
    const output = await build('rollup', { plugin: { baseUrl: fake.url, siteUrl: SITE } })
    expect(output.error?.message).toContain('CRITICAL_CSS_API_TOKEN')
    expect(output.generates).toEqual([])
  })

  it('waits for pending jobs, and times a page out at `timeout` without holding up the others', async () => {
    behave = (url) => (url.endsWith('/about.html') ? { durationMs: 60_000 } : { durationMs: 1500 })
    const output = await build('vite', { plugin: remote({ timeout: 4000 }) })
    expect(output.error).toBeNull()
    expect(readStyles(html(output, 'about.html')).critical).toHaveLength(0)
    expect(readStyles(html(output, 'index.html')).critical).toHaveLength(1)
    expect(output.warnings.join('\n')).toMatch(/left unchanged \(\/about\.html\)/)
    // The other two are seen done at the first check, 2 s in: a progress line says so.
    expect(output.infos.join('\n')).toMatch(/critical CSS: [12]\/3 pages ready, [12] pending/)
  }, 20_000)

  it('esbuild: edits only the HTML this build emitted, never other files in the outdir', async () => {
    const esbuild = await import('esbuild')
    const criticalCss = (await import('../../src/esbuild.ts')).default
    const root = await createProject('esbuild')
    projects.push(root)
    const stale = '<!doctype html><link rel="stylesheet" href="/old.css"><p>old'
    await mkdir(join(root, 'out'), { recursive: true })
    await writeFile(join(root, 'out/stale.html'), stale)
    const before = fake.requests.length
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: ['pages/index.html'],
      outdir: 'out',
      outbase: 'pages',
      loader: { '.html': 'copy' },
      logLevel: 'silent',
      publicPath: '/assets/',
      plugins: [criticalCss(remote())],
    })
    const generates = fake.requests.slice(before).filter((request) => request.path === GENERATE)
    expect(generates.map((request) => (JSON.parse(request.body) as { url: string }).url)).toEqual([`${SITE}/`])
    expect(await readFile(join(root, 'out/stale.html'), 'utf8')).toBe(stale)
    expect(readStyles(await readFile(join(root, 'out/index.html'), 'utf8')).critical).toHaveLength(1)
  })

  it('not in a watch rebuild (Rollup watch mode)', async () => {
    const { watch } = await import('rollup')
    const criticalCss = (await import('../../src/rollup.ts')).default
    const before = fake.requests.length
    const watcher = watch({
      input: 'entry',
      plugins: [
        { name: 'entry', resolveId: (id) => (id === 'entry' ? id : null), load: (id) => (id === 'entry' ? 'export default 1' : null) },
        { name: 'page', generateBundle() { this.emitFile({ type: 'asset', fileName: 'index.html', source: '<link rel="stylesheet" href="/a.css">' }) } },
        criticalCss(remote()),
      ],
      output: { dir: join(projects[0] ?? '/tmp', 'watch-out'), format: 'es' },
      watch: { skipWrite: true },
    })
    try {
      await new Promise<void>((resolve, reject) => {
        watcher.on('event', (event) => {
          if (event.code === 'ERROR') reject(event.error)
          if (event.code === 'BUNDLE_END') void event.result.close()
          if (event.code === 'END') resolve()
        })
      })
    } finally {
      await watcher.close()
    }
    expect(fake.requests.length).toBe(before)
  })

  it('keeps at most `concurrency` pages in flight', async () => {
    behave = () => ({ durationMs: 300 })
    const before = fake.requests.length
    const output = await build('vite', { plugin: remote({ concurrency: 1 }) })
    expect(output.error).toBeNull()
    // One page at a time: a generate only after the previous page's CSS was read.
    const order = fake.requests.slice(before).filter((r) => r.path === GENERATE || /\/data$/.test(r.path)).map((r) => (r.path === GENERATE ? 'g' : 'd'))
    expect(order.join('')).toBe('gdgdgd')
  }, 20_000)
})

describe('cache', () => {
  it('a second identical build sends zero requests and emits the same HTML', async () => {
    const root = await createProject('vite')
    projects.push(root)
    const first = await build('vite', { root, plugin: remote({ cache: {} }) })
    const before = fake.requests.length
    const second = await build('vite', { root, plugin: remote({ cache: {} }) })
    expect(fake.requests.length).toBe(before)
    expect(second.infos.join('\n')).toContain('3 from cache')
    for (const { file } of SITE_PAGES) expect(html(second, file)).toBe(html(first, file))
    const entries = await readdir(join(root, 'node_modules/.cache/unplugin-critical-css'))
    // One result per page, beside what the jobs took and the keys the last build looked up.
    expect(entries.filter((name) => name.endsWith('.json') && !name.startsWith('job-times-') && !name.startsWith('last-build-'))).toHaveLength(3)
    expect(entries.filter((name) => name.startsWith('last-build-'))).toHaveLength(1)
    expect(entries.filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it('remembers how long the service’s jobs took: the next build looks at its jobs when those had finished', async () => {
    behave = () => ({ durationMs: 600 })
    const root = await createProject('vite')
    projects.push(root)
    const dir = join(root, 'node_modules/.cache/unplugin-critical-css')
    const checksAfterGenerates = (before: number): number => {
      const requests = fake.requests.slice(before)
      const lastGenerate = Math.max(...requests.filter((r) => r.path === GENERATE).map((r) => r.at))
      return Math.min(...requests.filter((r) => r.path !== GENERATE && r.at >= lastGenerate && !r.path.endsWith('/usage')).map((r) => r.at)) - lastGenerate
    }
    let before = fake.requests.length
    await build('vite', { root, plugin: remote({ cache: {} }) })
    // Knowing nothing of the service: the first look after 2 s.
    expect(checksAfterGenerates(before)).toBeGreaterThanOrEqual(1900)
    const memory = (await readdir(dir)).filter((name) => name.startsWith('job-times-'))
    expect(memory).toHaveLength(1)
    expect(await readFile(join(dir, memory[0]!), 'utf8')).not.toContain(TOKEN)
    // The results go; what the jobs took stays.
    for (const name of await readdir(dir)) if (!name.startsWith('job-times-')) await rm(join(dir, name))
    before = fake.requests.length
    const second = await build('vite', { root, plugin: remote({ cache: {} }) })
    expect(second.error).toBeNull()
    expect(checksAfterGenerates(before)).toBeLessThan(1500)
  }, 20_000)

  it('a cold build reads the plan while it bundles; a build with cache entries sends nothing before it knows a page misses', async () => {
    const root = await createProject('vite')
    projects.push(root)
    const usageRead = (from: number): boolean => fake.requests.slice(from).some((request) => request.path === '/api/critical-css/usage')
    let before = fake.requests.length
    let seen = false
    // The bundling waits for the usage read before it fails: only one begun as the build began is there.
    const cold = await build('vite', {
      root,
      plugin: remote({ cache: {} }),
      failBundling: async () => {
        for (const end = Date.now() + 10_000; !seen && Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 20))) seen = usageRead(before)
      },
    })
    expect(cold.error?.message).toMatch(/this build fails while it bundles/)
    expect(seen).toBe(true)
    expect(cold.generates).toEqual([])

    expect((await build('vite', { root, plugin: remote({ cache: {} }) })).error).toBeNull()
    before = fake.requests.length
    let sentWhileBundling = -1
    const warm = await build('vite', {
      root,
      plugin: remote({ cache: {} }),
      failBundling: async () => {
        await new Promise((resolve) => setTimeout(resolve, 500))
        sentWhileBundling = fake.requests.length - before
      },
    })
    expect(warm.error?.message).toMatch(/this build fails while it bundles/)
    expect(sentWhileBundling).toBe(0)
  }, 30_000)

  it('a retried usage read of a cold build is in the build’s log, though it was sent before the run began', async () => {
    fake.fault({ path: '/api/critical-css/usage', status: 503, headers: { 'retry-after': '0' } })
    const output = await build('vite', { plugin: remote() })
    expect(output.error).toBeNull()
    expect(output.infos.join('\n')).toMatch(/critical CSS: GET \/api\/critical-css\/usage answered 503; retry 1 in/)
  })

  it('a corrupt entry is a miss, not an error; other viewports are other entries', async () => {
    const root = await createProject('vite')
    projects.push(root)
    const dir = join(root, '.cc')
    await build('vite', { root, plugin: remote({ cache: { dir } }) })
    const [victim] = await readdir(dir)
    await writeFile(join(dir, victim!), '{"format":1,"key":')
    const repaired = await build('vite', { root, plugin: remote({ cache: { dir } }) })
    expect(repaired.error).toBeNull()
    expect(repaired.generates).toHaveLength(1)
    const otherViewports = await build('vite', { root, plugin: remote({ cache: { dir }, viewports: [{ width: 800, height: 600 }] }) })
    expect(otherViewports.generates).toHaveLength(3)
  })

  it('an entry older than ttl is asked for again', async () => {
    const root = await createProject('vite')
    projects.push(root)
    await build('vite', { root, plugin: remote({ cache: { ttl: 1 } }) })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const again = await build('vite', { root, plugin: remote({ cache: { ttl: 1 } }) })
    expect(again.generates).toHaveLength(3)
  })
})

describe('report', () => {
  it('writes the JSON report outside the output: pages, sources, bytes, outcomes', async () => {
    const root = await createProject('vite')
    projects.push(root)
    behave = (url) => (url.endsWith('/about.html') ? { statuses: ['failed'], failure: { code: 'render_failed', message: 'the page crashed' } } : { instant: true })
    // Relative to Vite's root, which is the site's pages/ folder here.
    const output = await build('vite', { root, plugin: remote({ report: '../reports/critical.json', concurrency: 1 }) })
    const text = await readFile(join(root, 'reports/critical.json'), 'utf8')
    everything.push(text)
    const report = JSON.parse(text) as { service: string; pages: { url: string; file: string; source: string; cssBytes: number; outcome: string }[] }
    expect(report.service).toBe(fake.url)
    expect(report.pages.map((page) => page.outcome).sort()).toEqual(['failed', 'inlined', 'inlined'])
    const inlined = report.pages.find((page) => page.outcome === 'inlined')!
    expect(inlined.cssBytes).toBe(Buffer.byteLength(readStyles(html(output, inlined.file)).critical[0]!))
    expect(output.infos.join('\n')).toMatch(/page\s+source\s+engine\s+CSS\s+time\s+outcome/)
  })
})

it('the token appears in no log line, error, emitted file or report of any build above', () => {
  expect(everything.length).toBeGreaterThan(100)
  expect(everything.filter((text) => text.includes(TOKEN))).toEqual([])
})
