/**
 * Issue 32: a theme that links the site's CSS by absolute URL (Hugo's `absURL`:
 * `https://site.invalid/css/main.css`) used to get "no above-the-fold CSS" on every page,
 * `--site-url` or not. In embedded mode the site's own origin is served from the folder.
 * `.invalid` never resolves: a URL that escaped to the network would show as a skipped host
 * and an empty CSS. Through the real command and Chromium.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { BuildReport } from '../../src/core/report.ts'
import { runCli } from '../fixtures/cli.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { tree, writeTree } from '../fixtures/folders.ts'
import { CRITICAL } from '../fixtures/html.ts'

const SITE = 'https://site.invalid/'
const temps: string[] = []

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** Hugo-like output: every page links `${SITE}css/main.css`, and says where it is with `canonical` when `address` gives it. */
async function project(address: ((path: string) => string) | null): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-absolute-'))
  temps.push(root)
  const dist = join(root, 'dist')
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  const files: Record<string, string> = {
    'css/main.css': `${SITE_CSS}.hero{background-image:url(${SITE}img/hero.svg)}\n`,
    'img/hero.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
  }
  for (const [file, path] of [['index.html', ''], ['posts/first/index.html', 'posts/first/']] as const) {
    const canonical = address === null ? '' : `<link rel="canonical" href="${address(path)}">\n`
    files[file] = page(path || 'home', `${canonical}<link rel="stylesheet" href="${SITE}css/main.css">\n`)
  }
  await writeTree(dist, files)
  return { root, dist }
}


describe('a theme that links its CSS by absolute URL', () => {
  it('with --site-url: every page inlined from the folder, nothing fetched from the site, the url()s on the site', async () => {
    const { root, dist } = await project(null)
    const run = await runCli(root, ['dist', '--site-url', SITE, '--no-cache', '--json', '--strict'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as BuildReport
    expect(report.pages.map((entry) => [entry.url, entry.outcome, entry.skippedHosts, entry.unreadStylesheets])).toEqual([
      ['/', 'inlined', [], []],
      ['/posts/first/', 'inlined', [], []],
    ])
    const css = CRITICAL.exec(await readFile(join(dist, 'posts/first/index.html'), 'utf8'))?.[1] ?? ''
    expect(css).toMatch(/\.hero\{[^}]*min-height:100vh/)
    // Root paths: the same file on the deployed site, and nothing names the build server.
    expect(css).toContain('url(/img/hero.svg)')
    expect(css).not.toContain('127.0.0.1')
  }, 120_000)

  it('without it, from the pages’ canonical addresses: said in one line, and inlined the same', async () => {
    const { root, dist } = await project((path) => `${SITE}${path}`)
    const run = await runCli(root, ['dist', '--no-cache'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`the pages say they are deployed at ${SITE} (2 of 2 pages, by rel=canonical or og:url)`)
    expect(run.stderr).toContain(`pass \`--site-url ${SITE}\` to say so`)
    expect(run.stderr).toMatch(/2 pages · 2 inlined/)
    expect(CRITICAL.exec(await readFile(join(dist, 'index.html'), 'utf8'))?.[1]).toMatch(/\.hero\{/)
  }, 120_000)

  it('pages that disagree on where they are: not served from the folder, and the flag that settles it is named', async () => {
    const { root, dist } = await project((path) => (path === '' ? SITE : `https://elsewhere.invalid/${path}`))
    const before = await tree(dist)
    const run = await runCli(root, ['dist', '--no-cache'])
    expect(run.stderr).toContain('the pages say different addresses')
    expect(run.stderr).toContain('pass `--site-url URL` to serve them')
    // Nothing was inlined, so nothing changed.
    expect(await tree(dist)).toEqual(before)
  }, 120_000)
})
