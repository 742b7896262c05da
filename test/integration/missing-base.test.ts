/**
 * Issue 32: a missing or wrong base is found, not suffered. A site built to be served below
 * a path (Hugo for `https://user.github.io/fieldnotes/`: every page links
 * `/fieldnotes/css/main.css`) processed without `--base` used to give every page "no
 * above-the-fold CSS" and exit 0, `--strict` too. Through the real command, in embedded mode
 * (real Chromium): the base is inferred and said, or named in the `--strict` error; a wrong
 * `--base` and a sheet no base serves fail their pages with the missing paths named; a sheet
 * missing beside others is rendered without, its link left blocking.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processDirectory } from '../../src/index.ts'
import { LOADER_FILE } from '../../src/html/loader.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { createChromiumEngine } from '../../src/engine/chromium.ts'
import { withoutBrowser } from '../fixtures/browser.ts'
import { runCli } from '../fixtures/cli.ts'
import { startFakeService, type FakeService } from '../fixtures/fake-service.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { serveFiles } from '../fixtures/static-server.ts'
import { tree, writeTree } from '../fixtures/folders.ts'
import { CRITICAL } from '../fixtures/html.ts'

const temps: string[] = []

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A project with `files` in `dist/` (path → content), and a package.json so the cache stays inside. */
async function project(files: Record<string, string>): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-missing-base-'))
  temps.push(root)
  const dist = join(root, 'dist')
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  await writeTree(dist, files)
  return { root, dist }
}


function quiet(): BuildLogger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, info: () => {}, warn: (message) => warnings.push(message) }
}

const link = (href: string): string => `<link rel="stylesheet" href="${href}">\n`

/** Hugo's output for a site at `https://user.github.io/fieldnotes/`: root-absolute links below the site's path, files at the folder's root. */
const FIELDNOTES = {
  'index.html': page('Fieldnotes', link('/fieldnotes/css/main.css')),
  'posts/first-light/index.html': page('First light', link('/fieldnotes/css/main.css')),
  'posts/index.html': page('Posts', link('/fieldnotes/css/main.css')),
  'about/index.html': page('About', link('/fieldnotes/css/main.css')),
  'css/main.css': SITE_CSS,
}

/** A site served from its root. */
const ROOT_SITE = {
  'index.html': page('Home', link('/style.css')),
  'pricing/index.html': page('Pricing', link('/style.css')),
  'style.css': SITE_CSS,
}

