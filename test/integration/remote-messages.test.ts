/**
 * What a remote-mode build says when pages fail, as a user reads it: one warning per cause
 * naming the pages by the paths the user configured, short outcomes in the table, the full
 * messages in the JSON report, and a page the deployed site does not have explained as what
 * it is (remote mode renders the deployed site). Real Vite builds against the reference
 * service on 127.0.0.1; the deployed site is a static server beside it.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Options } from '../../src/core/options.ts'
import { startService, type RunningService } from '../../src/service/server.ts'
import { startFakeService } from '../fixtures/fake-service.ts'
import { readStyles } from '../fixtures/html.ts'
import { SITE_CSS, SITE_PAGES, buildSite, createProject, page, removeProject, type BuildOutput } from '../fixtures/sites.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'
import { createStubEngine } from '../fixtures/stub-engine.ts'

const SPENT = 'tok_spent_quota_0123456789abcdef'
const TOKEN = 'tok_remote_msgs_0123456789abcdef'
const SITE = 'https://site.example'

/** Five pages more than the fixture site's three: eight in all, as in the issue. */
const EXTRA_PAGES = ['p1.html', 'p2.html', 'p3.html', 'p4.html', 'p5.html']
const ALL_PATHS = [...SITE_PAGES.map(({ path }) => path), ...EXTRA_PAGES.map((file) => `/${file}`)]

/** Emits the extra pages before the plugin runs (enforce: 'pre'), each linking a stylesheet so that it is rendered. */
const extraPages = {
  name: 'extra-pages',
  enforce: 'pre',
  generateBundle(this: { emitFile(file: object): string }) {
    for (const file of EXTRA_PAGES) this.emitFile({ type: 'asset', fileName: file, source: page(file, '<link rel="stylesheet" href="/assets/extra.css">\n') })
  },
}

const projects: string[] = []
/** Everything the builds printed: no token in any of it. */
const everything: string[] = []

afterAll(async () => {
  await Promise.all(projects.map(removeProject))
  expect(everything.filter((text) => text.includes(SPENT) || text.includes(TOKEN))).toEqual([])
})

async function build(setup: Parameters<typeof buildSite>[1]): Promise<BuildOutput> {
  const output = await buildSite('vite', setup)
  if (!setup?.root) projects.push(output.root)
  everything.push(...output.infos, ...output.warnings, output.error?.message ?? '')
  return output
}

/** The pages a warning lists: `… left unchanged (/a, /b): …`. */
function listed(line: string): string[] {
  const list = /left unchanged \(([^)]*)\): /.exec(line)?.[1]
  expect(list, line).toBeDefined()
  return list!.split(', ').sort()
}

/** The summary table's rows, by page: the line that starts with the page's path. */
function tableRows(output: BuildOutput): Map<string, string> {
  const table = output.infos.find((line) => line.includes('page  ') && line.includes('outcome'))
  expect(table, output.infos.join('\n')).toBeDefined()
  const rows = new Map<string, string>()
  for (const row of table!.split('\n').slice(2)) rows.set(row.trim().split(/\s+/)[0]!, row)
  return rows
}

