/** `unplugin-critical-css/runtime`: a server-rendered page gets its route's critical CSS as a built file would, or passes through as it is. */
import { describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import type { PageInlineInputs } from '../../src/html/inline-inputs.ts'
import { applyCriticalCss, loadManifest, ManifestError, routeOf, type CriticalCssManifest } from '../../src/runtime.ts'
import { manifestRoute } from '../fixtures/manifest-route.ts'

const CSS = '.hero{min-height:100vh}'
const page = (links: string[], body = '<h1 class="hero">Hi</h1>'): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${links.map((href) => `<link rel="stylesheet" href="${href}">`).join('')}</head><body>${body}</body></html>`

const HOW = { preload: 'loader', loaderSrc: '/critical-css-loader.0123abcd.js' } as const
const APP = page(['/assets/app.css'])
/** A route made on `sample` as a build makes it, its pages needing nothing but the CSS unless `inputs` say so. */
const route = (name: string, css: string, sample = APP, inputs: Partial<PageInlineInputs> = {}) => manifestRoute(name, sample, css, HOW, inputs)

const MANIFEST: CriticalCssManifest = {
  version: 2,
  ...HOW,
  base: '/',
  routes: [
    route('/[...rest]', '.rest{}'),
    route('/blog/[slug]', CSS, page(['/assets/app.css', '/assets/blog.css'])),
    route('/blog/new', '.new{}'),
    route('/', '.home{}'),
    route('/shop/(group)/[[lang]]/items/:id', '.item{}'),
    route('/posts/:slug()', '.post{}'),
    route('/news/:lang?', '.news{}'),
    route('/docs/:path(.*)*', '.docs{}'),
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
      '/posts/hello': '/posts/:slug()',
      '/news': '/news/:lang?',
      '/news/de': '/news/:lang?',
      '/docs/a/b/c': '/docs/:path(.*)*',
    }
    expect(Object.fromEntries(Object.keys(expected).map((url) => [url, routeFor(url)]))).toEqual(expected)
  })

  it('names routes below the base: a URL is matched by its path below it, and one outside it has no route', () => {
    const below = loadManifest({ ...MANIFEST, base: '/docs/' })
    const routeBelow = (url: string): string | null => routeOf(below, url)?.route ?? null
    expect(routeBelow('/docs/blog/new')).toBe('/blog/new')
    expect(routeBelow('/docs/blog/a?x=1')).toBe('/blog/[slug]')
    expect(routeBelow('/docs/')).toBe('/')
    expect(routeBelow('/docs')).toBe('/')
    expect(routeBelow('/blog/new')).toBeNull()
    expect(routeBelow('/docsx/blog/new')).toBeNull()
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
    // Another page of the route: another title, other metas and scripts, another body.
    const other = page(['/assets/app.css', '/assets/blog.css'], '<h1 class="hero">Another</h1><script>var x = "</head>"</script>').replace('<title>t</title>', '<title>Another post &amp; more</title><meta name="description" content="x"><link rel="canonical" href="/blog/another?x=1&amp;y=2"><script type="module" src="/a.js"></script>')
    expect(applyCriticalCss(other, '/blog/another', loaded, { nonce: 'abc123' })).toBe(inlineCriticalCss(other, CSS, { preload: 'loader', loaderSrc: MANIFEST.loaderSrc!, nonce: 'abc123' }).html)
  })

  it('passes a page through as it is (the same string) when no route matches, or it links other sheets than the route’s pages did', () => {
    const only = loadManifest({ ...MANIFEST, routes: [MANIFEST.routes[1]!] })
    const html = page(['/assets/app.css', '/assets/blog.css'])
    expect(applyCriticalCss(html, '/about', only)).toBe(html)
    for (const other of [page(['/assets/app.css']), page(['/assets/blog.css', '/assets/app.css']), page(['/assets/app.css', '/assets/blog.css', '/assets/extra.css']), page(['/assets/app.css', '/assets/blog.v2.css'])]) {
      expect(applyCriticalCss(other, '/blog/first-post', only)).toBe(other)
    }
  })

  it('a route’s inputs act as a built file’s: a sheet the render could not read stays blocking, a small sheet goes in whole, fonts are preloaded', () => {
    const html = page(['/assets/app.css', '/assets/blog.css'])
    const withInputs = (inputs: Partial<PageInlineInputs>) => loadManifest({ ...MANIFEST, routes: [route('/blog/[slug]', CSS, page(['/assets/app.css', '/assets/blog.css'], '<p>the sample</p>'), inputs)] })
    const expected = (inputs: Parameters<typeof inlineCriticalCss>[2]) => inlineCriticalCss(html, CSS, { preload: 'loader', loaderSrc: MANIFEST.loaderSrc!, ...inputs }).html

    const blocking = applyCriticalCss(html, '/blog/a', withInputs({ keepBlocking: ['/assets/blog.css'] }))
    expect(blocking).toBe(expected({ keepBlocking: (href) => href === '/assets/blog.css' }))
    expect(blocking).toContain('<link rel="stylesheet" href="/assets/blog.css">')

    const whole = applyCriticalCss(html, '/blog/a', withInputs({ wholeSheets: { '/assets/app.css': '.app{color:red}', '/assets/blog.css': '.blog{color:blue}' } }))
    expect(whole).toContain('.app{color:red}')
    expect(whole).not.toContain('href="/assets/app.css"')

    const fonts = applyCriticalCss(html, '/blog/a', withInputs({ fontPreloads: ['/fonts/a.woff2'] }))
    expect(fonts).toBe(expected({ fontPreloads: ['/fonts/a.woff2'] }))
    expect(fonts).toContain('href="/fonts/a.woff2"')
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
      [{ ...MANIFEST, version: 1 }, /manifest version is 1, not 2 \(a build of another release wrote it\)/],
      [{ ...MANIFEST, base: 'docs' }, /manifest base is not a path that starts and ends with \//],
      [{ ...MANIFEST, routes: [{ route: 'blog', sheets: [], css: '' }] }, /manifest routes\[0\]\.route is not a path starting with \//],
      [{ ...MANIFEST, routes: [{ route: '/', sheets: [1], css: '' }] }, /manifest routes\[0\]\.sheets is not a list of strings/],
      [{ ...MANIFEST, routes: [MANIFEST.routes[0], MANIFEST.routes[0]] }, /manifest routes\[1\]\.route names \/\[\.\.\.rest\] a second time/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: undefined }] }, /manifest routes\[0\]\.head is not an object/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, links: '<link>' } }] }, /manifest routes\[0\]\.head\.links is not a list of strings/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, styleBefore: 1 } }] }, /manifest routes\[0\]\.head\.styleBefore is not the index of a link/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, style: null } }] }, /manifest routes\[0\]\.head\.styleBefore is not -1 \(no style\)/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, style: [] } }] }, /manifest routes\[0\]\.head\.style is neither null nor a list of strings/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, rewrites: [] } }] }, /manifest routes\[0\]\.head\.rewrites is not a text or null for each link/],
      [{ ...MANIFEST, routes: [{ ...MANIFEST.routes[0], head: { ...MANIFEST.routes[0]!.head, hashes: undefined } }] }, /manifest routes\[0\]\.head\.hashes is not a list of strings/],
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
