import { describe, expect, it } from 'vitest'
import { assetUrl, basePath, pagesPrefix, planPages } from '../../src/core/pages.ts'

const site = new URL('https://site.example')
const emitted = ['index.html', 'a/index.html', 'b.html', 'c/index.html', 'c.html', 'docs/x y.html', 'assets/app.js']
const page = (url: string, html: string | null = null) => ({ url, html })

describe('planPages', () => {
  it('maps URL paths to emitted files', () => {
    const pages = planPages([page('/')], emitted, { siteUrl: site, base: '/' })
    expect(pages).toEqual([{ url: 'https://site.example/', file: 'index.html' }])
    const each = (url: string) => planPages([page(url)], emitted, { siteUrl: site, base: '/' })[0]!.file
    expect(each('/a/')).toBe('a/index.html')
    expect(each('/a')).toBe('a/index.html')
    expect(each('/b')).toBe('b.html')
    // both exist: the .html file first
    expect(each('/c')).toBe('c.html')
    expect(each('/docs/x%20y.html')).toBe('docs/x y.html')
    expect(each('https://elsewhere.example/a/?q=1')).toBe('a/index.html')
  })

  it('strips a path base and refuses pages outside it', () => {
    expect(planPages([page('/app/a/')], emitted, { siteUrl: site, base: '/app/' })[0]!.file).toBe('a/index.html')
    expect(planPages([page('/app')], emitted, { siteUrl: site, base: '/app/' })[0]!.file).toBe('index.html')
    expect(() => planPages([page('/a/')], emitted, { siteUrl: site, base: '/app/' })).toThrow(/outside the build's base path "\/app\/"/)
  })

  it('below a relative, absolute-URL or auto base, pages live below the site URL', () => {
    for (const base of ['./', '', 'auto', 'https://cdn.example/x/', '//cdn.example/']) {
      expect(basePath(base)).toBeNull()
      expect(pagesPrefix(base, new URL('https://site.example/app/'))).toBe('/app/')
    }
    expect(basePath('/app')).toBe('/app/')
    const app = new URL('https://site.example/app/')
    expect(planPages(null, ['about.html'], { siteUrl: app, base: './' })).toEqual([{ url: 'https://site.example/app/about.html', file: 'about.html' }])
    expect(planPages([page('pricing/')], ['pricing/index.html'], { siteUrl: app, base: 'auto' })).toEqual([
      { url: 'https://site.example/app/pricing/', file: 'pricing/index.html' },
    ])
  })

  it('finds .htm files, and never turns an encoded slash into a folder', () => {
    const each = (url: string, files: string[]) => planPages([page(url)], files, { siteUrl: site, base: '/' })[0]!.file
    expect(each('/', ['index.htm'])).toBe('index.htm')
    expect(each('/a', ['a.htm'])).toBe('a.htm')
    expect(() => each('/a%2Fb', ['a/b.html'])).toThrow(/would be "a%2Fb\.html"/)
  })

  it('without pages: every emitted HTML file at its URL below the base', () => {
    expect(planPages(null, emitted, { siteUrl: site, base: '/app/' }).map((p) => p.url)).toEqual([
      'https://site.example/app/a/',
      'https://site.example/app/b.html',
      'https://site.example/app/c.html',
      'https://site.example/app/c/',
      'https://site.example/app/docs/x%20y.html',
      'https://site.example/app/',
    ])
    expect(planPages(null, ['assets/app.js'], { siteUrl: null, base: '/' })).toEqual([])
    expect(() => planPages(null, emitted, { siteUrl: null, base: '/' })).toThrow(/CRITICAL_CSS_SITE_URL/)
  })

  it('errors name the page and the files', () => {
    expect(() => planPages([page('/nope')], emitted, { siteUrl: site, base: '/' })).toThrow(
      /page https:\/\/site\.example\/nope would be "nope\.html" or "nope\/index\.html" or "nope\.htm" or "nope\/index\.htm", which the build did not emit \(emitted HTML files: index\.html, a\/index\.html/,
    )
    expect(() => planPages([page('/', 'home.html')], emitted, { siteUrl: site, base: '/' })).toThrow(/names the HTML file "home\.html"/)
    expect(() => planPages([page('/'), page('/index.html')], emitted, { siteUrl: site, base: '/' })).toThrow(/are both "index\.html"/)
    expect(() => planPages([page('/x')], emitted, { siteUrl: null, base: '/' })).toThrow(/CRITICAL_CSS_SITE_URL/)
    expect(() => planPages([page('mailto:a@b.c')], emitted, { siteUrl: site, base: '/' })).toThrow(/not an http\(s\) URL/)
  })
})

describe('assetUrl: how a page names a file at the root of the output', () => {
  it.each([
    ['/', 'index.html', '/x.js'],
    ['/', 'a/b/index.html', '/x.js'],
    ['/docs/', 'guide.html', '/docs/x.js'],
    ['/docs', 'guide.html', '/docs/x.js'],
    ['https://cdn.example.com/site/', 'a/index.html', 'https://cdn.example.com/site/x.js'],
    ['//cdn.example.com', 'index.html', '//cdn.example.com/x.js'],
    ['./', 'index.html', 'x.js'],
    ['./', 'a/b/index.html', '../../x.js'],
    ['', 'a/page.html', '../x.js'],
    ['auto', 'a/index.html', '../x.js'],
  ])('base %j, page %s: %s', (base, page, expected) => {
    expect(assetUrl(base, page, 'x.js')).toBe(expected)
    // Wherever the page is served, the name leads to the file below the same root.
    if (!/^(?:https?:)?\/\//.test(expected)) {
      const root = basePath(base) ?? '/'
      const served = new URL(`${root}${page}`, 'http://site')
      expect(new URL(expected, served).pathname).toBe(`${root}x.js`)
    }
  })
})
