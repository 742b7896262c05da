/**
 * The base a folder's pages link their stylesheets below, found from the files alone: the
 * one base that serves every page's own sheets, or none when that base is not unique or not
 * there; and the words a page that lacks its sheets fails with.
 */
import { describe, expect, it } from 'vitest'
import { baseCheck, inferBase, missingSheetsMessage, sitePageOf, sitePages, type SitePage } from '../../src/core/base-check.ts'
import type { BuildOutput } from '../../src/core/build-server.ts'
import { PLUGIN_WORDS, resolveDirectoryOptions } from '../../src/core/options.ts'

/** A build output held in memory, counting what is read. */
function output(files: Record<string, string>): BuildOutput & { reads: string[] } {
  const reads: string[] = []
  return {
    reads,
    read: async (file) => {
      reads.push(file)
      return files[file] ?? null
    },
    files: async () => [], lazySheets: async () => new Set(),
  }
}

const linking = (...hrefs: string[]): string => `<!doctype html><html><head>${hrefs.map((href) => `<link rel="stylesheet" href="${href}">`).join('')}</head><body></body></html>`

/** Pages by their path below the base. */
const pages = (entries: Record<string, string>): SitePage[] => Object.entries(entries).map(([rest, html]) => sitePageOf(rest, rest === '' || rest.endsWith('/') ? `${rest}index.html` : rest, html))

describe('inferBase', () => {
  it('a site built for /fieldnotes/ and served from the folder root: /fieldnotes/ is the base, from every page', async () => {
    const site = pages({ '': linking('/fieldnotes/css/main.css'), 'posts/first/': linking('/fieldnotes/css/main.css', '/fieldnotes/css/syntax.css'), 'about/': linking('/fieldnotes/css/main.css') })
    const finding = await inferBase(site, '/', output({ 'css/main.css': 'a{}', 'css/syntax.css': 'b{}' }))
    expect(finding).toEqual({ linking: 3, affected: 3, missing: ['/fieldnotes/css/main.css', '/fieldnotes/css/syntax.css'], bases: ['/fieldnotes/'] })
  })

  it('finds nothing to say when every sheet is there, and leaves other origins alone', async () => {
    const site = pages({ '': linking('/style.css', 'https://cdn.example/theme.css'), 'docs/': linking('../style.css'), 'plain.html': linking() })
    expect(await inferBase(site, '/', output({ 'style.css': 'a{}' }))).toEqual({ linking: 2, affected: 0, missing: [], bases: [] })
    expect(await inferBase(pages({ '': linking('https://cdn.example/theme.css') }), '/', output({}))).toEqual({ linking: 0, affected: 0, missing: [], bases: [] })
  })

  it('a wrong base on a site served from its root: `/` serves it', async () => {
    const site = pages({ '': linking('/style.css'), 'pricing/': linking('/style.css') })
    expect(await inferBase(site, '/docs/', output({ 'style.css': 'a{}' }))).toMatchObject({ affected: 2, missing: ['/style.css'], bases: ['/'] })
  })

  it('relative links move with the base and still resolve: they neither vote nor veto', async () => {
    const site = pages({ '': linking('css/theme.css', '/fieldnotes/css/main.css'), 'posts/a/': linking('../../css/theme.css') })
    expect(await inferBase(site, '/', output({ 'css/theme.css': 'a{}', 'css/main.css': 'b{}' }))).toMatchObject({ linking: 2, affected: 1, bases: ['/fieldnotes/'] })
  })

  it('no base when it would lose a sheet that is there now', async () => {
    const site = pages({ '': linking('/css/a.css'), 'b/': linking('/fieldnotes/css/b.css') })
    expect(await inferBase(site, '/', output({ 'css/a.css': 'a{}', 'css/b.css': 'b{}' }))).toMatchObject({ affected: 1, missing: ['/fieldnotes/css/b.css'], bases: [] })
  })

  it('no base when no base has the file, or when some page lacks a sheet at every base', async () => {
    expect(await inferBase(pages({ '': linking('/theme/site.css') }), '/', output({}))).toMatchObject({ missing: ['/theme/site.css'], bases: [] })
    const broken = pages({ '': linking('/fieldnotes/css/main.css'), '404.html': linking('/fieldnotes/css/main.css', '/old.css') })
    expect(await inferBase(broken, '/', output({ 'css/main.css': 'a{}' }))).toMatchObject({ affected: 2, bases: [] })
  })

  it('every base that serves them all, shortest first, when there is more than one', async () => {
    const site = pages({ '': linking('/a/b/x.css') })
    expect(await inferBase(site, '/', output({ 'b/x.css': 'a{}', 'x.css': 'b{}' }))).toMatchObject({ bases: ['/a/', '/a/b/'] })
  })

  it('looks each path up once per base, across pages and across calls', async () => {
    const files = output({ 'css/main.css': 'a{}' })
    const check = baseCheck(files)
    const site = pages(Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`p${index}/`, linking('/fieldnotes/css/main.css')])))
    expect((await check(site, '/')).bases).toEqual(['/fieldnotes/'])
    await check(site.slice(0, 1), '/')
    // At `/`, `/fieldnotes/`, `/fieldnotes/css/`: one look each (a path with an extension is one file).
    expect(files.reads).toEqual(['fieldnotes/css/main.css', 'css/main.css', 'main.css'])
  })
})

