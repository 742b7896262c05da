/**
 * A built folder as the output, as a static-site user sees it: `processDirectory` and the
 * `critical-css` CLI over a plain folder, in embedded mode (real Chromium) and against
 * the fake service (402, strict). Pages get critical CSS and nothing else changes; a
 * second run changes nothing; a failure leaves every file as it was.
 */
import { createServer, type AddressInfo } from 'node:net'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processDirectory } from '../../src/index.ts'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { LOADER_FILE } from '../../src/html/loader.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { runCli } from '../fixtures/cli.ts'
import { withoutBrowser } from '../fixtures/browser.ts'
import { startFakeService, type FakeService } from '../fixtures/fake-service.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { tree } from '../fixtures/folders.ts'
import { CRITICAL } from '../fixtures/html.ts'

const TOKEN = 'tok_directory_0123456789abcdef'
const QUOTA_ONE = 'tok_directory_quota1_0123456'

const PAGES = ['index.html', 'pricing/index.html', 'about.html'] as const
const temps: string[] = []

/** A project with a built site in `dist/` (pages linking `${base}style.css`), and a package.json so the cache stays inside. */
async function project(base = '/'): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-directory-'))
  temps.push(root)
  const dist = join(root, 'dist')
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  for (const file of PAGES) {
    await mkdir(dirname(join(dist, file)), { recursive: true })
    await writeFile(join(dist, file), page(file, `<link rel="stylesheet" href="${base}style.css">\n`))
  }
  await writeFile(join(dist, 'style.css'), SITE_CSS)
  await writeFile(join(dist, 'robots.txt'), 'User-agent: *\n')
  return { root, dist }
}


function quiet(): BuildLogger & { infos: string[]; warnings: string[] } {
  const infos: string[] = []
  const warnings: string[] = []
  return { infos, warnings, info: (message) => infos.push(message), warn: (message) => warnings.push(message) }
}


afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

