/**
 * Properties of the inliner over generated and mutated HTML, checked against parse5 (a
 * parser that follows the HTML standard, as browsers do).
 */
import fc from 'fast-check'
import { parse, type DefaultTreeAdapterMap } from 'parse5'
import { describe, expect, it } from 'vitest'
import { inlineCriticalCss, neutraliseCss } from '../../src/html/inline.ts'
import type { PreloadStrategy } from '../../src/html/strategies.ts'
import { applyEdits } from '../fixtures/edits.ts'

type Node = DefaultTreeAdapterMap['node']
type Element = DefaultTreeAdapterMap['element']

const link = fc
  .record({
    tag: fc.constantFrom('link', 'LINK'),
    rel: fc.constantFrom('stylesheet', 'StyleSheet', 'alternate stylesheet', 'preload', 'preload" as="style', 'icon', '', 'stylesheet\u00a0', '&#115;tylesheet'),
    href: fc.constantFrom('href="/a.css"', "href='/b.css'", 'href=/c.css', 'HREF="/d e.css"', ''),
    extra: fc.subarray(['media=print', 'media="screen"', 'crossorigin', 'integrity="sha384-x"', 'disabled', 'onload="f()"', 'id=x', 'nonce=n', 'blocking=render', 'type=text/less', 'onerror="g()"', 'as=font']),
    end: fc.constantFrom('>', ' />', '/>'),
  })
  .map(({ tag, rel, href, extra, end }) => `<${tag}${rel ? ` rel="${rel}"` : ''} ${href} ${extra.join(' ')}${end}`)

const MARKUP = [
  '<!doctype html>',
  '<!DOCTYPE HTML>',
  '<html>',
  '<HTML lang=en>',
  '</html>',
  '<head>',
  '<HEAD>',
  '</head>',
  '<body>',
  '<BODY class=x>',
  '</body>',
  '<title>T &amp; t</title>',
  '<meta charset=utf-8>',
  '<base href="/x/">',
  '<style>p{color:blue}</style>',
  '<style data-critical-css>old{}</style>',
  '<script>"</head><link rel=stylesheet href=s.css>"</script>',
  '<!-- <head><link rel=stylesheet href=c.css> -->',
  '<noscript><link rel=stylesheet href=n.css><p>js</p></noscript>',
  '<template><link rel=stylesheet href=t.css></template>',
  'hello',
  '&amp;',
  ' ',
  '\n',
  '\r\n',
  '<p>',
  '</p>',
  '<div>',
  '</div>',
  '<svg><style>a{}</style></svg>',
  '<textarea></head></textarea>',
  '<table><tr><td>x</table>',
  '<br/>',
  '</br>',
  '<script><!--<script>"</script><link rel=stylesheet href=e.css>"--></script>',
  '<![CDATA[</head>]]>',
  '</title x=">">',
  '<svg><path d="">',
  '</svg>',
  '<math><mi>',
  '<select><option>',
  '<frameset>',
  '<style/>q{}</style>',
  '<noscript/>',
  '<body><link rel=stylesheet href=/body.css>',
  '<style>r{}</style>',
  '<svg><title>t</title><style>s{}</style></svg>',
  '<svg><foreignObject><div>',
  '<svg><font>',
  '<font color=red>',
  '<math><mi>x</mi></math>',
  '<svg><desc>',
  '<template><svg><style>',
  '</table>',
  '</div>',
  '</p>',
  '<',
  '>',
  '"',
  "'",
  '</',
  '<!',
  '\uFEFF',
]

/** Markup whose tree the scan follows wherever it stands: no SVG or MathML, templates, selects, framesets or plaintext. */
const FOLLOWED = MARKUP.filter((markup) => !/<(svg|math|template|select|frameset|plaintext)/i.test(markup))

const tokenOf = (markup: string[]): fc.Arbitrary<string> => fc.oneof({ weight: 3, arbitrary: link }, { weight: 8, arbitrary: fc.constantFrom(...markup) })