describe('a used-up quota', () => {
  let service: RunningService
  beforeAll(async () => {
    // No page is rendered: the stub engine stands in for a browser that is never asked.
    service = await startService({ tokens: [{ token: SPENT, plan: 'pro', quota: 0 }], engine: createStubEngine() })
  })
  afterAll(() => service.close())

  const remote = (extra: Options = {}): Options => ({ baseUrl: service.url, token: SPENT, siteUrl: SITE, cache: false, ...extra })

  it('8 pages: one warning for the cause, naming the 8 pages by path; short table rows; full messages in the report', async () => {
    const root = await createProject('vite')
    projects.push(root)
    const output = await build({ root, plugin: remote({ report: '../critical.json' }), vitePlugins: [extraPages] })
    expect(output.error).toBeNull()

    const quota = output.warnings.filter((line) => line.includes('402 plan_limit_reached'))
    expect(quota, output.warnings.join('\n')).toHaveLength(1)
    expect(output.warnings.filter((line) => line.includes('critical CSS'))).toEqual(quota)
    const [line] = quota
    expect(line).toMatch(/^critical CSS: 8 of 8 pages left unchanged \(/)
    expect(listed(line!)).toEqual([...ALL_PATHS].sort())
    expect(line).not.toContain(SITE)
    expect(line).toContain('Set `strict: true` to fail the build instead.')

    const rows = tableRows(output)
    expect([...rows.keys()].sort()).toEqual([...ALL_PATHS].sort())
    for (const row of rows.values()) expect(row).toMatch(/ failed: quota used up$/)
    expect(output.infos.join('\n')).not.toContain('402 plan_limit_reached')
    expect(output.infos.join('\n')).toMatch(/critical CSS: 8 pages · 0 inlined · 8 left unchanged after errors/)

    const report = JSON.parse(await readFile(join(root, 'critical.json'), 'utf8')) as { pages: { url: string; message: string }[] }
    expect(report.pages).toHaveLength(8)
    for (const entry of report.pages) expect(entry.message).toMatch(/used up.*\(402 plan_limit_reached\)/)
    everything.push(JSON.stringify(report))
  })

  it('strict: the error names each page once, with the cause once', async () => {
    const output = await build({ plugin: remote({ strict: true }), vitePlugins: [extraPages] })
    const message = output.error?.message ?? ''
    expect(message).toMatch(/8 of 8 pages got no critical CSS, and `strict` is on/)
    expect(message.match(/402 plan_limit_reached/g)).toHaveLength(1)
    for (const path of EXTRA_PAGES) expect(message.split(`/${path}`)).toHaveLength(2)
    expect(output.warnings.filter((line) => line.includes('402'))).toEqual([])
  })
})

it('two causes: a line each, naming its pages, then one line that counts them; the table gives each page its own', async () => {
  // Two pages whose jobs never finish within `timeout`, one whose job fails.
  const fake = await startFakeService({
    tokens: { [TOKEN]: { plan: 'ent' } },
    behaviour: (url) => (url.endsWith('/about.html') ? { statuses: ['failed'], failure: { code: 'render_failed', message: 'the page crashed' } } : { durationMs: 60_000 }),
  })
  try {
    const output = await build({ plugin: { baseUrl: fake.url, token: TOKEN, siteUrl: SITE, cache: false, timeout: 2500 } })
    expect(output.error).toBeNull()
    const warnings = output.warnings.filter((line) => line.includes('critical CSS'))
    expect(warnings, output.warnings.join('\n')).toHaveLength(3)
    const timedOut = warnings.find((line) => line.includes('`timeout`'))!
    expect(timedOut).toMatch(/^critical CSS: 2 pages left unchanged \(/)
    expect(listed(timedOut)).toEqual(['/', '/pricing/'])
    expect(timedOut).toContain('no critical CSS within the `timeout` of 2.5 s per page')
    const crashed = warnings.find((line) => line.includes('render_failed'))!
    expect(crashed).toBe("critical CSS: 1 page left unchanged (/about.html): the service's job failed (render_failed): the page crashed.")
    expect(warnings.at(-1)).toBe('critical CSS: 3 of 3 pages left unchanged, for the 2 reasons above. Set `strict: true` to fail the build instead.')
    expect(warnings.join('\n')).not.toContain(SITE)

    const rows = tableRows(output)
    expect(rows.get('/')).toMatch(/ failed: timed out$/)
    expect(rows.get('/pricing/')).toMatch(/ failed: timed out$/)
    expect(rows.get('/about.html')).toMatch(/ failed: render failed$/)
  } finally {
    await fake.close()
  }
}, 30_000)

describe('a page the deployed site does not have', () => {
  let site: StaticServer
  let service: RunningService
  beforeAll(async () => {
    // The deployed release has the home page; /pricing/ and /about.html are new in this build.
    const home = SITE_PAGES.find(({ path }) => path === '/')!
    site = await serveFiles({ '/': page(home.title, '<link rel="stylesheet" href="/style.css">\n'), '/style.css': { body: SITE_CSS, type: 'text/css' } })
    // The real engine, fetching the loopback site only (`--allow-origin`).
    service = await startService({ tokens: [{ token: TOKEN, plan: 'ent' }], allowOrigins: [site.origin] })
  }, 30_000)
  afterAll(async () => {
    await service.close()
    await site.close()
  })

  it('the 404s are one warning that names siteUrl and the page paths, and says remote mode renders the deployed site', async () => {
    const output = await build({ plugin: { baseUrl: service.url, token: TOKEN, siteUrl: site.origin, cache: false } })
    expect(output.error).toBeNull()
    const warnings = output.warnings.filter((line) => line.includes('critical CSS'))
    expect(warnings, output.warnings.join('\n')).toHaveLength(1)
    const [line] = warnings
    expect(line).toMatch(/^critical CSS: 2 of 3 pages left unchanged \(/)
    expect(listed(line!)).toEqual(['/about.html', '/pricing/'])
    expect(line).toContain(`the deployed site at ${site.origin}/ answered 404 for them`)
    expect(line).toContain('remote mode renders the site where it is deployed (`siteUrl`')
    expect(line).toContain('Deploy the pages first, or use embedded mode.')
    // Paths, not the addresses the service fetched or the service's own.
    expect(line).not.toContain(`${site.origin}/pricing/`)
    expect(line).not.toContain(service.url)

    const rows = tableRows(output)
    expect(rows.get('/pricing/')).toMatch(/ failed: 404 on the deployed site$/)
    expect(rows.get('/')).toMatch(/ inlined$/)
    expect(readStyles(output.files.get('index.html')!.toString('utf8')).critical).toHaveLength(1)
  }, 60_000)

  it('one page: the same words for it, and `strict` fails naming it', async () => {
    const output = await build({ plugin: { baseUrl: service.url, token: TOKEN, siteUrl: site.origin, cache: false, pages: ['/pricing/'], strict: true } })
    const message = output.error?.message ?? ''
    expect(message).toContain('1 of 1 page got no critical CSS')
    expect(message).toContain(`1 page (/pricing/): the deployed site at ${site.origin}/ answered 404 for it`)
    expect(message).toContain('Deploy the page first, or use embedded mode.')
    expect(message).not.toContain(`${site.origin}/pricing/`)
  }, 60_000)
})
