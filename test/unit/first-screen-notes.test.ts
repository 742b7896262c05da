/** The log line of a page whose first screen still differs: per viewport, and the state it was read in. */
import { describe, expect, it } from 'vitest'
import { firstScreenLine } from '../../src/core/first-screen-notes.ts'

describe('firstScreenLine', () => {
  it('names the share, the viewport, the state when one was read, and the first elements', () => {
    expect(
      firstScreenLine([
        { viewport: { width: 412, height: 915 }, share: 0.008, elements: ['footer.site', 'img.hero'] },
        { viewport: { width: 1300, height: 900 }, state: 'prefers-color-scheme: dark', share: 0.021, elements: ['a', 'b', 'c', 'd'] },
        { viewport: { width: 1300, height: 900 }, state: '[data-theme=dark]', share: 0.0004, elements: [] },
      ]),
    ).toBe('first screen differs until the full CSS loads: 0.8 % at 412×915 (footer.site, img.hero); 2.1 % at 1300×900 in prefers-color-scheme: dark (a, b, c, …); < 0.1 % at 1300×900 in [data-theme=dark]')
    expect(firstScreenLine([])).toBeNull()
  })
})
