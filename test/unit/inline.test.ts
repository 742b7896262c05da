import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { inlineCriticalCss, type InlineOptions } from '../../src/html/inline.ts'
import { blockingStylesheets, renderBlockingStylesheets } from '../../src/html/links.ts'
import { stylesheetHrefs } from '../../src/html/scan.ts'
import { PRELOAD_STRATEGIES, type PreloadStrategy } from '../../src/html/strategies.ts'
import { applyEdits } from '../fixtures/edits.ts'

const CSS = 'h1{color:red}'
const STYLE = `<style data-critical-css>${CSS}</style>`

interface Case {
  name: string
  html: string
  css?: string
  options?: InlineOptions
  expected: string
}

function run(cases: Case[]): void {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = inlineCriticalCss(c.html, c.css ?? CSS, c.options)
    expect(result.html).toBe(c.expected)
    expect(result.changed).toBe(c.expected !== c.html)
  })
}

describe('where the style goes', () => {
  run([
    {
      name: 'before the first render-blocking stylesheet, after what precedes it',
      html: '<html><head><meta charset="utf-8"><style>p{x:y}</style><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css"></head><body></body></html>',
      options: { preload: 'none' },
      expected: `<html><head><meta charset="utf-8"><style>p{x:y}</style>${STYLE}<link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css"></head><body></body></html>`,
    },
    {
      name: 'at the end of the head when no stylesheet blocks render',
      html: '<html><head><title>t</title><link rel="icon" href="/i.png"></head><body></body></html>',
      expected: `<html><head><title>t</title><link rel="icon" href="/i.png">${STYLE}</head><body></body></html>`,
    },
    {
      name: 'before the body content that ends a head without </head>',
      html: '<html><head><title>t</title>\n<body><p>x</p></body></html>',
      expected: `<html><head><title>t</title>\n${STYLE}<body><p>x</p></body></html>`,
    },
    {
      name: 'at the end of a document that ends inside the head',
      html: '<head><title>t</title>',
      expected: `<head><title>t</title>${STYLE}`,
    },
    {
      name: 'in a new <head> after <html> when there is none',
      html: '<!DOCTYPE html>\n<html lang="en">\n<body><p>x</p></body>\n</html>',
      expected: `<!DOCTYPE html>\n<html lang="en"><head>${STYLE}</head>\n<body><p>x</p></body>\n</html>`,
    },
    {
      name: 'in a new <head> after the doctype when there is no <html> either',
      html: '<!doctype html><p>x</p>',
      expected: `<!doctype html><head>${STYLE}</head><p>x</p>`,
    },
    {
      name: 'in a new <head> at the start, after a byte-order mark',
      html: '\uFEFF<p>x</p>',
      expected: `\uFEFF<head>${STYLE}</head><p>x</p>`,
    },
    {
      name: 'in the implied head of a document that never says <head>',
      html: '<title>t</title><link rel=stylesheet href=a.css><p>x',
      options: { preload: 'none' },
      expected: `<title>t</title>${STYLE}<link rel=stylesheet href=a.css><p>x`,
    },
    {
      name: 'before a stylesheet between </head> and <body>, which the parser puts in the head',
      html: '<head><title>t</title></head>\n<link rel="stylesheet" href="/late.css">\n<body></body>',
      options: { preload: 'none' },
      expected: `<head><title>t</title></head>\n${STYLE}<link rel="stylesheet" href="/late.css">\n<body></body>`,
    },
  ])
})

describe('what the style holds', () => {
  run([
    {
      name: '</style in any letter case cannot close the element',
      html: '<head></head>',
      css: 'a{content:"</style><script>alert(1)</script>"}b{c:"</STYLE >"}d{e:"</sTyLe"}',
      expected: '<head><style data-critical-css>a{content:"<\\/style><script>alert(1)</script>"}b{c:"<\\/STYLE >"}d{e:"<\\/sTyLe"}</style></head>',
    },
    {
      name: 'empty css inlines nothing and changes nothing',
      html: '<head><link rel="stylesheet" href="/a.css"></head>',
      css: '',
      expected: '<head><link rel="stylesheet" href="/a.css"></head>',
    },
    {
      name: 'whitespace-only css counts as empty',
      html: '<head></head>',
      css: ' \n\t',
      expected: '<head></head>',
    },
    {
      name: 'a nonce goes on the style',
      html: '<head></head>',
      options: { nonce: 'r4nd0m+/=' },
      expected: `<head><style data-critical-css nonce="r4nd0m+/=">${CSS}</style></head>`,
    },
  ])
})

const PAGE = '<head>\n  <link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0">\n</head>\n<body>\n  <p>x</p>\n</body>'

