/**
 * The static engine's matching: the page's index narrows which elements a selector is tried
 * on (its subject's tag, classes, id and attributes), and never drops a match css-select
 * would find; a state put on `<html>` is seen by every selector, whatever was asked before.
 */
import { describe, expect, it } from 'vitest'
import type { Questions } from '../../src/engine/css.ts'
import { parseState, type HtmlState } from '../../src/contract/api-contract.ts'
import { inRootState, readDocument } from '../../src/engine/static/document.ts'
import { matchSelectors } from '../../src/engine/static/match.ts'

/** Questions as selectors.ts writes them: the reduced selector and its subject's tokens. */
function questions(pairs: [string, string[]][]): Questions {
  return { selectors: pairs.map(([selector]) => selector), subjects: pairs.map(([, subject]) => subject), media: [] }
}

function state(text: string): HtmlState {
  const parsed = parseState(text)
  if (parsed === null) throw new Error(`not a state: ${text}`)
  return parsed
}

// Many links: a selector whose subject is `a` has many candidates.
const ITEMS = Array.from({ length: 100 }, (_, index) => `<li class="item"><a href="/p/${index}">${index}</a></li>`).join('')
const PAGE = `<!doctype html><html lang="en"><head><title>t</title></head><body>
<form><input type="search" name="q"><input type=checkbox hidden></form>
<ul class="nav">${ITEMS}</ul>
<svg viewBox="0 0 10 10"><linearGradient id="g"></linearGradient></svg>
<table><tr><td role="cell">x</td></tr></table>
</body></html>`

describe('matching a page read without a browser', () => {
  it('finds what css-select finds through the index: attributes, classes, ids, tags, foreign elements, implied elements', () => {
    const asked = questions([
      ['[type="search"]', []],
      ['[type="number"]', []],
      ['[hidden]', []],
      ['input[type=checkbox]', ['t:input']],
      ['[role="cell"]', []],
      ['[role="button"]', []],
      ['.item>a[href^="/p/9"]', ['t:a']],
      ['a:not([href])', ['t:a']],
      ['.nav [href]', []],
      ['.nav [download]', []],
      ['lineargradient', ['t:lineargradient']],
      ['#g', ['i:g']],
      ['table>tbody>tr>td', ['t:td']],
      ['[viewBox]', []],
    ])
    const page = readDocument(PAGE, 'http://127.0.0.1/')
    expect(matchSelectors(asked, page)).toEqual([true, false, true, true, true, false, true, false, true, false, true, true, true, true])
    // Asked again, with the attribute lists made: the same answers.
    expect(matchSelectors(asked, page)).toEqual(matchSelectors(asked, readDocument(PAGE, 'http://127.0.0.1/')))
  })

  it('sees the root in a state, after the same attribute or class was asked about without it, and not after the state ends', () => {
    const asked = questions([
      ['[data-theme="dark"]', []],
      ['[data-theme="dark"] .item', ['c:item']],
      ['.dark', ['c:dark']],
      ['[lang]', []],
      ['[class~="dark"]', []],
    ])
    const page = readDocument(PAGE, 'http://127.0.0.1/')
    expect(matchSelectors(asked, page)).toEqual([false, false, false, true, false])
    expect(inRootState(page, state('[data-theme=dark]'), () => matchSelectors(asked, page))).toEqual([true, true, false, true, false])
    expect(inRootState(page, state('.dark'), () => matchSelectors(asked, page))).toEqual([false, false, true, true, true])
    expect(matchSelectors(asked, page)).toEqual([false, false, false, true, false])
  })
})
