/** `critical-css:keep` / `critical-css:drop` comments: which rules each one marks. */
import { describe, expect, it } from 'vitest'
import { markedSelectors } from '../../src/core/css-markers.ts'

describe('markedSelectors', () => {
  it('a marker marks the rule after it, every selector of it as CSS writes them; `/*!` too; a rule after a closed block is not the marker’s', () => {
    const css = `.menu{display:none}
/* critical-css:keep */
.menu.is-open , .menu  > .item {display:block}
/*! critical-css:drop */
.cookie-banner{position:fixed}
@media (min-width: 600px) { .wide{} /* critical-css:keep */ }
.after-block{}
/* critical-css:keep */
@media print { .printed{} }`
    expect(markedSelectors(css)).toEqual({ keep: ['.menu.is-open', '.menu>.item', '.printed'], drop: ['.cookie-banner'] })
  })

  it('a marker in a block marks its rule (a nested rule through its parent); a range marks every rule between start and end, or to the end', () => {
    const css = `.a { /* critical-css:keep */ color: red }
.b { color: red; /* critical-css:drop */ }
.parent { color: red; /* critical-css:keep */ .child{} }
/* critical-css:keep start */
.e{} @media print { .f{} }
/* critical-css:keep end */
.h{}
/* critical-css:drop start */
.i{} .j{}`
    expect(markedSelectors(css)).toEqual({ keep: ['.a', '.parent', '.e', '.f'], drop: ['.b', '.i', '.j'] })
  })

  it('names nothing without markers, for other comments, a marker at the end, or CSS it cannot read', () => {
    expect(markedSelectors('.a{}/* keep */.b{}/* critical-css:keeper */.c{}')).toEqual({ keep: [], drop: [] })
    expect(markedSelectors('.a{}/* critical-css:keep */')).toEqual({ keep: [], drop: [] })
  })
})