/** Token soup, then a few characters deleted or inserted anywhere. */
const soup = (markup: string[]): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.array(tokenOf(markup), { maxLength: 30 }).map((tokens) => tokens.join('')),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom('', '<', '>', '/', '"', "'", '=', ' ', '-', '!', 'a')), { maxLength: 4 }),
    )
    .map(([text, mutations]) => {
      let out = text
      for (const [at, insert] of mutations) {
        const i = out.length === 0 ? 0 : at % out.length
        out = insert === '' ? out.slice(0, i) + out.slice(i + 1) : out.slice(0, i) + insert + out.slice(i)
      }
      return out
    })
const html = soup(MARKUP)

const css = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('h1{color:red}', 'a{content:"</style><script>alert(1)</script>"}', '</STYLE>', '</sTyLe x', '<\\/style>', '}</style><img src=x onerror=alert(1)>', '<!--', '-->'),
)

const strategy = fc.constantFrom<PreloadStrategy>('loader', 'body', 'media', 'swap', 'none')
/** Where every run's loader script is: harmless to the other strategies. */
const LOADER = '/l.js'

function* walk(node: Node, templates: boolean): Generator<Element> {
  if ('childNodes' in node) {
    for (const child of node.childNodes) {
      if ('tagName' in child) yield child
      // A template's content is a fragment of its own.
      if (templates && 'content' in child && child.content) yield* walk(child.content as unknown as Node, templates)
      yield* walk(child, templates)
    }
  }
}

/** Every element, those in template contents too unless `templates` is false. */
function elements(markup: string, templates = true): Element[] {
  // A browser's decoder drops the byte-order mark before parsing; parse5 given a string does not.
  return [...walk(parse(markup.replace(/^\uFEFF/, '')) as unknown as Node, templates)]
}

const HTML_NS = 'http://www.w3.org/1999/xhtml'

/** The page's style sources in cascade order: stylesheets that apply (now or on load) and <style>s, not ours. */
function cascade(markup: string): string[] {
  const attr = (e: Element, name: string): string | undefined => e.attrs.find((a) => a.name === name)?.value
  const sources: string[] = []
  for (const e of elements(markup, false)) {
    if (e.namespaceURI !== HTML_NS) continue
    if (e.tagName === 'style' && !e.attrs.some((a) => a.name === 'data-critical-css')) sources.push(`style ${textOf(e)}`)
    if (e.tagName !== 'link' || !attr(e, 'href')?.trim() || attr(e, 'disabled') !== undefined) continue
    const type = attr(e, 'type')?.trim().toLowerCase()
    if (type && type !== 'text/css') continue
    const rel = (attr(e, 'rel') ?? '').toLowerCase().split(/[\t\n\f\r ]+/)
    // A swap preload becomes a stylesheet where it stands on load; an earlier version's loader preload has its stylesheet inserted right after it.
    const swapped = rel.includes('preload') && attr(e, 'as')?.toLowerCase() === 'style' && (attr(e, 'onload') !== undefined || attr(e, 'data-critical-css-preload') !== undefined)
    if ((rel.includes('stylesheet') && !rel.includes('alternate')) || swapped) sources.push(`link ${attr(e, 'href')}`)
  }
  return sources
}

/**
 * The markup with each `<select>` renamed, so that parse5 reads its content as HTML, as
 * Chromium does (the standard's select parsing as it is now): parse5 drops a `<link>` there,
 * Chromium keeps it, and its parser waits at it.
 */
function selectAsChromium(markup: string): string {
  return markup.replace(/(<\/?)select(?=[\t\n\f\r />])/gi, '$1x-select')
}

function textOf(element: Element): string {
  return element.childNodes.map((n) => ('value' in n && typeof n.value === 'string' ? n.value : '')).join('')
}

const RUNS = { numRuns: Number(process.env.PROPERTY_RUNS ?? 400) }