describe('a site built for a sub-path, processed without --base', () => {
  it('the base is inferred from the links and said once; the pages are inlined and load the loader below it', async () => {
    const { root, dist } = await project(FIELDNOTES)
    const built = await tree(dist)
    const run = await runCli(root, ['dist', '--cache-dir', '.ucc'])
    expect(run.code, run.stderr).toBe(0)
    const said = run.stderr.split('\n').filter((line) => line.includes('--base /fieldnotes/'))
    expect(said).toEqual(['warning: critical CSS: the pages link their stylesheets below /fieldnotes/ (4 of 4 pages); processed as `--base /fieldnotes/`; pass it to say so.'])
    expect(run.stderr).toMatch(/4 pages · 4 inlined/)
    const after = await tree(dist)
    for (const file of Object.keys(FIELDNOTES).filter((name) => name.endsWith('.html'))) {
      const html = after.get(file)!
      expect(CRITICAL.exec(html)?.[1], file).toContain('.hero{')
      // Written at the folder's root, which the deployed site serves below /fieldnotes/.
      expect(html, file).toContain(`src="/fieldnotes/${LOADER_FILE}"`)
    }
    expect(after.has(LOADER_FILE)).toBe(true)
    expect(after.get('css/main.css')).toBe(built.get('css/main.css'))

    // Said with the flag, it is the same run without the warning: the results made at that base come from the cache.
    for (const [file, text] of built) await writeFile(join(dist, file), text)
    const told = await runCli(root, ['dist', '--cache-dir', '.ucc', '--base', '/fieldnotes/'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(told.code, told.stderr).toBe(0)
    expect(told.stderr).not.toContain('warning')
    expect(told.stderr).toMatch(/4 pages · 4 inlined · 4 from cache/)
    expect(await tree(dist)).toEqual(after)
  }, 120_000)

  it('with --strict: exit 1 naming the base to pass, before anything renders; every file as it was', async () => {
    const { root, dist } = await project(FIELDNOTES)
    const before = await tree(dist)
    const run = await runCli(root, ['dist', '--strict'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toContain('the pages link their stylesheets below /fieldnotes/ (4 of 4 pages)')
    expect(run.stderr).toContain('pass `--base /fieldnotes/`')
    expect(run.stderr).toContain('--strict')
    expect(await tree(dist)).toEqual(before)
  })
})

describe('a wrong base', () => {
  it('--base /docs/ on a site served from its root: every page fails naming the base that serves its sheets, without a browser; --strict exits 1', async () => {
    const { root, dist } = await project(ROOT_SITE)
    const before = await tree(dist)
    const run = await runCli(root, ['dist', '--base', '/docs/', '--no-cache'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(
      'warning: critical CSS: 2 of 2 pages left unchanged (/docs/, /docs/pricing/): `/style.css` is not in the build output (the build server answered 404); it resolves with `--base /`. Pass --strict to exit 1 instead.',
    )
    expect(await tree(dist)).toEqual(before)
    const strict = await runCli(root, ['dist', '--base', '/docs/', '--no-cache', '--strict'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(strict.code, strict.stderr).toBe(1)
    expect(strict.stderr).toMatch(/2 of 2 pages got no critical CSS, and --strict is on:\n {2}2 pages \(\/docs\/, \/docs\/pricing\/\): `\/style\.css` is not in the build output .*; it resolves with `--base \/`\./)
    expect(await tree(dist)).toEqual(before)
  })

  it('processDirectory says it in the options’ words, and reports each page’s message', async () => {
    const { root, dist } = await project(ROOT_SITE)
    const logger = quiet()
    const { report, written } = await withoutBrowser(() => processDirectory(dist, { base: '/docs/', cache: false }, { root, logger, env: {} }))
    expect(written).toEqual([])
    expect(report.pages.map((entry) => [entry.url, entry.outcome, entry.source])).toEqual([
      ['/docs/', 'failed', null],
      ['/docs/pricing/', 'failed', null],
    ])
    expect(report.pages[0]!.message).toBe("`/style.css` is not in the build output (the build server answered 404); it resolves with `base: '/'`")
    expect(logger.warnings).toHaveLength(1)
  })
})

describe('a stylesheet the build does not have', () => {
  it('the only sheet of a page, at no base: that page fails naming the path, the others are inlined; --strict exits 1 and writes nothing', async () => {
    const { root, dist } = await project({ ...ROOT_SITE, 'themed.html': page('Themed', link('/theme/site.css')) })
    const before = await tree(dist)
    const strict = await runCli(root, ['dist', '--no-cache', '--strict'])
    expect(strict.code, strict.stderr).toBe(1)
    expect(strict.stderr).toContain('1 page (/themed.html): `/theme/site.css` is not in the build output (the build server answered 404), and no --base serves it')
    expect(await tree(dist)).toEqual(before)

    const run = await runCli(root, ['dist', '--no-cache', '--json'])
    expect(run.code, run.stderr).toBe(0)
    // No base serves every page: none is inferred.
    expect(run.stderr).not.toContain('processed as')
    const report = JSON.parse(run.stdout) as { pages: { file: string; outcome: string; message: string | null }[] }
    expect(report.pages.map((entry) => [entry.file, entry.outcome])).toEqual([
      ['index.html', 'inlined'],
      ['pricing/index.html', 'inlined'],
      ['themed.html', 'failed'],
    ])
    expect(report.pages[2]!.message).toContain('`/theme/site.css` is not in the build output')
    expect((await tree(dist)).get('themed.html')).toBe(before.get('themed.html'))
  }, 120_000)

  it('one of two sheets: the page is inlined from the other, the missing one stays blocking, and the log and the report name it', async () => {
    const { root, dist } = await project({ ...ROOT_SITE, 'index.html': page('Home', `${link('/style.css')}${link('/gone.css')}`) })
    const run = await runCli(root, ['dist', '--no-cache', '--json', '--pages', '/'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain('warning: critical CSS: 1 page (/): `/gone.css` is not in the build output (the build server answered 404); the critical CSS is made without it, and its link stays blocking.')
    const report = JSON.parse(run.stdout) as { pages: { outcome: string; stillBlocking: number; unreadStylesheets: string[] }[] }
    expect(report.pages).toEqual([expect.objectContaining({ outcome: 'inlined', stillBlocking: 1, unreadStylesheets: ['/gone.css'] })])
    const html = await readFile(join(dist, 'index.html'), 'utf8')
    expect(CRITICAL.exec(html)?.[1]).toContain('.hero{')
    expect(html).toContain(link('/gone.css'))
    expect(html).not.toContain(link('/style.css'))
  }, 120_000)
})

describe.skipIf(!findChromium())('the engine', () => {
  it('a stylesheet answered with an error is unread, whatever its content type: its link stays blocking, remote mode too', async () => {
    const site = await serveFiles({
      '/own.css': SITE_CSS,
      '/page.html': page('Home', ['/own.css', '/plain-404.css', '/css-404.css', '/css-500.css'].map(link).join('')),
      '/css-404.css': { body: '.hero{color:red}', type: 'text/css', status: 404 },
      '/css-500.css': { body: '.hero{color:blue}', type: 'text/css', status: 500 },
    })
    const engine = createChromiumEngine({ admit: async (host) => ({ addresses: [host] }) })
    try {
      const { css, network } = await engine.generate({ url: `${site.origin}/page.html`, viewports: [{ width: 1300, height: 900 }], signal: AbortSignal.timeout(60_000), deadline: Date.now() + 60_000 })
      expect(css).toContain('.hero{')
      expect(css).not.toMatch(/color:(red|blue)/)
      expect(network?.unreadStylesheets).toEqual(['/css-404.css', '/css-500.css', '/plain-404.css'].map((path) => `${site.origin}${path}`))
    } finally {
      await engine.close()
      await site.close()
    }
  }, 120_000)
})

describe('a site URL with a path', () => {
  let fake: FakeService
  const TOKEN = 'tok_missing_base_0123456789ab'
  beforeAll(async () => {
    fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour: () => ({ css: '.hero{color:#123}', instant: true }) })
  })
  afterAll(async () => {
    await fake.close()
  })

  it('is the base when none is given: remote mode asks for the pages where they are deployed, and they load the loader there', async () => {
    const { root, dist } = await project(FIELDNOTES)
    const env = { CRITICAL_CSS_BASE_URL: fake.url, CRITICAL_CSS_API_TOKEN: TOKEN }
    const run = await runCli(root, ['dist', '--site-url', 'https://site.example/fieldnotes/', '--no-cache', '--json'], env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).not.toContain('warning')
    const report = JSON.parse(run.stdout) as { pages: { url: string; outcome: string }[] }
    expect(report.pages.map((entry) => entry.url)).toEqual([
      'https://site.example/fieldnotes/about/',
      'https://site.example/fieldnotes/',
      'https://site.example/fieldnotes/posts/first-light/',
      'https://site.example/fieldnotes/posts/',
    ])
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toContain(`src="/fieldnotes/${LOADER_FILE}"`)
  })
})
