/**
 * The request-time reader of plain pages (html/plain-head.ts) against the full scan
 * (html/scan.ts, htmlparser2's tokenizer and the standard's tree rules): on generated pages,
 * where it reads a page at all, its outline is the scan's, and the inliner given either makes
 * the same bytes; the framework shapes it exists for are read, not given up on.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { inlineWithOutline } from '../../src/html/inline-core.ts'
import type { HtmlOutline } from '../../src/html/outline.ts'
import { plainHeadOutline } from '../../src/html/plain-head.ts'
import { scanHtml } from '../../src/html/scan.ts'

/** An outline as data: its sets as the offsets of what they hold. */
function plainData(outline: HtmlOutline): unknown {
  return { ...outline, linksAfterHead: [...outline.linksAfterHead].map((tag) => tag.start), bodyLinksBeforeContent: [...outline.bodyLinksBeforeContent].map((tag) => tag.start) }
}

const value = fc.constantFrom('/a.css', '/b c.css', '/a.css?x=1&amp;y=2', '/a.css?x=1&y=2', '/&#97;.css', '/&#x61;.css', '/a&copy;.css', '/a&copy.css', '/a&lt;b', '/a&foo;', '/a&constructor;', '/a&toString;b', '&', '/a.css?v=1&', 'x"y', "x'y", '', '/a>b', '/é.css', '/&#0;', '/&#x80;')
const quoted = fc.tuple(value, fc.constantFrom('"', "'", '')).map(([text, quote]) => {
  if (quote === '') return /[\s"'<>=`]/.test(text) || text === '' ? `"${text.replaceAll('"', '&quot;')}"` : text
  return `${quote}${text.replaceAll(quote, quote === '"' ? '&quot;' : '&apos;')}${quote}`
})
const attribute = fc.oneof(
  fc.tuple(fc.constantFrom('rel', 'REL', 'href', 'Href', 'media', 'as', 'property', 'content', 'charset', 'data-critical-css', 'nonce', 'onload', 'x=y', 'a"b'), fc.constantFrom('=', ' = ', '= '), quoted).map(([name, eq, text]) => `${name}${eq}${text}`),
  fc.constantFrom('rel=stylesheet', 'rel="stylesheet"', "rel='preload' as=style", 'href=/s.css', 'disabled', 'crossorigin', 'rel=stylesheet rel=icon', '/', 'media=print', 'media="screen and (min-width: 1px)"'),
)
const tagOf = (name: string) =>
  fc.tuple(fc.constantFrom(name, name.toUpperCase()), fc.array(attribute, { maxLength: 4 }), fc.constantFrom('>', '/>', ' />', ' >')).map(([tag, attributes, end]) => `<${tag}${attributes.map((each) => ` ${each}`).join('')}${end}`)
const headItem = fc.oneof(
  { weight: 5, arbitrary: tagOf('link') },
  { weight: 2, arbitrary: tagOf('meta') },
  tagOf('base'),
  fc.tuple(tagOf('style'), fc.constantFrom('a{}', 'a{b:c}</stylex>', '</styl', '', 'x</style', '<!-- </style> -->')).map(([open, text]) => `${open}${text}</style>`),
  fc.tuple(fc.constantFrom('<title>', '<TITLE lang=en>'), fc.constantFrom('T', 'a <b> c', '</titlex>', '&amp;')).map(([open, text]) => `${open}${text}</title>`),
  fc.tuple(fc.constantFrom('<script>', '<script type="module" src="/m.js">', '<SCRIPT async>'), fc.constantFrom('', 'var a = "</head>"', 'document.write("<link rel=stylesheet href=w.css>")', '<!--<script>x</script>-->', '<!--')).map(([open, text]) => `${open}${text}</script>`),
  fc.constantFrom('<noscript><link rel="stylesheet" href="/n.css"></noscript>', '<noscript><p>no</p></noscript>', '<noscript><style>a{}</style></noscript>'),
  fc.constantFrom('<!-- c -->', '<!---->', '<!-->', '<!-- a -- b -->', '<!-- <link rel=stylesheet href=c.css> -->', '<!-- x --!> -->', '<!x>', '<?x>'),
  fc.constantFrom(' ', '\n  ', '\t', 'text', '<template><link rel=stylesheet href=t.css></template>', '<div>', '<constructor>x</constructor>', '</p>', '<', '<style data-critical-css>old{}</style>', '<link rel=preload as=font href=/f.woff2 data-critical-css>'),
)
/** Mostly what a plain page has, now and then what makes one not plain. */
const mostly = <T>(usual: readonly T[], rare: readonly T[]) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: fc.constantFrom(...rare) })
const page = fc
  .record({
    bom: fc.boolean(),
    doctype: fc.constantFrom('', '<!doctype html>', '<!DOCTYPE HTML>\n', '<!-- before -->\n<!doctype html>'),
    html: fc.constantFrom('', '<html>', '<html lang="en">', '<HTML data-x=1>', '<html a="<head>">'),
    head: mostly(['<head>', '<HEAD data-x="y">', '<head >', ''], ['<head/>']),
    items: fc.array(fc.oneof({ weight: 6, arbitrary: headItem.filter((item) => !/^(?:<!-->|<!x>|<\?x>|text|<div>|<\/p>|<|<template|<!-- x --!>|<noscript><[ps])/.test(item)) }, { weight: 1, arbitrary: headItem }), { maxLength: 8 }),
    headEnd: mostly(['</head>', '</HEAD >', '</head a=">">'], ['']),
    between: mostly(['', '\n', '<!-- gap -->'], ['x', '<link rel=stylesheet href=/late.css>']),
    body: mostly(['<body>', '<body class="page">', '<BODY>'], ['', '<bodyx>', '\n<!-- end -->', '<h1 class=t>Hi</h1>', '<main>', 'Text first', '< 3', '<frameset>', '<template>']),
    content: mostly(['<p>Hi</p></body></html>', '<main><h1>x</h1></main>', '', '<svg><style>a{}</style></svg>'], ['<link rel=stylesheet href=/b.css>', '<script>var s = "<link rel=x>"</script>']),
  })
  .map((p) => `${p.bom ? '\ufeff' : ''}${p.doctype}${p.html}${p.head}${p.items.join('')}${p.headEnd}${p.between}${p.body}${/^<[a-z]/i.test(p.body) ? p.content : ''}`)