/** Inputs reviews found wrong once: checked on every run, before the generated ones. */
const A = '<link rel=stylesheet href=a.css>'
const FOUND = [
  `${A}<body><svg><defs><font id=f horiz-adv-x=500><glyph/></font><style>.a{}</style></defs></svg>`,
  `${A}<svg><font>`,
  '<template><svg><style></template><textarea></style></template>',
  '<template><svg><![CDATA[></template>]]></template>',
  `<head>${A}<template><svg><style></template><link rel=stylesheet href=b.css></style></svg></template></head><body>`,
  `${A}<svg></p><style></svg>`,
  `${A}<svg></br><textarea></svg>`,
  `${A}<div><svg></div><style></svg>`,
  `${A}<table><svg></table><style></svg>`,
  `${A}<select><svg></select><style><b>`,
  `${A}<math><annotation-xml encoding=text/html><style></math>`,
  `${A}<svg><math><title><style></svg>`,
  `${A}<math><svg><title><style></title></svg></math><link rel=stylesheet href=b.css></style>`,
  `${A}<body><svg><template></svg><style></template></svg>`,
  `${A}<svg></p><link rel=stylesheet href=b.css></svg>`,
  `${A}<svg></html><b>`,
  `${A}<select></html></select>`,
  `${A}<body><svg><title><style>b{}</style></title></svg>`,
  `${A}<p></body><svg><desc><frameset>`,
  `${A}<svg><title><select></title></svg>`,
  `${A}<body><select/>`,
  `${A}<plaintext/></plaintext>`,
  '<![CDATA[><style data-critical-css>x</style>',
  `${A}</head><frame><![CDATA[><frameset>`,
  "<head><script><!--\nvar tpl = '<script></script>';\n//--></script><link rel=stylesheet href=a.css></head>",
  `${A}<link rel=stylesheet href=b.css blocking=render><body>x`,
  `${A}<body><svg><path d=""></body>`,
]
const STRATEGIES: PreloadStrategy[] = ['loader', 'body', 'media', 'swap', 'none']
const withStrategy = (css: string): [string, string, PreloadStrategy][] => FOUND.flatMap((h) => STRATEGIES.map((s): [string, string, PreloadStrategy] => [h, css, s]))
const EXAMPLES_3 = { examples: withStrategy('h1{color:red}') }
const EXAMPLES_2 = { examples: FOUND.map((h): [string, string] => [h, 'h1{color:red}']) }
const EXAMPLES_4 = { examples: withStrategy('h1{color:red}').map(([h, c, s]): [string, string, string, PreloadStrategy] => [h, 'old{}', c, s]) }

