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
})
