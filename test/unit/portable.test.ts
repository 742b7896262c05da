/**
 * Issue 32: a page that links its stylesheets relatively (MkDocs, TypeDoc, Vite `base: './'`)
 * gets a critical CSS whose url()s resolve from where the page is, at any base and from disk.
 */
import { describe, expect, it } from 'vitest'
import { relativeCss, relativeUrl, rootPathCss } from '../../src/core/portable-css.ts'
import { linksRelatively } from '../../src/html/links.ts'

const head = (links: string) => `<!doctype html><html><head><title>x</title>${links}</head><body><p>x</p></body></html>`

describe('linksRelatively: whether a page finds its own stylesheets relative to where it is', () => {
  it.each([
    ['<link rel="stylesheet" href="css/base.css">', true],
    ['<link rel="stylesheet" href="../../assets/x.css"><link rel="stylesheet" href="./y.css">', true],
    // A font CDN says nothing about how the site links its own sheets.
    ['<link rel="stylesheet" href="https://fonts.example/css"><link rel="stylesheet" href="../css/a.css">', true],
    ['<link rel="stylesheet" href="/css/base.css">', false],
    ['<link rel="stylesheet" href="css/a.css"><link rel="stylesheet" href="/css/b.css">', false],
    ['<link rel="stylesheet" href="https://example.org/css/main.css">', false],
    ['<link rel="stylesheet" href="//example.org/css/main.css">', false],
    ['<base href="/docs/"><link rel="stylesheet" href="css/base.css">', false],
    ['<link rel="icon" href="favicon.ico">', false],
    ['', false],
    // What the strategies leave where a stylesheet was: a run over its own output decides the same.
    ['<link rel="stylesheet" href="css/a.css" media="print" data-critical-css-media fetchpriority="high">', true],
    ['<link rel="preload" as="style" href="css/a.css" data-critical-css-preload>', true],
    ['<link rel="preload" as="style" href="css/a.css" onload="this.rel=\'stylesheet\'">', true],
    ['<link rel="preload" as="style" href="css/a.css">', true],
    ['<link rel="stylesheet" href="css/a.css" media="print" onload="this.media=\'all\'">', true],
  ])('%s: %s', (links, expected) => {
    expect(linksRelatively(head(links))).toBe(expected)
  })
})

describe('relativeUrl: a root path as a path from the page', () => {
  it.each([
    ['/project/a/b/', '/project/fonts/x.woff2', '../../fonts/x.woff2'],
    ['/project/a/b/index.html', '/project/fonts/x.woff2', '../../fonts/x.woff2'],
    ['/project/', '/project/fonts/x.woff2', 'fonts/x.woff2'],
    ['/project/a/b.html', '/project/a/img/x.png?v=1#f', 'img/x.png?v=1#f'],
    ['/a/b/', '/a/b/', './'],
    ['/a/b/', '/a/', '../'],
    ['/', '/x:y.png', './x:y.png'],
  ])('from %s to %s: %s', (page, target, expected) => {
    expect(relativeUrl(page, target)).toBe(expected)
    // It leads where the root path did.
    const from = new URL(page, 'http://site')
    expect(new URL(expected, from).href).toBe(new URL(target, 'http://site').href)
  })
})

describe('relativeCss: the url()s below the prefix follow the page', () => {
  const page = 'http://127.0.0.1:4000/project/guide/install/'

  it('rewrites url(), image-set() and custom properties, and nothing else', () => {
    const css =
      '@font-face{font-family:f;src:url(/project/fonts/f.woff2) format("woff2")}' +
      '.a{background:url("/project/img/a b.png"),image-set("/project/img/x.png" 1x,url(/project/img/y.png) 2x)}' +
      ':root{--bg: url(/project/img/c.png)}' +
      '.keep{background:url(data:image/png;base64,AAAA),url(#g),url(https://cdn.example/x.png),url(/other/x.png),url(img/rel.png)}'
    expect(relativeCss(css, page, '/project/')).toBe(
      '@font-face{font-family:f;src:url(../../fonts/f.woff2) format("woff2")}' +
        '.a{background:url("../../img/a b.png"),image-set("../../img/x.png" 1x,url(../../img/y.png) 2x)}' +
        ':root{--bg: url(../../img/c.png)}' +
        '.keep{background:url(data:image/png;base64,AAAA),url(#g),url(https://cdn.example/x.png),url(/other/x.png),url(img/rel.png)}',
    )
  })

  it('reads url()s from the CSS tokens: not in comments, strings or type(), wherever else they stand', () => {
    const css =
      '/* url(/project/a.png) */.a::after{content:"url(/project/b.png)"}' +
      '.b{background:image-set("/project/c.avif" type("image/avif") 1x, \'/project/c2.png\' 2x)}' +
      ':root{--img:url( "/project/d.png" );--set:image-set("/project/e.png" 1x)}' +
      '@media (min-width:1px){.c{mask:URL(/project/f.svg#m)}}'
    expect(relativeCss(css, page, '/project/')).toBe(
      '/* url(/project/a.png) */.a::after{content:"url(/project/b.png)"}' +
        '.b{background:image-set("../../c.avif" type("image/avif") 1x, "../../c2.png" 2x)}' +
        ':root{--img:url(../../d.png);--set:image-set("../../e.png" 1x)}' +
        '@media (min-width:1px){.c{mask:url(../../f.svg#m)}}',
    )
  })

  it('gives the same bytes for CSS without a root url(), and when run twice', () => {
    const css = '.hero{min-height:100vh;color:#fff}'
    expect(relativeCss(css, page, '/')).toBe(css)
    const once = relativeCss('.a{background:url(/img/a.png)}', page, '/')
    expect(once).toBe('.a{background:url(../../../img/a.png)}')
    expect(relativeCss(once, page, '/')).toBe(once)
  })
})

describe('rootPathCss: a stylesheet inlined whole names the files its url()s named from its own address (issue 35)', () => {
  const sheet = new URL('https://site.test/assets/css/app.css')
  it('resolves relative URLs to root paths, in every place a URL stands, and leaves the rest byte for byte', () => {
    const css = `.a{background:url(img/a.png)}\n.b{background:url("../b.png?v=1#x")}\n.c{background-image:image-set("c.png" 1x,'c2.png' 2x)}\n.d{--bg:url( d.svg )}`
    expect(rootPathCss(css, sheet)).toBe(`.a{background:url(/assets/css/img/a.png)}\n.b{background:url(/assets/b.png?v=1#x)}\n.c{background-image:image-set("/assets/css/c.png" 1x,"/assets/css/c2.png" 2x)}\n.d{--bg:url(/assets/css/d.svg)}`)
  })
  it('leaves root paths, other hosts, data: URLs and fragments as they are', () => {
    const css = '.a{background:url(/x.png)}.b{background:url(https://cdn.test/y.png)}.c{background:url(//cdn.test/z.png)}.d{background:url(data:image/png;base64,AAAA)}.e{fill:url(#grad)}'
    expect(rootPathCss(css, sheet)).toBe(css)
  })
  it('gives up on a sheet that imports another: the import is a request inlining would not save', () => {
    expect(rootPathCss('@import "base.css";.a{color:red}', sheet)).toBeNull()
    expect(rootPathCss('@IMPORT url(base.css);', sheet)).toBeNull()
  })
})
