/** `unplugin-critical-css/runtime`: a server-rendered page gets its route's critical CSS as a built file would, or passes through as it is. */
import { describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { applyCriticalCss, loadManifest, ManifestError, routeOf, type CriticalCssManifest } from '../../src/runtime.ts'

const CSS = '.hero{min-height:100vh}'
const page = (links: string[], body = '<h1 class="hero">Hi</h1>'): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${links.map((href) => `<link rel="stylesheet" href="${href}">`).join('')}</head><body>${body}</body></html>`

const MANIFEST: CriticalCssManifest = {
  version: 1,
  preload: 'loader',
  loaderSrc: '/critical-css-loader.0123abcd.js',
  routes: [
    { route: '/[...rest]', sheets: ['/assets/app.css'], css: '.rest{}' },
    { route: '/blog/[slug]', sheets: ['/assets/app.css', '/assets/blog.css'], css: CSS },
    { route: '/blog/new', sheets: ['/assets/app.css'], css: '.new{}' },
    { route: '/', sheets: ['/assets/app.css'], css: '.home{}' },
    { route: '/shop/(group)/[[lang]]/items/:id', sheets: [], css: '.item{}' },
  ],
}

describe('routes', () => {
  const loaded = loadManifest(MANIFEST)
  const routeFor = (url: string): string | null => routeOf(loaded, url)?.route ?? null

  it('finds the most specific route of a URL’s path: a static one before a parameter, before a rest; query, hash and trailing slash aside', () => {
    const expected: Record<string, string> = {
      '/blog/new': '/blog/new',
      '/blog/first-post?ref=x#top': '/blog/[slug]',
      '/blog/first-post/': '/blog/[slug]',
      'https://shop.example/blog/long-post': '/blog/[slug]',
      '/': '/',
      '/about/team': '/[...rest]',
      '/shop/items/7': '/shop/(group)/[[lang]]/items/:id',
      '/shop/de/items/7': '/shop/(group)/[[lang]]/items/:id',
    }
    expect(Object.fromEntries(Object.keys(expected).map((url) => [url, routeFor(url)]))).toEqual(expected)
  })
})

describe('applyCriticalCss', () => {
  const loaded = loadManifest(MANIFEST)

  it('a page of a route gets the route’s CSS exactly as the inliner gives a built file, the same strategy and loader', () => {
    const html = page(['/assets/app.css', '/assets/blog.css'])
    const expected = inlineCriticalCss(html, CSS, { preload: 'loader', loaderSrc: MANIFEST.loaderSrc! }).html
    expect(applyCriticalCss(html, '/blog/first-post', loaded)).toBe(expected)
    expect(applyCriticalCss(html, '/blog/first-post', loaded, { nonce: 'abc123' })).toBe(inlineCriticalCss(html, CSS, { preload: 'loader', loaderSrc: MANIFEST.loaderSrc!, nonce: 'abc123' }).html)
    expect(expected).toContain(`<style data-critical-css>${CSS}</style>`)
  })

  it('passes a page through as it is (the same string) when no route matches, or it links other sheets than the route’s pages did', () => {
    const only = loadManifest({ ...MANIFEST, routes: [MANIFEST.routes[1]!] })
    const html = page(['/assets/app.css', '/assets/blog.css'])
    expect(applyCriticalCss(html, '/about', only)).toBe(html)
    for (const other of [page(['/assets/app.css']), page(['/assets/blog.css', '/assets/app.css']), page(['/assets/app.css', '/assets/blog.css', '/assets/extra.css']), page(['/assets/app.css', '/assets/blog.v2.css'])]) {
      expect(applyCriticalCss(other, '/blog/first-post', only)).toBe(other)
    }
  })

  it('a page it already gave the CSS to is left as it is', () => {
    const once = applyCriticalCss(page(['/assets/app.css', '/assets/blog.css']), '/blog/a', loaded)
    expect(applyCriticalCss(once, '/blog/a', loaded)).toBe(once)
  })
})

describe('loadManifest', () => {
  it('refuses what is not a manifest, naming the field and saying to build again', () => {
    const cases: [unknown, RegExp][] = [
      [null, /^The critical CSS manifest is not an object: build again to write it\.$/],
      [{ ...MANIFEST, version: 2 }, /manifest version is 2, not 1/],
      [{ ...MANIFEST, preload: 'eager' }, /manifest preload is "eager", not one of loader, body, media, swap, none/],
      [{ ...MANIFEST, loaderSrc: undefined }, /manifest loaderSrc is missing, which preload 'loader' needs/],
      [{ ...MANIFEST, routes: [{ route: 'blog', sheets: [], css: '' }] }, /manifest routes\[0\]\.route is not a path starting with \//],
      [{ ...MANIFEST, routes: [{ route: '/', sheets: [1], css: '' }] }, /manifest routes\[0\]\.sheets is not a list of strings/],
      [{ ...MANIFEST, routes: [MANIFEST.routes[0], MANIFEST.routes[0]] }, /manifest routes\[1\]\.route names \/\[\.\.\.rest\] a second time/],
    ]
    for (const [value, message] of cases) {
      const error = (() => {
        try {
          loadManifest(value)
          return null
        } catch (caught) {
          return caught
        }
      })()
      expect(error, JSON.stringify(value)).toBeInstanceOf(ManifestError)
      expect((error as Error).message).toMatch(message)
    }
  })
})