describe('inlineCriticalCss on generated HTML', () => {
  it('never throws, and the inserted spans are the only change', () => {
    fc.assert(
      fc.property(html, css, strategy, (input, style, preload) => {
        const result = inlineCriticalCss(input, style, { preload, loaderSrc: LOADER })
        expect(applyEdits(input, result.edits)).toBe(result.html)
      }),
      { ...RUNS, ...EXAMPLES_3 },
    )
  })

  it('puts one style in the head, holding exactly the neutralised css: nothing injected', () => {
    fc.assert(
      fc.property(html, css, strategy, (input, style, preload) => {
        fc.pre(style.trim() !== '')
        const result = inlineCriticalCss(input, style, { preload, loaderSrc: LOADER })
        const output = result.html
        const expected = neutraliseCss(style)
        const ours = elements(output).filter((e) => e.tagName === 'style' && e.attrs.some((a) => a.name === 'data-critical-css') && textOf(e) === expected)
        expect(ours).toHaveLength(1)
        expect(ours[0]!.parentNode && 'tagName' in ours[0]!.parentNode ? ours[0]!.parentNode.tagName : null).toBe('head')
        const ourLoader = (e: Element): boolean => e.tagName === 'script' && e.attrs.some((a) => a.name === 'src' && a.value === LOADER)
        const scripts = (markup: string): number => elements(markup).filter((e) => (e.tagName === 'script' && !ourLoader(e)) || e.attrs.some((a) => a.name === 'onerror')).length
        expect(scripts(output)).toBe(scripts(input))
        // The loader's own script, once, and only when it has a stylesheet to restore; put
        // after a body link, it goes with the body a <frameset> drops.
        const added = elements(output).filter(ourLoader).length - elements(input).filter(ourLoader).length
        const loaders = preload === 'loader' && result.deferred.length > 0 ? 1 : 0
        if (elements(output).some((e) => e.tagName === 'frameset')) expect(added).toBeLessThanOrEqual(loaders)
        else expect(added).toBe(loaders)
      }),
      { ...RUNS, ...EXAMPLES_3 },
    )
  })

  it('is idempotent: a second run with any css equals one run with that css', () => {
    fc.assert(
      fc.property(html, css, css, strategy, (input, first, second, preload) => {
        const options = { preload, loaderSrc: LOADER }
        const once = inlineCriticalCss(input, first, options).html
        const expected = inlineCriticalCss(input, second, options).html
        fc.pre(first.trim() !== '' || second.trim() === '')
        expect(inlineCriticalCss(once, second, options).html).toBe(second.trim() === '' ? once : expected)
      }),
      { ...RUNS, ...EXAMPLES_4 },
    )
  })

  it('each deferred stylesheet is converted where the parser put it, or with body, lands in the body as HTML', () => {
    fc.assert(
      fc.property(html, css, strategy, (input, style, preload) => {
        fc.pre(style.trim() !== '')
        const result = inlineCriticalCss(input, style, { preload, loaderSrc: LOADER })
        const parsed = elements(selectAsChromium(result.html), false)
        const parentOf = (e: Element): string => (e.parentNode && 'tagName' in e.parentNode ? e.parentNode.tagName : '#')
        const inBody = (e: Element): boolean => {
          for (let node: Node | null = e.parentNode as Node | null; node; node = 'parentNode' in node ? (node.parentNode as Node | null) : null) {
            if ('tagName' in node && node.tagName === 'body') return true
          }
          return false
        }
        const inPlace = (e: Element): boolean => parentOf(e) === 'head' || inBody(e)
        const attr = (e: Element, name: string): string | undefined => e.attrs.find((a) => a.name === name)?.value
        // Still the stylesheet it was, held at print, its media in the mark.
        const held = (e: Element): boolean => /stylesheet/i.test(attr(e, 'rel') ?? '') && attr(e, 'media') === 'print' && attr(e, 'data-critical-css-media') !== undefined
        // A <frameset> the parser takes drops the body, with the links it held.
        if (preload !== 'body' && parsed.some((e) => e.tagName === 'frameset')) return
        for (const href of result.deferred) {
          const links = parsed.filter((e) => e.tagName === 'link' && attr(e, 'href') === href && e.namespaceURI === HTML_NS)
          if (preload === 'body') {
            expect(links.some((e) => parentOf(e) === 'head' && attr(e, 'rel') === 'preload' && attr(e, 'as') === 'style' && attr(e, 'onload') === undefined)).toBe(true)
            // At the end of the body, inside whatever element is still open there.
            expect(links.some((e) => /stylesheet/i.test(attr(e, 'rel') ?? '') && inBody(e))).toBe(true)
          } else if (preload === 'loader') {
            expect(links.some((e) => inPlace(e) && held(e))).toBe(true)
          } else if (preload === 'media') {
            expect(links.some((e) => inPlace(e) && attr(e, 'media') === 'print' && attr(e, 'onload')?.startsWith('this.media='))).toBe(true)
          } else {
            expect(links.some((e) => inPlace(e) && attr(e, 'rel') === 'preload' && attr(e, 'onload') === "this.rel='stylesheet'")).toBe(true)
          }
        }
        if (preload !== 'loader' || result.deferred.length === 0) return
        // The script, async, after every link it restores in the head, so that it finds them
        // however early it runs; with none there, after the first in the body.
        const script = parsed.findIndex((e) => e.tagName === 'script' && attr(e, 'src') === LOADER && attr(e, 'async') !== undefined)
        const restored = parsed.filter((e) => e.tagName === 'link' && held(e))
        const inHead = restored.filter((e) => parentOf(e) === 'head')
        if (inHead.length > 0) {
          expect(parentOf(parsed[script]!)).toBe('head')
          expect(script).toBeGreaterThan(parsed.indexOf(inHead.at(-1)!))
        } else {
          expect(inBody(parsed[script]!)).toBe(true)
          expect(script).toBeGreaterThan(parsed.indexOf(restored[0]!))
        }
      }),
      { ...RUNS, ...EXAMPLES_3 },
    )
  })

  it('with loader, media and swap, no stylesheet the parser puts in the body blocks it unless its author manages it', () => {
    const attr = (e: Element, name: string): string | undefined => e.attrs.find((a) => a.name === name)?.value
    const tokens = (value: string | undefined): string[] => (value ?? '').toLowerCase().split(/[\t\n\f\r ]+/)
    const trimmed = (value: string | undefined): string | undefined => value?.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').toLowerCase()
    /** What the HTML standard and Chromium take for a stylesheet that applies on screen. */
    const blocks = (e: Element): boolean => {
      const rel = tokens(attr(e, 'rel'))
      const type = trimmed(attr(e, 'type'))
      const media = trimmed(attr(e, 'media'))
      return (
        rel.includes('stylesheet') &&
        !rel.includes('alternate') &&
        !!trimmed(attr(e, 'href')) &&
        attr(e, 'disabled') === undefined &&
        (!type || type === 'text/css') &&
        !['print', 'none', 'only x', 'not all'].includes(media ?? 'all')
      )
    }
    const managed = (e: Element): boolean => attr(e, 'onload') !== undefined || tokens(attr(e, 'blocking')).includes('render')
    const blockingInBody = (markup: string): Element[] => {
      const body = elements(markup, false).find((e) => e.tagName === 'body')
      return body ? [...walk(body, false)].filter((e) => e.tagName === 'link' && e.namespaceURI === HTML_NS && blocks(e) && !managed(e)) : []
    }
    fc.assert(
      fc.property(soup(FOLLOWED), fc.constantFrom<PreloadStrategy>('loader', 'media', 'swap'), (input, preload) => {
        expect(blockingInBody(inlineCriticalCss(input, 'h1{color:red}', { preload, loaderSrc: LOADER }).html)).toEqual([])
      }),
      RUNS,
    )
  })

  it('keeps the cascade: style sources come in the order they came', () => {
    fc.assert(
      fc.property(html, css, strategy, (input, style, preload) => {
        fc.pre(style.trim() !== '' && !input.includes('data-critical-css'))
        expect(cascade(inlineCriticalCss(input, style, { preload, loaderSrc: LOADER }).html)).toEqual(cascade(input))
      }),
      { ...RUNS, ...EXAMPLES_3 },
    )
  })

  it("with 'none', the document parses as before but for the style", () => {
    fc.assert(
      fc.property(html, css, (input, style) => {
        fc.pre(style.trim() !== '')
        const shape = (markup: string): string[] =>
          elements(markup)
            .filter((e) => !(e.tagName === 'style' && e.attrs.some((a) => a.name === 'data-critical-css')))
            .map((e) => `${e.parentNode && 'tagName' in e.parentNode ? e.parentNode.tagName : '#'}>${e.tagName}`)
        fc.pre(!input.includes('data-critical-css'))
        expect(shape(inlineCriticalCss(input, style, { preload: 'none' }).html)).toEqual(shape(input))
      }),
      { ...RUNS, ...EXAMPLES_2 },
    )
  })
})