describe('processDirectory, embedded mode', () => {
  it('inlines every page, changes nothing else, and a second run over its own output changes nothing without a browser', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    // `media` keeps a stylesheet link in the head, so the second run asks the cache (the default leaves none: see below).
    const { report, written } = await processDirectory(dist, { preload: 'media' }, { root, logger: quiet(), env: {} })
    expect(written).toEqual(['about.html', 'index.html', 'pricing/index.html'])
    expect(report.pages.map((entry) => entry.outcome)).toEqual(['inlined', 'inlined', 'inlined'])
    const after = await tree(dist)
    for (const [file, text] of before) {
      if (!file.endsWith('.html')) {
        expect(after.get(file), file).toBe(text)
        continue
      }
      const css = CRITICAL.exec(after.get(file)!)?.[1] ?? ''
      // Above the fold: the 100vh hero; below it: the footer.
      expect(css).toContain('.hero{')
      expect(css).not.toContain('.below')
      // The page is its input with the inliner's edits and nothing else.
      expect(after.get(file)).toBe(inlineCriticalCss(text, css, { preload: 'media' }).html)
    }
    const again = await withoutBrowser(() => processDirectory(dist, { preload: 'media' }, { root, logger: quiet(), env: {} }))
    expect(again.written).toEqual([])
    expect(again.report.pages.map((entry) => entry.source)).toEqual(['cache', 'cache', 'cache'])
    expect(await tree(dist)).toEqual(after)
  }, 120_000)

  it('without the cache, a second run renders its own output and still changes nothing', async () => {
    const { root, dist } = await project()
    // `none` leaves the stylesheet blocking in the head, so the second run renders the page, critical style and all.
    const options = { cache: false as const, pages: ['/'], preload: 'none' as const }
    await processDirectory(dist, options, { root, logger: quiet(), env: {} })
    const first = await tree(dist)
    const again = await processDirectory(dist, options, { root, logger: quiet(), env: {} })
    expect(again.report.pages.map((entry) => [entry.source, entry.outcome])).toEqual([['embedded', 'unchanged']])
    expect(await tree(dist)).toEqual(first)
    // With the default strategy no stylesheet in the head holds up first paint any more: the page is not even rendered.
    const { root: other, dist: otherDist } = await project()
    await processDirectory(otherDist, { cache: false, pages: ['/'] }, { root: other, logger: quiet(), env: {} })
    const processed = await tree(otherDist)
    const skipped = await processDirectory(otherDist, { cache: false, pages: ['/'] }, { root: other, logger: quiet(), env: {} })
    expect(skipped.report.pages.map((entry) => [entry.source, entry.outcome, entry.message])).toEqual([[null, 'unchanged', 'no render-blocking stylesheet link to defer']])
    expect(await tree(otherDist)).toEqual(processed)
  }, 120_000)

  it('a stylesheet of a host that never answers: the page is inlined with its own CSS, that link stays blocking, the report and the log name the host, and a second run is the same', async () => {
    const silent = createServer((socket) => socket.on('error', () => {}))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const host = `127.0.0.1:${(silent.address() as AddressInfo).port}`
    try {
      const { root, dist } = await project()
      const theirs = `<link rel="stylesheet" href="http://${host}/theme.css">`
      await writeFile(join(dist, 'index.html'), page('index.html', `<link rel="stylesheet" href="/style.css">\n${theirs}\n`))
      const logger = quiet()
      const { report } = await processDirectory(dist, { preload: 'media', pages: ['/index.html'] }, { root, logger, env: {} })
      const html = await readFile(join(dist, 'index.html'), 'utf8')
      expect(CRITICAL.exec(html)?.[1]).toContain('.hero{')
      // Its own stylesheet no longer blocks; the one the render never got is as it was.
      expect(html).toContain('<link rel="stylesheet" href="/style.css" media="print" fetchpriority="high" onload="this.media=\'all\'">')
      expect(html).toContain(theirs)
      const [entry] = report.pages
      expect(entry).toMatchObject({ outcome: 'inlined', stillBlocking: 1, skippedHosts: [{ host, reason: 'no answer within 1.0 s' }], unreadStylesheets: [`http://${host}/theme.css`] })
      expect(logger.infos.filter((line) => line.includes(`went on without ${host}`))).toHaveLength(1)
      // From the cache, the notes come back with the CSS: the same output.
      await writeFile(join(dist, 'index.html'), page('index.html', `<link rel="stylesheet" href="/style.css">\n${theirs}\n`))
      const again = await withoutBrowser(() => processDirectory(dist, { preload: 'media', pages: ['/index.html'] }, { root, logger: quiet(), env: {} }))
      expect(again.report.pages[0]).toMatchObject({ source: 'cache', stillBlocking: 1 })
      expect(await readFile(join(dist, 'index.html'), 'utf8')).toBe(html)
    } finally {
      silent.close()
    }
  }, 120_000)

  it('a page whose first screen still differs with only its critical CSS: inlined, the report and the log give the share and the element, and the cache gives them again', async () => {
    const { root, dist } = await project()
    // A column whose width a cell far below the fold sets: no rule of the first screen's own elements repairs it.
    const rows = '<tr><td>a</td><td>b</td></tr>'.repeat(60)
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="stylesheet" href="/table.css"></head><body><table><tr><td>first</td><td>row</td></tr>${rows}<tr><td class="late">late</td><td>row</td></tr></table></body></html>`
    await writeFile(join(dist, 'table.css'), 'body{margin:0}td{border:1px solid #999;padding:4px}td.late{width:600px}')
    await writeFile(join(dist, 'index.html'), html)
    const logger = quiet()
    const { report } = await processDirectory(dist, { pages: ['/index.html'], viewports: [{ width: 1300, height: 900 }] }, { root, logger, env: {} })
    const [entry] = report.pages
    expect(entry).toMatchObject({ outcome: 'inlined', firstScreen: [{ viewport: { width: 1300, height: 900 }, elements: ['table'] }] })
    const share = entry!.firstScreen[0]!.share
    expect(share).toBeGreaterThan(0)
    expect(logger.infos.filter((line) => line.startsWith('critical CSS: /index.html first screen differs until the full CSS loads: ') && line.includes(' at 1300×900 (table)'))).toHaveLength(1)
    await writeFile(join(dist, 'index.html'), html)
    const again = await withoutBrowser(() => processDirectory(dist, { pages: ['/index.html'], viewports: [{ width: 1300, height: 900 }] }, { root, logger: quiet(), env: {} }))
    expect(again.report.pages[0]).toMatchObject({ source: 'cache', firstScreen: [{ share, elements: ['table'] }] })
  }, 120_000)

  it('leaves a page whose CSS is all inline as it is, without rendering it', async () => {
    const { root, dist } = await project()
    const inline = '<!doctype html><html><head><title>x</title><style>.hero{min-height:100vh}</style></head><body><header class="hero">x</header></body></html>\n'
    await writeFile(join(dist, 'inline.html'), inline)
    const { report } = await withoutBrowser(() => processDirectory(dist, { cache: false, pages: ['/inline.html'] }, { root, logger: quiet(), env: {} }))
    expect(report.pages.map((entry) => [entry.outcome, entry.source])).toEqual([['unchanged', null]])
    expect(await readFile(join(dist, 'inline.html'), 'utf8')).toBe(inline)
  })

  it('serves the folder below `base`', async () => {
    const { root, dist } = await project('/docs/')
    const { report } = await processDirectory(dist, { base: '/docs/', cache: false }, { root, logger: quiet(), env: {} })
    expect(report.pages.map((entry) => [entry.url, entry.outcome])).toEqual([
      ['/docs/about.html', 'inlined'],
      ['/docs/', 'inlined'],
      ['/docs/pricing/', 'inlined'],
    ])
    expect(CRITICAL.exec(await readFile(join(dist, 'index.html'), 'utf8'))?.[1]).toContain('.hero{')
  }, 120_000)

  it('an interrupted run writes nothing and says nothing per page', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    const stop = new AbortController()
    const logger = quiet()
    // Interrupted once the browser is rendering: every page is in flight.
    const info = logger.info
    logger.info = (message) => {
      info(message)
      if (/rendering \d+ pages? in Chromium/.test(message)) setTimeout(() => stop.abort(new Error('interrupted')), 200)
    }
    await expect(processDirectory(dist, { cache: false }, { root, logger, env: {}, signal: stop.signal })).rejects.toThrow('interrupted')
    expect(logger.warnings).toEqual([])
    expect(await tree(dist)).toEqual(before)
  }, 120_000)

  it('says so when the folder has no page', async () => {
    const { root, dist } = await project()
    for (const file of PAGES) await rm(join(dist, file))
    const logger = quiet()
    const { written } = await processDirectory(dist, {}, { root, logger, env: {} })
    expect(written).toEqual([])
    expect(logger.warnings).toEqual([`critical CSS: there is no .html file below ${dist}, so no page got critical CSS.`])
  })

  it('refuses what is not a folder, and a bad base, before any work', async () => {
    const { root, dist } = await project()
    await expect(processDirectory(join(root, 'nowhere'), {}, { root, env: {} })).rejects.toThrow(/nowhere does not exist/)
    await expect(processDirectory(join(dist, 'robots.txt'), {}, { root, env: {} })).rejects.toThrow(/robots.txt is not a directory/)
    await expect(processDirectory(dist, { base: 'docs' } as never, { root, env: {} })).rejects.toThrow(/option `base`: must be a path/)
  })
})

describe('processDirectory against a service', () => {
  let fake: FakeService
  beforeAll(async () => {
    fake = await startFakeService({
      tokens: { [TOKEN]: { plan: 'ent' }, [QUOTA_ONE]: { plan: 'ent', quota: 1 } },
      behaviour: (url) => ({ css: `.hero{color:#123}/*${new URL(url).pathname}*/`, instant: true }),
    })
  })
  afterAll(async () => {
    await fake.close()
  })

  it('402 leaves the pages it hit byte-identical and inlines the rest; strict writes nothing at all', async () => {
    const { root, dist } = await project()
    // The first page in order is the slowest to read and key: the one page the quota allows is still that one, every run.
    const about = await readFile(join(dist, 'about.html'), 'utf8')
    await writeFile(join(dist, 'about.html'), about.replace('</body>', `<!--${'x'.repeat(8 << 20)}-->\n</body>`))
    const before = await tree(dist)
    const service = { baseUrl: fake.url, siteUrl: 'https://site.example/', cache: false as const, concurrency: 1 }
    const logger = quiet()
    const { written, report } = await processDirectory(dist, { ...service, token: QUOTA_ONE }, { root, logger, env: {} })
    expect(report.pages.map((entry) => entry.outcome)).toEqual(['inlined', 'failed', 'failed'])
    expect(written).toEqual(['about.html'])
    expect(logger.warnings.join('\n')).toMatch(/402 plan_limit_reached/)
    const after = await tree(dist)
    expect(after.get('index.html')).toBe(before.get('index.html'))
    expect(after.get('pricing/index.html')).toBe(before.get('pricing/index.html'))

    const strict = await project()
    const strictBefore = await tree(strict.dist)
    await expect(processDirectory(strict.dist, { ...service, token: QUOTA_ONE, strict: true }, { root: strict.root, logger: quiet(), env: {} })).rejects.toThrow(
      /got no critical CSS, and `strict` is on/,
    )
    expect(await tree(strict.dist)).toEqual(strictBefore)
  })

  it('a new page that cannot be written stops the run: the pages written ahead are not put in place, no temp file stays', async () => {
    const { root, dist } = await project()
    // A name the file system takes, but not with the temp suffix beside it (ENAMETOOLONG): the last page in order.
    const long = `${'z'.repeat(240)}.html`
    await writeFile(join(dist, long), page(long, '<link rel="stylesheet" href="/style.css">\n'))
    const before = await tree(dist)
    const service = { baseUrl: fake.url, token: TOKEN, siteUrl: 'https://site.example/', cache: false as const, concurrency: 1 }
    await expect(processDirectory(dist, service, { root, logger: quiet(), env: {} })).rejects.toThrow(`could not write the new ${long}`)
    expect(await tree(dist)).toEqual(before)
  })

  it('takes the service from the env like the plugin, and keeps the token out of the report', async () => {
    const { root, dist } = await project()
    const env = { CRITICAL_CSS_BASE_URL: fake.url, CRITICAL_CSS_API_TOKEN: TOKEN, CRITICAL_CSS_SITE_URL: 'https://site.example/' }
    const { report } = await processDirectory(dist, { cache: false, report: 'report.json' }, { root, logger: quiet(), env })
    expect(report.pages.every((entry) => entry.outcome === 'inlined')).toBe(true)
    expect(report.pages.map((entry) => entry.url)).toEqual(['https://site.example/about.html', 'https://site.example/', 'https://site.example/pricing/'])
    const written = await readFile(join(root, 'report.json'), 'utf8')
    expect(written).toContain('https://site.example/pricing/')
    expect(written).not.toContain(TOKEN)
  })
})

