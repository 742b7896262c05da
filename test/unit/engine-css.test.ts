/**
 * The engine's CSS side without a browser: what the page is asked (reduced selectors and
 * their subjects, viewport-only media queries) and how URLs are rebased for inlining.
 */
import { parse, toPlainObject, type SelectorListPlain, type SelectorPlain } from 'css-tree'
import { describe, expect, it } from 'vitest'
import { CriticalCss } from '../../src/engine/css.ts'
import { reduceSelector, viewportMediaTest } from '../../src/engine/selectors.ts'
import { combineSheets } from '../../src/engine/sheets.ts'
import { rebaseUrl } from '../../src/shared/css-plain.ts'

function selector(text: string): SelectorPlain {
  return (toPlainObject(parse(text, { context: 'selectorList' })) as SelectorListPlain).children[0] as SelectorPlain
}

describe('reduceSelector', () => {
  it.each([
    ['a.nav:hover::after', 'a.nav', ['t:a', 'c:nav']],
    ['.btn:focus-visible > :hover', '.btn>*', []],
    ['::placeholder', '*', []],
    ['input::-webkit-input-placeholder', 'input', ['t:input']],
    ['a:not(:hover) .x:first-child', 'a:not(:hover) .x:first-child', ['c:x']],
    ['#top .Menu:before', '#top .Menu', ['c:Menu']],
    ['.sm\\:flex', '.sm\\:flex', []],
    ['user-badge:not(:defined)', 'user-badge', ['t:user-badge']],
    ['site-nav:defined .link', 'site-nav .link', ['c:link']],
    ['.x:not(:hover)', '.x:not(:hover)', ['c:x']],
  ])('%s → %s', (input, text, subject) => {
    expect(reduceSelector(selector(input))).toEqual({ text, subject })
  })

  it('leaves a nested rule’s `&` selector to its parent, and drops what needs a selection to show', () => {
    expect(reduceSelector(selector('& .x'))).toBe('keep')
    expect(reduceSelector(selector('::selection'))).toBe('drop')
    expect(reduceSelector(selector('p::-moz-selection'))).toBe('drop')
  })
})

describe('viewportMediaTest', () => {
  it.each([
    ['(min-width: 768px)', '(min-width: 768px)'],
    ['(prefers-color-scheme: dark) and (min-width: 768px)', '(min-width:0px) and (min-width: 768px)'],
    ['not (hover)', '(min-width:0px)'],
    ['print', 'print'],
    ['(400px <= width <= 700px)', '(400px <= width <= 700px)'],
    ['(max-width: calc(100px + 2em))', '(max-width: calc(100px + 2em))'],
    ['screen and (min-resolution: 2dppx)', 'screen and (min-width:0px)'],
  ])('%s → %s', (input, output) => {
    expect(viewportMediaTest(input)).toBe(output)
  })
})

describe('rebaseUrl', () => {
  const page = 'https://site.test'
  it.each([
    ['../img/bg.jpg', 'https://site.test/css/site.css', '/img/bg.jpg'],
    ['img/i.png?v=2#x', 'https://site.test/blog/post.html', '/blog/img/i.png?v=2#x'],
    ['font.woff2', 'https://cdn.test/f/font.css', 'https://cdn.test/f/font.woff2'],
    ['data:image/png;base64,AA', 'https://site.test/css/a.css', 'data:image/png;base64,AA'],
    ['#filter', 'https://site.test/css/a.css', '#filter'],
  ])('%s in %s → %s', (value, base, expected) => {
    expect(rebaseUrl(value, base, page)).toBe(expected)
  })
})

describe('CriticalCss', () => {
  it('keeps the rules the answers keep, in order, and what they use', () => {
    const { sheet } = combineSheets(
      [{ text: ':root{--a:1px;--b:2px;--bar-transition-height:3px}@font-face{font-family:X;src:url(x.woff2)}.a{margin:var(--a);font-family:X;height:var(--bar-transition-height);transition:height 1s}.b{margin:var(--b)}@media (min-width:900px){.a{padding:0}.b{padding:0}}', base: 'https://s.test/css/s.css', media: '' }],
      () => undefined,
      'https://s.test/',
    )
    const critical = new CriticalCss(sheet)
    const answer = (kept: string[], media: boolean) => ({
      selectors: critical.questions.selectors.map((s) => kept.includes(s)),
      media: critical.questions.media.map(() => media),
      inlineStyles: '',
    })
    expect(critical.css([answer([':root', '.a'], false)])).toBe(':root{--a:1px;--bar-transition-height:3px}@font-face{font-family:X;src:url(/css/x.woff2)}.a{margin:var(--a);font-family:X;height:var(--bar-transition-height)}')
    expect(critical.css([answer([':root', '.b'], false), answer([':root', '.a'], true)])).toBe(
      ':root{--a:1px;--b:2px;--bar-transition-height:3px}@font-face{font-family:X;src:url(/css/x.woff2)}.a{margin:var(--a);font-family:X;height:var(--bar-transition-height)}.b{margin:var(--b)}@media (min-width:900px){.a{padding:0}}',
    )
  })

  /** The critical CSS of `text` (one sheet) when the selectors in `kept` match above the fold and no media query does. */
  function criticalOf(text: string, kept: string[]): string {
    const { sheet } = combineSheets([{ text, base: 'https://s.test/s.css', media: '' }], () => undefined, 'https://s.test/')
    const critical = new CriticalCss(sheet)
    return critical.css([{ selectors: critical.questions.selectors.map((s) => kept.includes(s)), media: critical.questions.media.map(() => false), inlineStyles: '' }])
  }

  it('starts with the page’s whole layer order, so a layer with nothing above the fold keeps its place when the full CSS comes', () => {
    // Tailwind 4 as Vite's minifier leaves it: no statement, the blocks in order; `components` has nothing above the fold.
    const tailwind = '@layer theme{:root{--brand:purple}}@layer base{h1{margin:0}}@layer components{.btn{color:var(--brand)}}@layer utilities{.bg-emerald{color:green}}'
    expect(criticalOf(tailwind, ['h1', '.bg-emerald'])).toBe('@layer theme,base,components,utilities;@layer base{h1{margin:0}}@layer utilities{.bg-emerald{color:green}}')
    // Sublayers by their full names; a statement the order covers is not repeated; `@layer a.b` declares `a` first.
    expect(criticalOf('@layer reset,base;@layer base{@layer low,high;@layer high{h1{margin:0}}}@layer kit.buttons{.btn{color:red}}', ['h1'])).toBe(
      '@layer reset,base,base.low,base.high,kit,kit.buttons;@layer base{@layer high{h1{margin:0}}}',
    )
    // A layer first named inside a condition joins the order only where it holds; an anonymous layer's own statement stays in it.
    expect(criticalOf('@layer a{h1{margin:0}}@media (min-width:1px){@layer late{h1{color:red}}}@layer{@layer inner;h1{padding:0}}', ['h1'])).toBe('@layer a;@layer a{h1{margin:0}}@layer{@layer inner;h1{padding:0}}')
    // No layers, no statement.
    expect(criticalOf('h1{margin:0}.x{color:red}', ['h1'])).toBe('h1{margin:0}')
  })
})