const CSS = '.hero{min-height:100vh}'

describe('plainHeadOutline', () => {
  it('reads a page as the full scan does, wherever it reads it', () => {
    let read = 0
    fc.assert(
      fc.property(page, (html) => {
        const plain = plainHeadOutline(html, { readBody: () => 'links' })
        if (plain === null) return
        read++
        expect(plainData(plain)).toEqual(plainData(scanHtml(html, { readBody: () => 'links' })))
      }),
      { numRuns: 3000 },
    )
    // The generator makes plain pages often enough for the comparison to mean something.
    expect(read).toBeGreaterThan(300)
  })

  it('makes the inliner give the same bytes as the full scan, for every strategy it serves', () => {
    fc.assert(
      fc.property(page, fc.constantFrom('loader', 'media', 'swap', 'none'), fc.boolean(), (html, preload, nonce) => {
        const options = { preload, loaderSrc: '/critical-css-loader.js', ...(nonce ? { nonce: 'bm9uY2U=' } : {}) } as const
        const plain = inlineWithOutline(html, CSS, options, plainHeadOutline)
        if (plain.html === html && plainHeadOutline(html, { readBody: () => 'links' }) === null) return
        expect(plain).toEqual(inlineCriticalCss(html, CSS, options))
      }),
      { numRuns: 2000 },
    )
  })

  it('reads the shapes the frameworks render', () => {
    const pages = [
      // SvelteKit (adapter-node)
      '<!doctype html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8" />\n    <meta name="viewport" content="width=device-width, initial-scale=1" />\n    <link href="../_app/immutable/assets/0.css" rel="stylesheet">\n\t\t<link rel="modulepreload" href="../_app/immutable/entry/start.js">\n\t\t<title>hello · Lantern Shop</title>\n  </head>\n  <body data-sveltekit-preload-data="hover">\n    <div style="display: contents"><header class="post-header"></header>\n\t\t\t<script>\n\t\t\t\t{ __sveltekit_1 = {}; }\n\t\t\t</script>\n\t\t</div>\n  </body>\n</html>\n',
      // Nuxt 4 (nuxt build)
      '<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/_nuxt/entry.css" crossorigin><link rel="modulepreload" as="script" crossorigin href="/_nuxt/B1.js"><script type="module" src="/_nuxt/B1.js" crossorigin></script></head><body><div id="__nuxt"><article></article></div><div id="teleports"></div><script type="application/json" data-nuxt-data="nuxt-app" data-ssr="true" id="__NUXT_DATA__">[{"state":1}]</script><script>window.__NUXT__={};window.__NUXT__.config={public:{},app:{baseURL:"/",buildId:"x",buildAssetsDir:"/_nuxt/",cdnURL:""}}</script></body></html>',
      // Astro 7 (node adapter)
      '<!DOCTYPE html><html lang="en"> <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>hello</title><link rel="stylesheet" href="/_astro/_slug_.Bx1.css"></head> <body> <header class="post-header"><h1>hello</h1></header> </body></html>',
    ]
    for (const html of pages) {
      const plain = plainHeadOutline(html, { readBody: () => 'links' })
      expect(plain).not.toBeNull()
      expect(plainData(plain!)).toEqual(plainData(scanHtml(html, { readBody: () => 'links' })))
    }
  })
})
