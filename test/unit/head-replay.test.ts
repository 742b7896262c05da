/**
 * A route's head edits (html/head-plan.ts, made at build time on its sample; html/head-replay.ts,
 * made again on each response over the reader of plain pages, html/plain-head.ts) against the
 * full inliner (html/inline.ts over htmlparser2's tokenizer and the standard's tree rules): on
 * generated pages and on other pages of the same route (another title, other scripts and
 * metas, another body, a link more or less), the edits give the inliner's bytes for that page
 * or nothing at all; and the shapes the frameworks render are read, not given up on.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { headPlanOf } from '../../src/html/head-plan.ts'
import { readyHeadPlan, replayHeadPlan } from '../../src/html/head-replay.ts'
import { inlineCriticalCss, type InlineOptions } from '../../src/html/inline.ts'
import { stylesheetHrefs } from '../../src/html/scan.ts'

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
/** A stylesheet link as pages write them, now and then one the inliner treats its own way. */
const sheet = fc.constantFrom('<link rel="stylesheet" href="/s.css">', '<link rel=stylesheet href=/a.css>', '<link href="/a.css" rel="stylesheet" crossorigin>', '<link rel="stylesheet" href="/m.css" media="(min-width: 40em)">', '<link rel="stylesheet" href="/p.css" media="print">', '<link rel="stylesheet" href="/o.css" onload="x()">', '<link rel="stylesheet" href="/n.css" nonce="abc">', '<link rel="preload" as="style" href="/w.css" onload="this.rel=\'stylesheet\'">', '<LINK REL="Stylesheet" HREF="/u.css">', '<link rel="&#115;tylesheet" href="/e.css">')
/** Mostly what a plain page has, now and then what makes one not plain. */
const mostly = <T>(usual: readonly T[], rare: readonly T[]) => fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: fc.constantFrom(...rare) })
const pageParts = fc
  .record({
    bom: fc.boolean(),
    doctype: fc.constantFrom('', '<!doctype html>', '<!DOCTYPE HTML>\n', '<!-- before -->\n<!doctype html>'),
    html: fc.constantFrom('', '<html>', '<html lang="en">', '<HTML data-x=1>', '<html a="<head>">'),
    head: mostly(['<head>', '<HEAD data-x="y">', '<head >', ''], ['<head/>']),
    items: fc.array(fc.oneof({ weight: 3, arbitrary: sheet }, { weight: 6, arbitrary: headItem.filter((item) => !/^(?:<!-->|<!x>|<\?x>|text|<div>|<\/p>|<|<template|<!-- x --!>|<noscript><[ps])/.test(item)) }, { weight: 1, arbitrary: headItem }), { maxLength: 8 }),
    headEnd: mostly(['</head>', '</HEAD >', '</head a=">">'], ['']),
    between: mostly(['', '\n', '<!-- gap -->'], ['x', '<link rel=stylesheet href=/late.css>']),
    body: mostly(['<body>', '<body class="page">', '<BODY>'], ['', '<bodyx>', '\n<!-- end -->', '<h1 class=t>Hi</h1>', '<main>', 'Text first', '< 3', '<frameset>', '<template>']),
    content: mostly(['<p>Hi</p></body></html>', '<main><h1>x</h1></main>', '', '<svg><style>a{}</style></svg>'], ['<link rel=stylesheet href=/b.css>', '<script>var s = "<link rel=x>"</script>']),
  })


type Parts = { bom: boolean; doctype: string; html: string; head: string; items: string[]; headEnd: string; between: string; body: string; content: string }
const pageOf = (p: Parts): string => `${p.bom ? '\ufeff' : ''}${p.doctype}${p.html}${p.head}${p.items.join('')}${p.headEnd}${p.between}${p.body}${/^<[a-z]/i.test(p.body) ? p.content : ''}`

/** What another page of the same route changes: an item of the head more (any, a stylesheet link too) or less, a link written otherwise, another title, another body. */
const change = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), item: fc.oneof(headItem, sheet) }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('relink' as const), at: fc.nat(), item: sheet }),
  fc.record({ kind: fc.constant('title' as const), text: fc.constantFrom('Another post', 'a &amp; b', '</titlex>') }),
  fc.record({ kind: fc.constant('content' as const), text: fc.constantFrom('<p>Other</p></body></html>', '<main>long</main>', '', '<link rel=stylesheet href=/b.css>') }),
)
function changed(p: Parts, edits: readonly { kind: string; at?: number; item?: string; text?: string }[]): Parts {
  const items = [...p.items]
  let { content } = p
  for (const edit of edits) {
    if (edit.kind === 'insert') items.splice(edit.at! % (items.length + 1), 0, edit.item!)
    else if (edit.kind === 'remove' && items.length > 0) items.splice(edit.at! % items.length, 1)
    else if (edit.kind === 'relink') {
      const links = items.flatMap((item, index) => (/^<link/i.test(item) ? [index] : []))
      if (links.length > 0) items[links[edit.at! % links.length]!] = edit.item!
    }
    else if (edit.kind === 'title') {
      const at = items.findIndex((item) => /^<title/i.test(item))
      if (at !== -1) items[at] = `<title>${edit.text}</title>`
    } else if (edit.kind === 'content') content = edit.text!
  }
  return { ...p, items, content }
}

