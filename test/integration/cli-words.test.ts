/**
 * The folder command speaks its own words (issue 32), through the real process: messages
 * name flags (`--viewports`, `--strict`, `--timeout`), not the plugin's option paths or
 * config settings; an unknown flag gets a suggestion instead of Node's parser text; a
 * missing folder "does not exist"; a folder without a page fails instead of passing as
 * done; and the report says `embedded` for pages the local browser rendered.
 */
import { createServer, type AddressInfo } from 'node:net'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { runCli } from '../fixtures/cli.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { tree } from '../fixtures/folders.ts'

const temps: string[] = []

afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A project with a one-page site in `dist/`, and a package.json so the cache stays inside. */
async function project(): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-cli-words-'))
  temps.push(root)
  const dist = join(root, 'dist')
  await mkdir(dist)
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  await writeFile(join(dist, 'index.html'), page('Home', '<link rel="stylesheet" href="/style.css">\n'))
  await writeFile(join(dist, 'style.css'), SITE_CSS)
  return { root, dist }
}



/** What the plugin's words look like: none of them may reach a command-line user. */
const PLUGIN_SPELLING = /`strict`|strict: true|`timeout`|viewports\[|option `|`baseUrl`|`token`/

describe('the critical-css command in its own words', () => {
  it('an unknown flag: exit 2, the flag it likely meant, nothing touched', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    const typo = await runCli(root, ['dist', '--strcit'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toBe('critical-css: unknown flag --strcit; did you mean --strict?\nRun critical-css --help for the options.\n')
    // The option's spelling typed as a flag.
    expect((await runCli(root, ['dist', '--siteUrl', 'https://site.example/'])).stderr).toContain('unknown flag --siteUrl; did you mean --site-url?')
    // Nothing close: no guess.
    const far = await runCli(root, ['dist', '--frobnicate'])
    expect(far.code).toBe(2)
    expect(far.stderr).toContain('critical-css: unknown flag --frobnicate\n')
    expect(far.stderr).not.toContain('did you mean')
    expect(await tree(dist)).toEqual(before)
  })

  it('a value the options refuse names the flag and what was typed: exit 2', async () => {
    const { root } = await project()
    const small = await runCli(root, ['dist', '--viewports', '1300x900,10x10'])
    expect(small.code).toBe(2)
    expect(small.stderr).toContain('--viewports 10x10 (width): too small')
    expect(small.stderr).toContain('--viewports 10x10 (height): too small')
    expect(small.stderr).not.toMatch(PLUGIN_SPELLING)
    const many = await runCli(root, ['dist', '--viewports', '1300x900,412x915,800x600,1024x768,1920x1080'])
    expect(many.code).toBe(2)
    expect(many.stderr).toContain('--viewports: too big')
    for (const [flag, value] of [['--timeout', '0'], ['--preload', 'lazy'], ['--site-url', 'site.example'], ['--cache-dir', '']] as const) {
      const run = await runCli(root, ['dist', flag, value])
      expect(run.code, flag).toBe(2)
      expect(run.stderr, flag).toContain(`${flag}: `)
      expect(run.stderr, flag).not.toMatch(PLUGIN_SPELLING)
    }
  })

  // A folder that is not there is the build's state, not a mistyped command line: a
  // configuration error (exit 1), as a folder with no page is, and as `processDirectory` throws.
  it('a missing folder does not exist, a file is not a directory, and a folder without a page fails: exit 1 each', async () => {
    const { root, dist } = await project()
    const missing = await runCli(root, ['build'])
    expect(missing.code).toBe(1)
    // Said once as the command's own: not `critical-css: unplugin-critical-css: …`.
    expect(missing.stderr).toContain(`critical-css: ${join(root, 'build')} does not exist: give the folder your site was built into.`)
    const file = await runCli(root, ['dist/style.css'])
    expect(file.code).toBe(1)
    expect(file.stderr).toContain(`${join(dist, 'style.css')} is not a directory`)
    // Pages only where the command does not look: dependencies and dot folders.
    const empty = join(root, 'out')
    await mkdir(join(empty, '.cache'), { recursive: true })
    await writeFile(join(empty, '.cache', 'index.html'), page('Hidden', ''))
    await writeFile(join(empty, 'app.js'), 'console.log(1)\n')
    // Said before any browser is needed: none is there to start.
    const run = await runCli(root, ['out'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`there is no .html file below ${empty}`)
  })

  it('no browser: the way to a service is the env vars, not the plugin options', async () => {
    const { root } = await project()
    const run = await runCli(root, ['dist', '--no-cache'], { CHROME_PATH: '/nonexistent/chrome' })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('Or set CRITICAL_CSS_BASE_URL and CRITICAL_CSS_API_TOKEN to use a Critical CSS Generation API instead.')
    expect(run.stderr).not.toMatch(PLUGIN_SPELLING)
  })

  it('a wrong address or a bad token: the way to fix it is the env var, not a plugin option', async () => {
    const { root, dist } = await project()
    const before = await tree(dist)
    // A port nothing listens on: bound, then closed.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const run = await runCli(root, ['dist', '--site-url', 'https://site.example/', '--no-cache'], { CRITICAL_CSS_BASE_URL: `http://127.0.0.1:${port}`, CRITICAL_CSS_API_TOKEN: 'ccs_cli_words_0123456789abcdefghijklmnopqrstu' })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('Check that CRITICAL_CSS_BASE_URL is the service')
    expect(run.stderr).not.toMatch(PLUGIN_SPELLING)
    expect(await tree(dist)).toEqual(before)
  })

  describe.skipIf(!findChromium())('with a browser', () => {
    it('a failed page: the closing line and the strict error name --strict and --timeout, the report says embedded', async () => {
      const { root, dist } = await project()
      const before = await tree(dist)
      // 1 ms per page: no page can be rendered in time, whichever side of the request the deadline passes.
      const warned = await runCli(root, ['dist', '--timeout', '1', '--no-cache', '--json'])
      expect(warned.code, warned.stderr).toBe(0)
      expect(warned.stderr).toMatch(/^warning: critical CSS: 1 of 1 page left unchanged \(\/\): no critical CSS within the --timeout of 1 ms per page: .* Pass --strict to exit 1 instead\.$/m)
      expect(warned.stderr).toMatch(/^ {2}\/ +embedded +- /m)
      expect(warned.stderr).not.toMatch(PLUGIN_SPELLING)
      expect((JSON.parse(warned.stdout) as { pages: { source: string; outcome: string }[] }).pages).toMatchObject([{ source: 'embedded', outcome: 'failed' }])
      const strict = await runCli(root, ['dist', '--timeout', '1', '--no-cache', '--strict'])
      expect(strict.code).toBe(1)
      expect(strict.stderr).toContain('critical-css: 1 of 1 page got no critical CSS, and --strict is on:')
      expect(strict.stderr).not.toMatch(PLUGIN_SPELLING)
      expect(await tree(dist)).toEqual(before)
    }, 60_000)

    it('a rendered page is `embedded` in the table, on stdout and in the report file; from the cache, `cache`', async () => {
      const { root, dist } = await project()
      const built = await readFile(join(dist, 'index.html'), 'utf8')
      const run = await runCli(root, ['dist', '--json', '--report', 'report.json', '--cache-dir', '.ucc'])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toMatch(/^ {2}\/ +embedded +chromium +[\d.]+ (B|KiB) /m)
      const sources = (text: string): string[] => (JSON.parse(text) as { pages: { source: string }[] }).pages.map((entry) => entry.source)
      expect(sources(run.stdout)).toEqual(['embedded'])
      expect(sources(await readFile(join(root, 'report.json'), 'utf8'))).toEqual(['embedded'])
      // The site is built again: the page comes from the cache.
      await writeFile(join(dist, 'index.html'), built)
      const again = await runCli(root, ['dist', '--json', '--cache-dir', '.ucc'], { CHROME_PATH: '/nonexistent/chrome' })
      expect(again.code, again.stderr).toBe(0)
      expect(sources(again.stdout)).toEqual(['cache'])
    }, 60_000)
  })
})