describe('sitePages', () => {
  it('names each HTML file by its path below the base, as the pages are planned, and leaves out one that is not UTF-8', async () => {
    const html = new Map<string, string | Uint8Array>([
      ['index.html', '<p>home'],
      ['posts/first/index.html', '<p>post'],
      ['about.html', new TextEncoder().encode('<p>about')],
      ['bad.html', new Uint8Array([0xff, 0xfe])],
    ])
    const read = async (file: string): Promise<string | Uint8Array> => html.get(file)!
    expect(await sitePages([...html.keys()], read)).toEqual([
      { rest: 'about.html', file: 'about.html', hrefs: [], declared: null },
      { rest: '', file: 'index.html', hrefs: [], declared: null },
      { rest: 'posts/first/', file: 'posts/first/index.html', hrefs: [], declared: null },
    ])
  })
})

describe('missingSheetsMessage', () => {
  it('names the missing paths and the base that serves them, in the words of the surface', () => {
    expect(missingSheetsMessage(['/fieldnotes/css/main.css', '/fieldnotes/css/syntax.css'], ['/fieldnotes/'], PLUGIN_WORDS)).toBe(
      "`/fieldnotes/css/main.css` and 1 more are not in the build output (the build server answered 404); they resolve with `base: '/fieldnotes/'`",
    )
    expect(missingSheetsMessage(['/style.css'], ['/', '/a/'], PLUGIN_WORDS)).toBe(
      "`/style.css` is not in the build output (the build server answered 404); it resolves with `base: '/'` or `base: '/a/'`: give the one the site is served below",
    )
    expect(missingSheetsMessage(['/theme/site.css'], [], PLUGIN_WORDS)).toBe(
      '`/theme/site.css` is not in the build output (the build server answered 404), and no `base` serves it: the page links a file the build does not have',
    )
  })
})

describe('resolveDirectoryOptions: the base nothing said', () => {
  it('is the site URL’s path, then `/`; only a base nothing said may be inferred', () => {
    expect(resolveDirectoryOptions({ siteUrl: 'https://user.github.io/fieldnotes' }, { env: {} })).toMatchObject({ base: '/fieldnotes/', baseSaid: true })
    expect(resolveDirectoryOptions({}, { env: { CRITICAL_CSS_SITE_URL: 'https://host.example/app/' } })).toMatchObject({ base: '/app/', baseSaid: true })
    expect(resolveDirectoryOptions({ siteUrl: 'https://host.example/app/', base: '/' }, { env: {} })).toMatchObject({ base: '/', baseSaid: true })
    expect(resolveDirectoryOptions({ siteUrl: 'https://host.example/' }, { env: {} })).toMatchObject({ base: '/', baseSaid: false })
    expect(resolveDirectoryOptions({}, { env: {}, framework: { name: 'Eleventy', base: '' } })).toMatchObject({ base: '/', baseSaid: true })
    expect(resolveDirectoryOptions({}, { env: {} })).toMatchObject({ base: '/', baseSaid: false })
  })
})