const CSS = '.hero{min-height:100vh}'
const NONCE = 'bm9uY2U='
/** A route's inputs as a build finds them: a strategy, and now and then a sheet kept blocking, one inlined whole, one looked up, a font preloaded. */
const inputs = fc.record({
  preload: fc.constantFrom('loader', 'media', 'swap', 'none'),
  keep: fc.constantFrom([], ['/a.css'], ['/s.css']),
  whole: fc.constantFrom<Record<string, string> | null>(null, { '/a.css': 'a{color:red}' }, { '/s.css': 's{}', '/a.css': 'a{}' }),
  lookedUp: fc.constantFrom([], ['/s.css']),
  fonts: fc.constantFrom([], ['/f.woff2']),
})
function optionsOf(html: string, given: { preload: string; keep: readonly string[]; whole: Readonly<Record<string, string>> | null; lookedUp: readonly string[]; fonts: readonly string[] }): Omit<InlineOptions, 'nonce'> {
  return {
    preload: given.preload as InlineOptions['preload'],
    loaderSrc: '/critical-css-loader.js',
    onlyWithStylesheets: stylesheetHrefs(html),
    keepBlocking: (href) => given.keep.includes(href),
    wholeSheet: (href) => given.whole?.[href] ?? null,
    lookedUp: (href) => given.lookedUp.includes(href),
    fontPreloads: given.fonts,
  }
}

describe('head edits made at build time, made again per response', () => {
  it('give a route’s other pages the full inliner’s bytes, or leave them as they are', () => {
    let planned = 0
    let remade = 0
    fc.assert(
      fc.property(pageParts, fc.array(change, { maxLength: 3 }), inputs, fc.boolean(), (parts, edits, given, withNonce) => {
        const sample = pageOf(parts)
        const options = optionsOf(sample, given)
        const made0 = headPlanOf(sample, CSS, options)
        if (made0 === null) return
        // As a server reads it from the manifest.
        const plan = readyHeadPlan(JSON.parse(JSON.stringify(made0)))
        planned++
        const nonce = withNonce ? { nonce: NONCE } : {}
        expect(replayHeadPlan(sample, plan, nonce.nonce)).toBe(inlineCriticalCss(sample, CSS, { ...options, ...nonce }).html)
        const other = pageOf(changed(parts, edits))
        const made = replayHeadPlan(other, plan, nonce.nonce)
        if (made === null) return
        remade++
        expect(made).toBe(inlineCriticalCss(other, CSS, { ...options, ...nonce }).html)
      }),
      { numRuns: 4000 },
    )
    // The generator makes plain pages, and other pages the edits are made on, often enough for the comparison to mean something.
    expect(planned).toBeGreaterThan(300)
    expect(remade).toBeGreaterThan(200)
  })

  it('are none where the inliner edits more than the head’s links: the body’s end (`body`), an earlier run’s style, a head with no stylesheet that blocks', () => {
    const html = '<!doctype html><html><head><title>t</title><link rel="stylesheet" href="/s.css"></head><body><p>x</p></body></html>'
    const options = optionsOf(html, { preload: 'loader', keep: [], whole: null, lookedUp: [], fonts: [] })
    expect(headPlanOf(html, CSS, options)).not.toBeNull()
    expect(headPlanOf(html, CSS, { ...options, preload: 'body' })).toBeNull()
    expect(headPlanOf(html.replace('<title>', '<style data-critical-css>old{}</style><title>'), CSS, options)).toBeNull()
    expect(headPlanOf(html.replace('<link rel="stylesheet"', '<link rel="stylesheet" media="print"'), CSS, options)).toBeNull()
  })

  it('are made on the shapes the frameworks render, and on their other pages', () => {
    const pages = [
      // SvelteKit (adapter-node)
      '<!doctype html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8" />\n    <meta name="viewport" content="width=device-width, initial-scale=1" />\n    <link href="../_app/immutable/assets/0.css" rel="stylesheet">\n\t\t<link rel="modulepreload" href="../_app/immutable/entry/start.js">\n\t\t<title>hello · Lantern Shop</title>\n  </head>\n  <body data-sveltekit-preload-data="hover">\n    <div style="display: contents"><header class="post-header"></header>\n\t\t\t<script>\n\t\t\t\t{ __sveltekit_1 = {}; }\n\t\t\t</script>\n\t\t</div>\n  </body>\n</html>\n',
      // Nuxt 4 (nuxt build)
      '<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/_nuxt/entry.css" crossorigin><link rel="modulepreload" as="script" crossorigin href="/_nuxt/B1.js"><script type="module" src="/_nuxt/B1.js" crossorigin></script></head><body><div id="__nuxt"><article></article></div><div id="teleports"></div><script type="application/json" data-nuxt-data="nuxt-app" data-ssr="true" id="__NUXT_DATA__">[{"state":1}]</script><script>window.__NUXT__={};window.__NUXT__.config={public:{},app:{baseURL:"/",buildId:"x",buildAssetsDir:"/_nuxt/",cdnURL:""}}</script></body></html>',
      // Astro 7 (node adapter)
      '<!DOCTYPE html><html lang="en"> <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>hello</title><link rel="stylesheet" href="/_astro/_slug_.Bx1.css"></head> <body> <header class="post-header"><h1>hello</h1></header> </body></html>',
    ]
    for (const html of pages) {
      const options = optionsOf(html, { preload: 'loader', keep: [], whole: null, lookedUp: [], fonts: [] })
      const made = headPlanOf(html, CSS, options)
      expect(made, html).not.toBeNull()
      const plan = readyHeadPlan(made!)
      const other = html.replace('hello', 'another post &amp; more').replace(/<\/body>/, '<p>more</p><script>x = "</head>"</script></body>').replace('<meta charset="utf-8">', '<meta charset="utf-8"><link rel="canonical" href="/blog/another?x=1&amp;y=2"><meta property="og:title" content="x">')
      expect(replayHeadPlan(other, plan)).toBe(inlineCriticalCss(other, CSS, options).html)
      expect(replayHeadPlan(other, plan, NONCE)).toBe(inlineCriticalCss(other, CSS, { ...options, nonce: NONCE }).html)
    }
  })
})