describe('strategies', () => {
  run([
    {
      name: 'body: preload in place, the stylesheet moved to the end of the body',
      html: PAGE,
      expected: `<head>\n  ${STYLE}<link rel="preload" as="style" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0" fetchpriority="low">\n</head>\n<body>\n  <p>x</p>\n<link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0"></body>`,
    },
    {
      name: 'media: print until loaded, with a noscript fallback',
      html: PAGE,
      options: { preload: 'media' },
      expected: `<head>\n  ${STYLE}<link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0" media="print" fetchpriority="high" onload="this.media='all'"><noscript><link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0"></noscript>\n</head>\n<body>\n  <p>x</p>\n</body>`,
    },
    {
      name: 'media: the original media comes back on load',
      html: "<head><link rel=stylesheet href=a.css media='screen and (min-width: 40em)'></head>",
      options: { preload: 'media' },
      expected: `<head>${STYLE}<link rel=stylesheet href=a.css media="print" fetchpriority="high" onload="this.media='screen and (min-width: 40em)'"><noscript><link rel=stylesheet href=a.css media='screen and (min-width: 40em)'></noscript></head>`,
    },
    {
      name: 'media: quotes in the media value cannot break the handler',
      html: `<head><link rel=stylesheet href=a.css media="x'&quot;y"></head>`,
      options: { preload: 'media' },
      expected: `<head>${STYLE}<link rel=stylesheet href=a.css media="print" fetchpriority="high" onload="this.media='x\\'&quot;y'"><noscript><link rel=stylesheet href=a.css media="x'&quot;y"></noscript></head>`,
    },
    {
      name: 'swap: preload switched to stylesheet on load, with a noscript fallback',
      html: PAGE,
      options: { preload: 'swap' },
      expected: `<head>\n  ${STYLE}<link rel="preload" as="style" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0" fetchpriority="low" onload="this.rel='stylesheet'"><noscript><link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0"></noscript>\n</head>\n<body>\n  <p>x</p>\n</body>`,
    },
    {
      name: 'swap: a link the page’s code looks up by href stays a stylesheet, held by its media (a lazy chunk’s loader would add a second one)',
      html: '<head><link rel="stylesheet" href="/kit.css"><link rel="stylesheet" href="/app.css"></head>',
      options: { preload: 'swap', lookedUp: (href: string) => href === '/kit.css' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/kit.css" media="print" fetchpriority="high" onload="this.media='all'"><noscript><link rel="stylesheet" href="/kit.css"></noscript><link rel="preload" as="style" href="/app.css" fetchpriority="low" onload="this.rel='stylesheet'"><noscript><link rel="stylesheet" href="/app.css"></noscript></head>`,
    },
    {
      name: 'none: links untouched',
      html: PAGE,
      options: { preload: 'none' },
      expected: `<head>\n  ${STYLE}<link rel="stylesheet" href="/a.css" crossorigin integrity="sha384-abc" nonce="n0">\n</head>\n<body>\n  <p>x</p>\n</body>`,
    },
    {
      name: 'body: several stylesheets keep their order at the end of the body',
      html: '<head><link rel="stylesheet" href="/1.css"><link rel="stylesheet" href="/2.css"></head><body>x</body>',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/1.css" fetchpriority="low"><link rel="preload" as="style" href="/2.css" fetchpriority="low"></head><body>x<link rel="stylesheet" href="/1.css"><link rel="stylesheet" href="/2.css"></body>`,
    },
    {
      name: 'body: a link the page’s code looks up by href (a framework started from an inline script in the body would not find it at the body’s end) stays as written, and so does every link before it; those after it move',
      html: '<head><link rel="stylesheet" href="/app.css"><link rel="stylesheet" href="/kit.css"><link rel="stylesheet" href="/page.css"></head><body>x</body>',
      options: { lookedUp: (href: string) => href === '/kit.css' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/app.css"><link rel="stylesheet" href="/kit.css"><link rel="preload" as="style" href="/page.css" fetchpriority="low"></head><body>x<link rel="stylesheet" href="/page.css"></body>`,
    },
    {
      name: 'body: the id stays with the stylesheet; the nonce option reaches the preload',
      html: '<head><link id="main" rel="stylesheet" href="/a.css"></head><body></body>',
      options: { nonce: 'abc' },
      expected: `<head><style data-critical-css nonce="abc">${CSS}</style><link rel="preload" as="style" href="/a.css" fetchpriority="low" nonce="abc"></head><body><link id="main" rel="stylesheet" href="/a.css"></body>`,
    },
    {
      name: 'body: the preload leaves the stylesheet its event handlers, so they do not run twice',
      html: '<head><link rel="stylesheet" href="/a.css" onerror="report()"></head><body></body>',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><body><link rel="stylesheet" href="/a.css" onerror="report()"></body>`,
    },
    {
      name: 'body: a stylesheet followed by a <style> stays, so the cascade keeps its order',
      html: '<head><link rel="stylesheet" href="/a.css"><style>p{}</style><link rel="stylesheet" href="/b.css"></head><body></body>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"><style>p{}</style><link rel="preload" as="style" href="/b.css" fetchpriority="low"></head><body><link rel="stylesheet" href="/b.css"></body>`,
    },
    {
      name: 'body: a stylesheet before one its author keeps blocking stays too',
      html: '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css" blocking="render"></head><body></body>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css" blocking="render"></head><body></body>`,
    },
    {
      name: "body: moved stylesheets go before the body's own first stylesheet",
      html: '<head><link rel="stylesheet" href="/a.css"></head><body><p>x</p><link rel="stylesheet" href="/b.css"><p>y</p></body>',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><body><p>x</p><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css"><p>y</p></body>`,
    },
    {
      name: 'body: a body that ends inside <svg> takes no stylesheet (it would be an SVG element)',
      html: '<head><link rel="stylesheet" href="/a.css"></head><body><svg><path d=""></body>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"></head><body><svg><path d=""></body>`,
    },
    {
      name: 'body: inline SVG icons, closed, leave the end of the body plain HTML',
      html: '<head><link rel="stylesheet" href="/a.css"></head><body><svg><use href="#i"/></svg><svg viewBox="0 0 1 1"><title>t</title><style>c{}</style></svg><p>x</p></body>',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><body><svg><use href="#i"/></svg><svg viewBox="0 0 1 1"><title>t</title><style>c{}</style></svg><p>x</p><link rel="stylesheet" href="/a.css"></body>`,
    },
    {
      name: 'body: an unclosed <style> in a MathML <mi> (HTML again) is raw text to the end: no place there',
      html: '<head><link rel="stylesheet" href="/a.css"></head><body><math><mi><style>p{}</svg>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"></head><body><math><mi><style>p{}</svg>`,
    },
    {
      name: 'body: a frameset document has no body to take it',
      html: '<head><link rel="stylesheet" href="/a.css"></head><frameset><frame src="x"></frameset>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"></head><frameset><frame src="x"></frameset>`,
    },
    {
      name: 'body: before a comment the input ends inside',
      html: '<head><link rel="stylesheet" href="/a.css"></head><p>x<!-- not closed',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><p>x<link rel="stylesheet" href="/a.css"><!-- not closed`,
    },
    {
      name: 'media and swap leave a link after </head> as it is (a <noscript> there would start the body)',
      html: '<head></head><link rel="stylesheet" href="/late.css"><body></body>',
      options: { preload: 'media' },
      expected: `<head></head>${STYLE}<link rel="stylesheet" href="/late.css"><body></body>`,
    },
    {
      name: 'an empty unquoted value does not swallow the attribute put after it',
      html: '<head><link rel="stylesheet" href="/a.css" id=></head>',
      options: { preload: 'media' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" id="" media="print" fetchpriority="high" onload="this.media='all'"><noscript><link rel="stylesheet" href="/a.css" id=></noscript></head>`,
    },
    {
      name: "swap: the original's as attribute gives way to as=\"style\"",
      html: '<head><link rel="stylesheet" as="font" href="/a.css"></head>',
      options: { preload: 'swap' },
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low" onload="this.rel='stylesheet'"><noscript><link rel="stylesheet" as="font" href="/a.css"></noscript></head>`,
    },
    {
      name: 'body: without </body>, before </html>',
      html: '<head><link rel="stylesheet" href="/a.css"></head><p>x</p></html>',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><p>x</p><link rel="stylesheet" href="/a.css"></html>`,
    },
    {
      name: 'body: without </body> or </html>, at the end',
      html: '<head><link rel="stylesheet" href="/a.css"></head><p>x',
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><p>x<link rel="stylesheet" href="/a.css">`,
    },
  ])
})

describe('links left alone', () => {
  const untouched = (name: string, link: string): Case => ({
    name,
    html: `<head>${link}</head><body></body>`,
    expected: `<head>${link}${STYLE}</head><body></body>`,
  })
  run([
    untouched('inside <noscript>', '<noscript><link rel="stylesheet" href="/a.css"></noscript>'),
    untouched('inside <template>', '<template><link rel="stylesheet" href="/a.css"></template>'),
    untouched('inside a comment', '<!-- <link rel="stylesheet" href="/a.css"> -->'),
    untouched('disabled', '<link rel="stylesheet" href="/a.css" disabled>'),
    untouched('an alternate stylesheet', '<link rel="alternate stylesheet" href="/a.css" title="dark">'),
    untouched('for print', '<link rel="stylesheet" href="/p.css" media="print">'),
    untouched('already a preload', '<link rel="preload" as="style" href="/a.css">'),
    untouched('without href', '<link rel="stylesheet">'),
    untouched('in a script', '<script>document.write(\'<link rel="stylesheet" href="/a.css">\')</script>'),
    untouched('of another type', '<link rel="stylesheet" href="/a.less" type="text/less">'),
    untouched('with a non-ASCII space in rel (not the stylesheet keyword to a browser)', '<link rel="stylesheet\u00a0" href="/a.css">'),
    {
      name: 'with an onload of its own (another loader manages it)',
      html: '<head><link rel="stylesheet" href="/a.css" onload="track()"></head>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" onload="track()"></head>`,
    },
    {
      name: 'marked blocking="render" by its author',
      html: '<head><link rel="stylesheet" href="/a.css" blocking="render"></head>',
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" blocking="render"></head>`,
    },
    {
      name: 'in the body, under body (which moves only the head’s)',
      html: '<head></head><body><link rel="stylesheet" href="/late.css"></body>',
      expected: `<head>${STYLE}</head><body><link rel="stylesheet" href="/late.css"></body>`,
    },
    {
      name: 'one the render could not read (keepBlocking): it stays blocking, the others are deferred',
      html: '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="https://cdn.test/x.css"></head>',
      options: { preload: 'swap', keepBlocking: (href) => href === 'https://cdn.test/x.css' },
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low" onload="this.rel='stylesheet'"><noscript><link rel="stylesheet" href="/a.css"></noscript><link rel="stylesheet" href="https://cdn.test/x.css"></head>`,
    },
    {
      name: 'one the render could not read, under body: the links before it stay in place too, so the cascade keeps its order',
      html: '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="https://cdn.test/x.css"></head><body></body>',
      options: { preload: 'body', keepBlocking: (href) => href === 'https://cdn.test/x.css' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="https://cdn.test/x.css"></head><body></body>`,
    },
  ])
})

describe('odd HTML', () => {
  run([
    {
      name: 'uppercase tags and attributes, unquoted values, XHTML self-closing',
      html: '<HTML><HEAD><LINK REL=StyleSheet HREF=/a.css /></HEAD><BODY>x</BODY></HTML>',
      expected: `<HTML><HEAD>${STYLE}<link rel="preload" as="style" HREF=/a.css fetchpriority="low"></HEAD><BODY>x<LINK REL=StyleSheet HREF=/a.css /></BODY></HTML>`,
    },
    {
      name: '<head> text inside comments and scripts is not the head',
      html: '<!-- <head></head> --><html><head><script>"</head><body>"</script></head><body></body></html>',
      expected: `<!-- <head></head> --><html><head><script>"</head><body>"</script>${STYLE}</head><body></body></html>`,
    },
    {
      name: 'a second <head> is ignored, as browsers do',
      html: '<head><title>a</title></head><body><head><link rel="stylesheet" href="/x.css"></head></body>',
      expected: `<head><title>a</title>${STYLE}</head><body><head><link rel="stylesheet" href="/x.css"></head></body>`,
    },
    {
      name: '<base href> stays where it is',
      html: '<head><base href="/sub/"><link rel="stylesheet" href="a.css"></head><body></body>',
      options: { preload: 'none' },
      expected: `<head><base href="/sub/">${STYLE}<link rel="stylesheet" href="a.css"></head><body></body>`,
    },
    {
      name: 'CRLF, comments, doctype case and indentation survive byte for byte',
      html: '\uFEFF<!DocType html>\r\n<!-- keep -->\r\n<html>\r\n <head>\r\n  <link  rel = "stylesheet"   href=\'/a.css\' >\r\n </head>\r\n</html>\r\n',
      options: { preload: 'none' },
      expected: `\uFEFF<!DocType html>\r\n<!-- keep -->\r\n<html>\r\n <head>\r\n  ${STYLE}<link  rel = "stylesheet"   href='/a.css' >\r\n </head>\r\n</html>\r\n`,
    },
    {
      name: 'a <noscript> in the head holding body-like content does not end the head',
      html: '<head><noscript><p>enable JS</p></noscript><link rel="stylesheet" href="/a.css"></head>',
      options: { preload: 'none' },
      expected: `<head><noscript><p>enable JS</p></noscript>${STYLE}<link rel="stylesheet" href="/a.css"></head>`,
    },
    {
      name: "a script's <!--<script> escape hides its inner </script>, as in browsers",
      html: "<head><script><!--\nvar tpl = '<script></script>';\n//--></script><link rel=stylesheet href=a.css></head>",
      options: { preload: 'none' },
      expected: `<head><script><!--\nvar tpl = '<script></script>';\n//--></script>${STYLE}<link rel=stylesheet href=a.css></head>`,
    },
    {
      name: '<![CDATA[ outside SVG is a comment that ends at the first >: the "]]>" after it is body text',
      html: '<head><![CDATA[</head>]]><link rel=stylesheet href=a.css></head>',
      expected: `<head><![CDATA[</head>${STYLE}]]><link rel=stylesheet href=a.css></head>`,
    },
    {
      name: 'an end tag with ">" in a quoted attribute ends after it',
      html: '<head><title>t</title x=">"><link rel=stylesheet href=a.css></head>',
      options: { preload: 'none' },
      expected: `<head><title>t</title x=">">${STYLE}<link rel=stylesheet href=a.css></head>`,
    },
    {
      name: 'a self-closed <style/> still holds raw text, as in browsers',
      html: '<head><style/>p{}</style><link rel=stylesheet href=a.css></head>',
      options: { preload: 'none' },
      expected: `<head><style/>p{}</style>${STYLE}<link rel=stylesheet href=a.css></head>`,
    },
    {
      name: 'an unclosed <noscript> in a template keeps the template open: the style goes before it',
      html: '<head><template><noscript></template>',
      expected: `<head>${STYLE}<template><noscript></template>`,
    },
    {
      name: 'text entities in the head end it where they start',
      html: '<head><title>t</title>&amp; more',
      expected: `<head><title>t</title>${STYLE}&amp; more`,
    },
  ])
})

describe('running again', () => {
  it.each(['loader', 'body', 'media', 'swap', 'none'] as const)('%s: same css gives the same page, new css replaces the block', (preload) => {
    const options = { preload, loaderSrc: '/loader.js' }
    const once = inlineCriticalCss(PAGE, 'a{b:c}', options)
    const again = inlineCriticalCss(once.html, 'a{b:c}', options)
    expect(again.html).toBe(once.html)
    expect(again.changed).toBe(false)
    const replaced = inlineCriticalCss(once.html, 'x{y:z}', options)
    expect(replaced.html).toBe(inlineCriticalCss(PAGE, 'x{y:z}', options).html)
    expect(replaced.html.match(/<style data-critical-css/g)).toHaveLength(1)
    expect(replaced.deferred).toEqual([])
  })

  it('replaces a block written <style data-critical-css/>, which browsers read as open', () => {
    expect(inlineCriticalCss('<head><style data-critical-css/>old{}</style></head>', CSS).html).toBe(`<head>${STYLE}</head>`)
  })

  it('keeps one block when an earlier run left several', () => {
    const html = `<head>${STYLE}<style data-critical-css>old</style></head>`
    expect(inlineCriticalCss(html, 'new{}').html).toBe('<head><style data-critical-css>new{}</style></head>')
  })
})

describe('what the result reports', () => {
  it('the CSP hash of the inlined text, and the stylesheets deferred', () => {
    const css = 'a{content:"</style>"}'
    const result = inlineCriticalCss(PAGE, css)
    const inlined = 'a{content:"<\\/style>"}'
    expect(result.cspHash).toBe(`sha256-${createHash('sha256').update(inlined).digest('base64')}`)
    expect(result.deferred).toEqual(['/a.css'])
    expect(result.stillBlocking).toEqual([])
  })

  it('the CSP hash of the text as a browser reads it: line breaks as LF, NUL as U+FFFD', () => {
    const result = inlineCriticalCss('<head></head>', 'a{b:c}\r\nd{e:f}\r\0')
    expect(result.html).toBe('<head><style data-critical-css>a{b:c}\nd{e:f}\n\uFFFD</style></head>')
    expect(result.cspHash).toBe(`sha256-${createHash('sha256').update('a{b:c}\nd{e:f}\n\uFFFD').digest('base64')}`)
  })

  it('the stylesheets left blocking, and why not', () => {
    const html = '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css" onload="x()"></head><body></body>'
    expect(inlineCriticalCss(html, CSS)).toMatchObject({ deferred: [], stillBlocking: ['/a.css', '/b.css'] })
    expect(inlineCriticalCss(html, CSS, { preload: 'media' })).toMatchObject({ deferred: ['/a.css'], stillBlocking: ['/b.css'] })
    expect(inlineCriticalCss(html, CSS, { preload: 'none' })).toMatchObject({ deferred: [], stillBlocking: ['/a.css', '/b.css'] })
  })

  it('edits that turn the input into the output and nothing else', () => {
    const result = inlineCriticalCss(PAGE, CSS)
    expect(applyEdits(PAGE, result.edits)).toBe(result.html)
  })
})

describe('stylesheets inlined whole (wholeSheet, issue 35)', () => {
  const SHEET = 'body{margin:0}h1{color:red}'
  const whole = (href: string): string | null => (href === '/a.css' ? SHEET : null)

  it('each in its link’s place, its media and the nonce kept; with nothing left to defer, no critical style and no loader', () => {
    const html = '<head><link rel="stylesheet" href="/a.css" media="screen and (min-width: 1px)"></head><body></body>'
    const result = inlineCriticalCss(html, CSS, { loaderSrc: '/l.js', nonce: 'n0', wholeSheet: whole })
    expect(result.html).toBe(`<head><style media="screen and (min-width: 1px)" nonce="n0">${SHEET}</style></head><body></body>`)
    expect(result.deferred).toEqual([])
    expect(result.stillBlocking).toEqual([])
    expect(result.cspHash).toBeNull()
    expect(result.inlinedWhole).toEqual([{ href: '/a.css', cspHash: `sha256-${createHash('sha256').update(SHEET).digest('base64')}` }])
  })

  it('beside a link still deferred, the critical style stays for it, and a previous run’s critical style goes once nothing is deferred', () => {
    const html = '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css"></head>'
    const partly = inlineCriticalCss(html, CSS, { preload: 'media', wholeSheet: whole })
    expect(partly.html).toBe(`<head>${STYLE}<style>${SHEET}</style><link rel="stylesheet" href="/b.css" media="print" fetchpriority="high" onload="this.media='all'"><noscript><link rel="stylesheet" href="/b.css"></noscript></head>`)
    expect(partly.deferred).toEqual(['/b.css'])
    const again = inlineCriticalCss(`<head>${STYLE}<link rel="stylesheet" href="/a.css"></head>`, CSS, { preload: 'media', wholeSheet: whole })
    expect(again.html).toBe(`<head><style>${SHEET}</style></head>`)
  })

  it('not for a link kept blocking, nor with none, and its text is made safe like the critical CSS', () => {
    const html = '<head><link rel="stylesheet" href="/a.css"></head>'
    expect(inlineCriticalCss(html, CSS, { preload: 'media', wholeSheet: whole, keepBlocking: () => true }).inlinedWhole).toEqual([])
    expect(inlineCriticalCss(html, CSS, { preload: 'none', wholeSheet: whole }).html).toBe(`<head>${STYLE}<link rel="stylesheet" href="/a.css"></head>`)
    expect(inlineCriticalCss(html, CSS, { preload: 'body', wholeSheet: () => 'a{content:"</style><script>"}' }).html).toBe('<head><style>a{content:"<\\/style><script>"}</style></head>')
  })
})

describe('blockingStylesheets: which blocking links are nothing but a stylesheet (issue 35)', () => {
  it('a link with only fetch-and-apply attributes is plain; an id, a data-* mark or a handler is not, and links that hold up only scripts count', () => {
    const html = `<head><link rel="stylesheet" href="/a.css" media="screen" crossorigin integrity="sha384-x" type="text/css"><link rel="stylesheet" href="/b.css" data-precedence="next"><link rel="stylesheet" href="/c.css" id="theme"><link rel="stylesheet" href="/d.css" media="print"></head><body><p>x</p><link rel="stylesheet" href="/e.css"></body>`
    expect(blockingStylesheets(html)).toEqual([
      { href: '/a.css', plain: true },
      { href: '/b.css', plain: false },
      { href: '/c.css', plain: false },
      { href: '/e.css', plain: true },
    ])
  })
})

describe('onlyWithStylesheets', () => {
  const html = '<head><link rel="stylesheet" href="/a.css"><link rel="stylesheet" href="/b.css"></head><body><p>x</p></body>'
  it('inlines a page that links exactly those sheets, in that order, and returns any other as it is', () => {
    expect(inlineCriticalCss(html, CSS, { preload: 'media', onlyWithStylesheets: ['/a.css', '/b.css'] }).html).toBe(inlineCriticalCss(html, CSS, { preload: 'media' }).html)
    for (const expected of [['/a.css'], ['/b.css', '/a.css'], ['/a.css', '/b.css', '/c.css']]) {
      expect(inlineCriticalCss(html, CSS, { preload: 'media', onlyWithStylesheets: expected })).toMatchObject({ html, changed: false, deferred: [] })
    }
  })
})

describe('nonsense input', () => {
  it.each([
    ['html that is not a string', () => inlineCriticalCss(undefined as unknown as string, CSS), /html must be a string, got undefined/],
    ['css that is not a string', () => inlineCriticalCss('<p>', null as unknown as string), /css must be a string, got null/],
    ['an unknown strategy', () => inlineCriticalCss('<p>', CSS, { preload: 'later' as 'body' }), /`preload` option must be one of 'loader', 'body', 'media', 'swap', 'none'/],
    ['the loader strategy with no loader URL', () => inlineCriticalCss('<p>', CSS, { preload: 'loader' }), /`loader` strategy needs the `loaderSrc` option.*preload: 'body'/],
    ['a loader URL that could break out of its attribute', () => inlineCriticalCss('<p>', CSS, { loaderSrc: '/x.js" onload="y' }), /`loaderSrc` option must be a URL/],
    ['a nonce that could break out of its attribute', () => inlineCriticalCss('<p>', CSS, { nonce: 'a" onload="x' }), /`nonce` option/],
    ['stylesheets to expect that are not a list of hrefs', () => inlineCriticalCss('<p>', CSS, { onlyWithStylesheets: '/a.css' as unknown as string[] }), /`onlyWithStylesheets` option must be an array/],
  ])('%s: a clear TypeError', (_name, call, message) => {
    expect(call).toThrow(TypeError)
    expect(call).toThrow(message)
  })
})

describe('the loader strategy', () => {
  const SCRIPT = '<script src="/assets/loader.js" async></script>'
  run([
    {
      name: 'the default with a loader URL: the stylesheet in place at print, its media in the mark, a noscript fallback, the script after the last one',
      html: '<head><link rel="stylesheet" href="/1.css" crossorigin integrity="sha384-abc" id="theme"><style>p{}</style><link rel=stylesheet href=/2.css media="screen and (min-width: 40em)" fetchpriority=low></head><body><script type="module" src="/app.js"></script></body>',
      options: { loaderSrc: '/assets/loader.js' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/1.css" crossorigin integrity="sha384-abc" id="theme" media="print" data-critical-css-media fetchpriority="high"><noscript><link rel="stylesheet" href="/1.css" crossorigin integrity="sha384-abc" id="theme"></noscript><style>p{}</style><link rel=stylesheet href=/2.css media="print" fetchpriority=low data-critical-css-media="screen and (min-width: 40em)"><noscript><link rel=stylesheet href=/2.css media="screen and (min-width: 40em)" fetchpriority=low></noscript>${SCRIPT}</head><body><script type="module" src="/app.js"></script></body>`,
    },
    {
      name: 'the nonce goes on the style, the deferred links and the script',
      html: '<head><link rel="stylesheet" href="/a.css"></head>',
      options: { loaderSrc: '/assets/loader.js', nonce: 'Rm9v' },
      expected: '<head><style data-critical-css nonce="Rm9v">h1{color:red}</style><link rel="stylesheet" href="/a.css" media="print" data-critical-css-media fetchpriority="high" nonce="Rm9v"><noscript><link rel="stylesheet" href="/a.css"></noscript><script src="/assets/loader.js" async nonce="Rm9v"></script></head>',
    },
    {
      name: 'a media with a quote is escaped in the mark',
      html: `<head><link rel="stylesheet" href="/a.css" media='screen, "x"'></head>`,
      options: { loaderSrc: '/assets/loader.js' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" media="print" data-critical-css-media="screen, &quot;x&quot;" fetchpriority="high"><noscript><link rel="stylesheet" href="/a.css" media='screen, "x"'></noscript><script src="/assets/loader.js" async></script></head>`,
    },
    {
      name: 'a link with an inline handler keeps it: it is the same element, the loader copies nothing',
      html: '<head><link rel="stylesheet" href="/a.css" onerror="x()"></head>',
      options: { loaderSrc: '/assets/loader.js' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" onerror="x()" media="print" data-critical-css-media fetchpriority="high"><noscript><link rel="stylesheet" href="/a.css" onerror="x()"></noscript><script src="/assets/loader.js" async></script></head>`,
    },
    {
      name: 'a link with its own onload stays as written: another loader manages it',
      html: '<head><link rel="stylesheet" href="/a.css" onload="x()"></head>',
      options: { loaderSrc: '/assets/loader.js' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" onload="x()"></head>`,
    },
    {
      name: 'no script when nothing is deferred',
      html: '<head><title>t</title></head>',
      options: { loaderSrc: '/assets/loader.js' },
      expected: `<head><title>t</title>${STYLE}</head>`,
    },
    {
      name: 'the URL is escaped for its attribute',
      html: '<head><link rel="stylesheet" href="/a.css"></head>',
      options: { loaderSrc: '/x.js?a=1&b=2' },
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" media="print" data-critical-css-media fetchpriority="high"><noscript><link rel="stylesheet" href="/a.css"></noscript><script src="/x.js?a=1&amp;b=2" async></script></head>`,
    },
  ])

  it('without a loader URL the default is body, which needs no file', () => {
    expect(inlineCriticalCss(PAGE, CSS).html).toBe(inlineCriticalCss(PAGE, CSS, { preload: 'body' }).html)
  })

  it('the body strategy keeps a stylesheet before a link the loader deferred where it is: moving it past would change the cascade', () => {
    const once = inlineCriticalCss('<head><link rel="stylesheet" href="/a.css"></head><body></body>', CSS, { loaderSrc: '/l.js' }).html
    const withEarlier = once.replace('<head>', '<head><link rel="stylesheet" href="/b.css">')
    expect(inlineCriticalCss(withEarlier, CSS, { preload: 'body' })).toMatchObject({ deferred: [], stillBlocking: ['/b.css'] })
  })

  it('a second run over its own output replaces the style and defers, reports and adds nothing', () => {
    const page = '<head><link rel="stylesheet" href="/a.css" media="screen"><link rel="stylesheet" href="/b.css"></head><body></body>'
    const options = { loaderSrc: '/l.js', nonce: 'Rm9v' }
    const once = inlineCriticalCss(page, CSS, options)
    expect(once).toMatchObject({ deferred: ['/a.css', '/b.css'], stillBlocking: [] })
    expect(inlineCriticalCss(once.html, CSS, options)).toMatchObject({ html: once.html, changed: false, deferred: [], stillBlocking: [] })
    expect(inlineCriticalCss(once.html, 'p{}', options).html).toBe(inlineCriticalCss(page, 'p{}', options).html)
  })

  it('font preloads go before the critical style, marked; a second run replaces them, and one with none removes them', () => {
    const page = '<head><link rel="stylesheet" href="/a.css"></head><body></body>'
    const fonts = ['/f/inter.woff2', '../f/a&b.ttf']
    const once = inlineCriticalCss(page, CSS, { preload: 'media', fontPreloads: fonts })
    expect(once.html).toBe(
      `<head><link rel="preload" as="font" type="font/woff2" href="/f/inter.woff2" crossorigin data-critical-css><link rel="preload" as="font" href="../f/a&amp;b.ttf" crossorigin data-critical-css>${STYLE}<link rel="stylesheet" href="/a.css" media="print" fetchpriority="high" onload="this.media='all'"><noscript><link rel="stylesheet" href="/a.css"></noscript></head><body></body>`,
    )
    // The preloads are not the page's stylesheets: nothing else changes on the next run.
    expect(inlineCriticalCss(once.html, CSS, { preload: 'media', fontPreloads: fonts })).toMatchObject({ html: once.html, changed: false })
    expect(inlineCriticalCss(once.html, CSS, { preload: 'media', fontPreloads: ['/f/other.woff2'] }).html).toBe(inlineCriticalCss(page, CSS, { preload: 'media', fontPreloads: ['/f/other.woff2'] }).html)
    expect(inlineCriticalCss(once.html, CSS, { preload: 'media' }).html).toBe(inlineCriticalCss(page, CSS, { preload: 'media' }).html)
    expect(() => inlineCriticalCss(page, CSS, { fontPreloads: [''] })).toThrow('The `fontPreloads` option must be an array of font URLs.')
  })

  it("an earlier version's output (marked preloads, its own loader script) is left as it is but for the style", () => {
    const old = `<head>${STYLE}<link rel="preload" as="style" href="/a.css" data-critical-css-preload><noscript><link rel="stylesheet" href="/a.css"></noscript><script src="/critical-css-loader.43f2ba8b.js" async></script></head><body></body>`
    expect(inlineCriticalCss(old, CSS, { loaderSrc: '/l.js' })).toMatchObject({ html: old, deferred: [], stillBlocking: [] })
    const withEarlier = old.replace('<head>', '<head><link rel="stylesheet" href="/b.css">')
    expect(inlineCriticalCss(withEarlier, CSS, { preload: 'body' })).toMatchObject({ deferred: [], stillBlocking: ['/b.css'] })
  })
})

describe('stylesheets in the body (issue 34: the parser waits at one, showing nothing after it until it loads)', () => {
  const HEAD_LINK = '<link rel="stylesheet" href="/a.css">'
  const CODE_LINK = '<link rel="stylesheet" href="/code.css">'
  /** A Starlight page: its code-block stylesheet in the body, before the code block. */
  const STARLIGHT = `<head>${HEAD_LINK}</head><body><h1>Title</h1>${CODE_LINK}<pre>code</pre></body>`
  const held = (href: string): string => `<link rel="stylesheet" href="${href}" media="print" data-critical-css-media fetchpriority="high"><noscript><link rel="stylesheet" href="${href}"></noscript>`
  const SCRIPT = '<script src="/l.js" async></script>'
  const options = (preload: PreloadStrategy): InlineOptions => ({ preload, loaderSrc: '/l.js' })

  run([
    {
      name: 'loader: held at print where it stands, with its noscript fallback; the script after the last one in the head',
      html: STARLIGHT,
      options: options('loader'),
      expected: `<head>${STYLE}${held('/a.css')}${SCRIPT}</head><body><h1>Title</h1>${held('/code.css')}<pre>code</pre></body>`,
    },
    {
      name: 'loader, with nothing to defer in the head: the script after the first one in the body',
      html: `<head></head><body><p>x</p>${CODE_LINK}<p>y</p><link rel="stylesheet" href="/more.css"><p>z</p></body>`,
      options: options('loader'),
      expected: `<head>${STYLE}</head><body><p>x</p>${held('/code.css')}${SCRIPT}<p>y</p>${held('/more.css')}<p>z</p></body>`,
    },
    {
      name: 'media: print until loaded, in place',
      html: STARLIGHT,
      options: options('media'),
      expected: `<head>${STYLE}<link rel="stylesheet" href="/a.css" media="print" fetchpriority="high" onload="this.media='all'"><noscript>${HEAD_LINK}</noscript></head><body><h1>Title</h1><link rel="stylesheet" href="/code.css" media="print" fetchpriority="high" onload="this.media='all'"><noscript>${CODE_LINK}</noscript><pre>code</pre></body>`,
    },
    {
      name: 'swap: a preload until loaded, in place',
      html: STARLIGHT,
      options: options('swap'),
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low" onload="this.rel='stylesheet'"><noscript>${HEAD_LINK}</noscript></head><body><h1>Title</h1><link rel="preload" as="style" href="/code.css" fetchpriority="low" onload="this.rel='stylesheet'"><noscript>${CODE_LINK}</noscript><pre>code</pre></body>`,
    },
    {
      name: 'body: it stays, and the head’s go before it, keeping the cascade',
      html: STARLIGHT,
      options: options('body'),
      expected: `<head>${STYLE}<link rel="preload" as="style" href="/a.css" fetchpriority="low"></head><body><h1>Title</h1>${HEAD_LINK}${CODE_LINK}<pre>code</pre></body>`,
    },
    {
      name: 'none: it stays',
      html: STARLIGHT,
      options: options('none'),
      expected: `<head>${STYLE}${HEAD_LINK}</head><body><h1>Title</h1>${CODE_LINK}<pre>code</pre></body>`,
    },
    {
      name: 'loader: one the render could not read (keepBlocking) stays as it is',
      html: STARLIGHT,
      options: { ...options('loader'), keepBlocking: (href) => href === '/code.css' },
      expected: `<head>${STYLE}${held('/a.css')}${SCRIPT}</head><body><h1>Title</h1>${CODE_LINK}<pre>code</pre></body>`,
    },
    {
      name: 'loader: after </body> and </html>, where the parser puts it in the body all the same',
      html: `<head></head><body><p>x</p></body>${CODE_LINK}<p>y</p></html>`,
      options: options('loader'),
      expected: `<head>${STYLE}</head><body><p>x</p></body>${held('/code.css')}${SCRIPT}<p>y</p></html>`,
    },
    {
      name: 'loader: inside a <table> (the parser puts it before the table) and a <select> (Chromium keeps it in its option)',
      html: `<head></head><body><table><tr><td>x</td></tr>${CODE_LINK}</table><select><option>o<link rel="stylesheet" href="/s.css"></select><p>y</p></body>`,
      options: options('loader'),
      expected: `<head>${STYLE}</head><body><table><tr><td>x</td></tr>${held('/code.css')}${SCRIPT}</table><select><option>o${held('/s.css')}</select><p>y</p></body>`,
    },
  ])

  describe('left alone under every strategy', () => {
    const ALONE = [
      '<noscript><link rel="stylesheet" href="/n.css"></noscript>',
      '<template><link rel="stylesheet" href="/t.css"></template>',
      '<!-- <link rel="stylesheet" href="/c.css"> -->',
      '<script>document.write(\'<link rel="stylesheet" href="/w.css">\')</script>',
      '<svg><link rel="stylesheet" href="/s.css"/></svg>',
      '<math><link rel="stylesheet" href="/m.css"></math>',
      '<textarea><link rel="stylesheet" href="/x.css"></textarea>',
      '<link rel="stylesheet" href="/p.css" media="print">',
      '<link rel="alternate stylesheet" href="/d.css" title="dark">',
      '<link rel="stylesheet" href="/o.css" onload="track()">',
      '<link rel="stylesheet" href="/r.css" blocking="render">',
    ].join('')
    const page = `<head></head><body><p>x</p>${ALONE}<p>y</p></body>`
    it.each(PRELOAD_STRATEGIES)('%s', (preload) => {
      const result = inlineCriticalCss(page, CSS, options(preload))
      expect(result).toMatchObject({ html: `<head>${STYLE}</head><body><p>x</p>${ALONE}<p>y</p></body>`, deferred: [] })
    })
  })

  describe('what is reported, per strategy', () => {
    it.each([
      ['loader', ['/a.css', '/code.css'], []],
      ['media', ['/a.css', '/code.css'], []],
      ['swap', ['/a.css', '/code.css'], []],
      // The head's moved before it: where it held up what follows, so do they, on a run over the output.
      ['body', ['/a.css'], ['/code.css']],
      ['none', [], ['/a.css', '/code.css']],
    ] as const)('%s: deferred %j, still blocking %j', (preload, deferred, stillBlocking) => {
      expect(inlineCriticalCss(STARLIGHT, CSS, options(preload))).toMatchObject({ deferred, stillBlocking })
    })

    it('one kept blocking (keepBlocking) still blocks', () => {
      const result = inlineCriticalCss(STARLIGHT, CSS, { ...options('loader'), keepBlocking: (href) => href === '/code.css' })
      expect(result).toMatchObject({ deferred: ['/a.css'], stillBlocking: ['/code.css'] })
    })

    it('an author-managed one (its own onload) still blocks where something shown follows it', () => {
      const page = STARLIGHT.replace(CODE_LINK, '<link rel="stylesheet" href="/code.css" onload="track()">')
      expect(inlineCriticalCss(page, CSS, options('loader'))).toMatchObject({ deferred: ['/a.css'], stillBlocking: ['/code.css'] })
    })

    it('one with nothing shown after it (scripts, styles, links, whitespace) holds up no painting: not counted; loader still defers it, for the scripts that wait', () => {
      const page = `<head></head><body><p>x</p>${CODE_LINK}\n<script src="/app.js"></script><style>p{}</style><!-- c --><link rel="icon" href="/i.png"></body>\n</html>\n`
      expect(inlineCriticalCss(page, CSS, options('none'))).toMatchObject({ deferred: [], stillBlocking: [] })
      expect(inlineCriticalCss(page, CSS, options('body'))).toMatchObject({ deferred: [], stillBlocking: [] })
      expect(inlineCriticalCss(page, CSS, options('loader'))).toMatchObject({ deferred: ['/code.css'], stillBlocking: [] })
    })

    it.each([
      ['text', 'more'],
      ['an element the scan does not name', '<img src="/x.png" alt="">'],
      ['another stylesheet link, then text', '<link rel="stylesheet" href="/z.css"> z'],
    ])('one followed by %s is counted', (_name, after) => {
      const page = `<head></head><body>${CODE_LINK}${after}</body>`
      expect(inlineCriticalCss(page, CSS, options('none')).stillBlocking[0]).toBe('/code.css')
    })

    it('the head’s and the body’s that hold up painting, as the build asks before it renders a page', () => {
      expect(renderBlockingStylesheets(STARLIGHT)).toEqual(['/a.css', '/code.css'])
      expect(renderBlockingStylesheets(`<head></head><body><p>x</p>${CODE_LINK}<p>y</p></body>`)).toEqual(['/code.css'])
      expect(renderBlockingStylesheets(inlineCriticalCss(STARLIGHT, CSS, options('loader')).html)).toEqual([])
      // The body strategy's moved links, at the end of the body, hold up nothing.
      expect(renderBlockingStylesheets(inlineCriticalCss(PAGE, CSS, options('body')).html)).toEqual([])
    })
  })

  it.each(PRELOAD_STRATEGIES)('%s: a run over its own output changes nothing, defers nothing, and reports the body’s link if it left it', (preload) => {
    const inPlace = preload === 'loader' || preload === 'media' || preload === 'swap'
    const once = inlineCriticalCss(STARLIGHT, CSS, options(preload))
    expect(once.deferred.includes('/code.css')).toBe(inPlace)
    const again = inlineCriticalCss(once.html, CSS, options(preload))
    expect(again).toMatchObject({ html: once.html, changed: false, deferred: [] })
    expect(again.stillBlocking.includes('/code.css')).toBe(!inPlace)
  })
})

describe('the stylesheets a page loads (what cache keys and missing-sheet checks hash)', () => {
  it('the body’s stylesheet links count with the head’s, in document order; a preload does not, nor a link in <noscript>', () => {
    const html = '<!doctype html><html><head><link rel="stylesheet" href="/a.css"><link rel="preload" as="font" href="/f.woff2"></head><body><p>x</p><link rel="stylesheet" href="/code.css"><noscript><link rel="stylesheet" href="/n.css"></noscript><p>y</p></body></html>'
    expect(stylesheetHrefs(html)).toEqual(['/a.css', '/code.css'])
  })
})

describe('the <noscript> fallback', () => {
  it.each(['loader', 'media', 'swap'] as const)('%s: a link whose attribute holds </noscript> lets no markup out of its fallback', (preload) => {
    const html = `<!doctype html><html><head><link rel="stylesheet" href="/a.css" title='</noscript><link rel="stylesheet" href="/x.css">'></head><body><p>x</p></body></html>`
    const out = inlineCriticalCss(html, 'p{color:red}', { preload, loaderSrc: '/l.js' })
    expect(stylesheetHrefs(html)).toEqual(['/a.css'])
    expect(stylesheetHrefs(out.html)).toEqual(['/a.css'])
    // Written again from its attributes: a browser without scripts reads the same title back.
    expect(out.html).toContain('<noscript><link rel="stylesheet" href="/a.css" title="&lt;/noscript>&lt;link rel=&quot;stylesheet&quot; href=&quot;/x.css&quot;>"></noscript>')
  })
})