describe('the critical-css CLI', () => {
  it('prints help, and refuses bad usage with exit 2 before touching anything', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    expect(await runCli(root, ['--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('--viewports LIST') })
    for (const args of [[], ['dist', 'other'], ['dist', '--viewports', '1300by900'], ['dist', '--preload', 'lazy'], ['dist', '--concurrency', 'many'], ['dist', '--frobnicate']]) {
      const run = await runCli(root, args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toContain('critical-css --help')
    }
    expect(await tree(dist)).toEqual(before)
  })

  it('processes a folder: summary on stderr, report on stdout with --json, exit 0; a missing folder exits 1', async () => {
    const { root, dist } = await project()
    const run = await runCli(root, ['dist', '--json', '--viewports', '1300x900', '--no-cache'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/3 pages · 3 inlined/)
    const report = JSON.parse(run.stdout) as { pages: { file: string; outcome: string }[] }
    expect(report.pages.map((entry) => [entry.file, entry.outcome])).toEqual([
      ['about.html', 'inlined'],
      ['index.html', 'inlined'],
      ['pricing/index.html', 'inlined'],
    ])
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toMatch(CRITICAL)
    expect((await runCli(root, ['missing'])).code).toBe(1)
  }, 120_000)

  it('after the site is built again, the pages come from the cache without a browser and come out the same', async () => {
    const { root, dist } = await project()
    const built = await tree(dist)
    expect((await runCli(root, ['dist', '--cache-dir', '.ucc'])).code).toBe(0)
    const first = await tree(dist)
    // The generator writes the same pages again, without critical CSS.
    for (const [file, text] of built) await writeFile(join(dist, file), text)
    const again = await runCli(root, ['dist', '--cache-dir', '.ucc'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(/3 pages · 3 inlined · 3 from cache/)
    expect(await tree(dist)).toEqual(first)
  }, 120_000)

  // Issue 32: the key named the page's file only, so a run at another base took CSS whose url()s were made for the first.
  it('a result is kept for the base it was made at: a run without --base, then one with it, renders again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ucc-directory-'))
    temps.push(root)
    const dist = join(root, 'dist')
    await writeFile(join(root, 'package.json'), '{ "private": true }\n')
    await mkdir(join(dist, 'img'), { recursive: true })
    // Linked relatively, as MkDocs and TypeDoc do: the sheet is found at any base, and the url() stays relative to the page.
    await writeFile(join(dist, 'index.html'), page('home', '<link rel="stylesheet" href="style.css">\n'))
    await writeFile(join(dist, 'style.css'), `${SITE_CSS}.hero{background-image:url(img/hero.svg)}\n`)
    await writeFile(join(dist, 'img/hero.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    const built = await tree(dist)
    expect((await runCli(root, ['dist', '--cache-dir', '.ucc'])).code).toBe(0)
    const first = await readFile(join(dist, 'index.html'), 'utf8')
    expect(CRITICAL.exec(first)?.[1]).toContain('url(img/hero.svg)')
    for (const [file, text] of built) await writeFile(join(dist, file), text)
    const atBase = await runCli(root, ['dist', '--cache-dir', '.ucc', '--base', '/project/'])
    expect(atBase.code, atBase.stderr).toBe(0)
    expect(atBase.stderr).not.toMatch(/from cache/)
    expect(await readFile(join(dist, 'index.html'), 'utf8')).toBe(first)
  }, 120_000)

  describe('against a service', () => {
    let fake: FakeService
    beforeAll(async () => {
      fake = await startFakeService({
        tokens: { [TOKEN]: { plan: 'ent' }, [QUOTA_ONE]: { plan: 'ent', quota: 1 } },
        behaviour: (url) => (url.endsWith('/pricing/') ? { failure: { code: 'render_failed', message: 'boom' } } : { css: '.hero{color:red}', instant: true }),
      })
    })
    afterAll(async () => {
      await fake.close()
    })
    const flags = ['dist', '--site-url', 'https://site.example/', '--no-cache', '--concurrency', '1']

    it('402: exit 0, the pages it hit as they were, a warning naming 402, the token nowhere', async () => {
      const { root, dist } = await project()
      const before = await tree(dist)
      const run = await runCli(root, [...flags, '--pages', '/,/about.html'], { CRITICAL_CSS_BASE_URL: fake.url, CRITICAL_CSS_API_TOKEN: QUOTA_ONE })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toMatch(/402 plan_limit_reached/)
      const after = await tree(dist)
      // The page it hit, and the loader script that page now loads.
      expect([...after].filter(([file, text]) => text !== before.get(file)).map(([file]) => file)).toEqual([LOADER_FILE, 'index.html'])
      expect(run.stderr + run.stdout).not.toContain(QUOTA_ONE)
    })

    it('strict with a page the service fails: exit 1 and every file as it was', async () => {
      const { root, dist } = await project()
      const before = await tree(dist)
      const run = await runCli(root, [...flags, '--strict'], { CRITICAL_CSS_BASE_URL: fake.url, CRITICAL_CSS_API_TOKEN: TOKEN })
      expect(run.code, run.stderr).toBe(1)
      expect(run.stderr).toMatch(/1 of 3 pages got no critical CSS/)
      expect(run.stderr + run.stdout).not.toContain(TOKEN)
      expect(await tree(dist)).toEqual(before)
    })
  })
})
