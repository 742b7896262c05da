/**
 * One real build per bundler against the fake service: every page gets its own critical
 * CSS and the chosen way of loading the full stylesheet, a compression plugin after ours
 * compresses the final HTML, and the token appears nowhere. Versions this ran with are
 * printed by the first test (see the closing note of the plugin issue).
 */
import { gunzipSync } from 'node:zlib'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PRELOAD, type PreloadStrategy } from '../../src/html/strategies.ts'
import { LOADER_FILE, LOADER_SCRIPT } from '../../src/html/loader.ts'
import { startFakeService, type FakeService } from '../fixtures/fake-service.ts'
import { readStyles } from '../fixtures/html.ts'
import { BUNDLERS, SITE_PAGES, buildSite, removeProject, type Bundler, type BuildOutput } from '../fixtures/sites.ts'

const TOKEN = 'tok_bundlers_5e4d3c2b1a09'
const SITE = 'https://site.example'

/** Vite runs the default (`loader`); the others cover every file-emitting adapter path and the other strategies. */
const STRATEGY: Record<Bundler, PreloadStrategy> = {
  vite: DEFAULT_PRELOAD,
  webpack: 'loader',
  rspack: 'swap',
  rollup: 'loader',
  rolldown: 'media',
  esbuild: 'loader',
}
const COMPRESSES: ReadonlySet<Bundler> = new Set(['vite', 'webpack', 'rspack'])

let fake: FakeService
beforeAll(async () => {
  fake = await startFakeService({
    tokens: { [TOKEN]: { plan: 'ent' } },
    behaviour: (url) => ({ instant: true, css: `.hero{color:#123}/*${url}*/` }),
  })
})
afterAll(async () => {
  await fake.close()
})

it('runs with the bundler versions docs/options.md says it was checked with', () => {
  const readme = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8')
  const names = ['vite', 'vite-plugin-compression2', 'webpack', 'html-webpack-plugin', 'compression-webpack-plugin', '@rspack/core', 'rollup', '@rollup/plugin-html', 'rolldown', 'esbuild']
  const versions = names.map(
    (name) => `${name} ${(JSON.parse(readFileSync(new URL(`../../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as { version: string }).version}`,
  )
  console.info(`bundlers: ${versions.join(', ')}`)
  // A bump that the table of where it runs does not name fails here, so the table stays true (the README links it).
  expect(versions.filter((entry) => !readme.includes(entry))).toEqual([])
})

function expectStrategy(html: string, strategy: PreloadStrategy, file: string): void {
  const styles = readStyles(html)
  const sheets = styles.links.filter((link) => link.rel === 'stylesheet' || link.as === 'style')
  expect(sheets.length, file).toBeGreaterThan(0)
  const inHead = sheets.filter((link) => link.in === 'head')
  switch (strategy) {
    case 'loader':
      // Still the stylesheets, held at print until the loader gives their media back: no handler.
      expect(inHead.every((link) => link.rel === 'stylesheet' && link.media === 'print' && link.onload === null), file).toBe(true)
      expect(styles.noscripts).toBe(inHead.length)
      break
    case 'body':
      expect(inHead.every((link) => link.rel === 'preload' && link.as === 'style'), file).toBe(true)
      expect(sheets.filter((link) => link.in === 'body' && link.rel === 'stylesheet').map((l) => l.href)).toEqual(inHead.map((l) => l.href))
      break
    case 'media':
      expect(inHead.every((link) => link.rel === 'stylesheet' && link.media === 'print' && link.onload !== null), file).toBe(true)
      expect(styles.noscripts).toBe(inHead.length)
      break
    case 'swap':
      expect(inHead.every((link) => link.rel === 'preload' && link.onload?.includes('stylesheet')), file).toBe(true)
      expect(styles.noscripts).toBe(inHead.length)
      break
    case 'none':
      expect(inHead.every((link) => link.rel === 'stylesheet' && link.media === null), file).toBe(true)
      break
  }
}

describe.each(BUNDLERS)('%s', (bundler) => {
  let build: BuildOutput
  let generates: string[]
  beforeAll(async () => {
    const before = fake.requests.length
    build = await buildSite(bundler, {
      compress: COMPRESSES.has(bundler),
      // The default strategy is left unsaid, as a user would.
      plugin: { baseUrl: fake.url, token: TOKEN, siteUrl: SITE, ...(STRATEGY[bundler] === DEFAULT_PRELOAD ? {} : { preload: STRATEGY[bundler] }), cache: false },
    })
    generates = fake.requests
      .slice(before)
      .filter((request) => request.path === '/api/critical-css/generate')
      .map((request) => (JSON.parse(request.body) as { url: string }).url)
  }, 60_000)
  afterAll(async () => {
    await removeProject(build.root)
  })

  it('builds without error or warning', () => {
    expect(build.error).toBeNull()
    expect(build.warnings.filter((w) => /critical/i.test(w))).toEqual([])
  })

  it('asks for every emitted page once, at its URL', () => {
    expect(generates.sort()).toEqual(SITE_PAGES.map(({ path }) => `${SITE}${path}`).sort())
  })

  it(`inlines each page's own CSS and loads the stylesheet with '${STRATEGY[bundler]}'`, () => {
    for (const { file, path } of SITE_PAGES) {
      const html = build.files.get(file)?.toString('utf8')
      expect(html, file).toBeDefined()
      expect(readStyles(html!).critical, file).toEqual([`.hero{color:#123}/*${SITE}${path}*/`])
      expectStrategy(html!, STRATEGY[bundler], file)
    }
  })

  it.runIf(STRATEGY[bundler] === 'loader')('emits the loader script once, where every page finds it', () => {
    expect(build.files.get(LOADER_FILE)?.toString('utf8')).toBe(LOADER_SCRIPT)
    for (const { file, path } of SITE_PAGES) {
      const sources = [...build.files.get(file)!.toString('utf8').matchAll(/<script src="([^"]+)" async><\/script>/g)].map((match) => match[1]!)
      expect(sources, file).toHaveLength(1)
      expect(new URL(sources[0]!, `${SITE}${path}`).pathname, file).toBe(`/${LOADER_FILE}`)
    }
  })

  it.runIf(STRATEGY[bundler] !== 'loader')('emits no loader script when the strategy needs none', () => {
    expect([...build.files.keys()].filter((name) => name.includes('critical-css-loader'))).toEqual([])
  })

  it.runIf(COMPRESSES.has(bundler))('compresses the HTML after it was inlined', () => {
    for (const { file } of SITE_PAGES) {
      const gz = build.files.get(`${file}.gz`)
      expect(gz, `${file}.gz`).toBeDefined()
      expect(gunzipSync(gz!).equals(build.files.get(file)!), `${file}.gz`).toBe(true)
    }
  })

  it('logs a summary through the bundler and never the token', () => {
    if (bundler !== 'esbuild') expect(build.infos.some((line) => line.includes('critical CSS: 3 pages · 3 inlined'))).toBe(true)
    for (const [file, bytes] of build.files) expect(bytes.includes(TOKEN), file).toBe(false)
    expect([...build.infos, ...build.warnings].join('\n')).not.toContain(TOKEN)
  })
})
