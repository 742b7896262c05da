/**
 * The static engine's media queries: held to a viewport's width, height, aspect ratio and
 * orientation, as a browser at that size would hold them; what it cannot read is kept.
 */
import { describe, expect, it } from 'vitest'
import { viewportMediaTest } from '../../src/engine/selectors.ts'
import { mediaHolds } from '../../src/engine/static/media.ts'

const DESKTOP = { width: 1300, height: 900 }
const PHONE = { width: 412, height: 915 }

describe('media queries at a viewport', () => {
  it.each([
    ['', true, true],
    ['all', true, true],
    ['screen', true, true],
    ['print', false, false],
    ['not print', true, true],
    ['only screen and (max-width: 600px)', false, true],
    ['(min-width: 768px)', true, false],
    ['(min-width: 48em)', true, false],
    ['(max-width: 25.75rem)', false, true],
    ['(width >= 40rem)', true, false],
    ['(40rem <= width)', true, false],
    ['(400px <= width < 1000px)', false, true],
    ['(width: 412px)', false, true],
    ['(orientation: portrait)', false, true],
    ['(orientation: landscape)', true, false],
    ['(min-aspect-ratio: 16/9)', false, false],
    ['(max-aspect-ratio: 1/1)', false, true],
    ['(min-width: 1400px), print', false, false],
    ['(min-width: 1400px), (max-width: 500px)', false, true],
    ['not all and (min-width: 768px)', false, true],
    ['screen and (min-width: 576px) and (max-width: 991.98px)', false, false],
    ['((min-width: 10px) or (max-height: 20px))', true, true],
    ['(min-width: calc(100px + 2em))', true, true],
    ['(min-width: 20vw)', true, true],
    ['(unknown-feature: 3)', true, true],
    ['@@@', true, true],
  ])('%j holds at 1300×900: %s, at 412×915: %s', (media, desktop, phone) => {
    expect([mediaHolds(media, DESKTOP), mediaHolds(media, PHONE)]).toEqual([desktop, phone])
  })

  it('keeps what a visitor may prefer: the questions the engine asks have those features as always-true', () => {
    const dark = viewportMediaTest('(prefers-color-scheme: dark) and (min-width: 768px)')
    expect([mediaHolds(dark, DESKTOP), mediaHolds(dark, PHONE)]).toEqual([true, false])
    const reduced = viewportMediaTest('(prefers-reduced-motion: reduce)')
    expect(mediaHolds(reduced, PHONE)).toBe(true)
  })
})
