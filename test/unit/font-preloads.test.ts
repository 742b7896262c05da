/** The fonts `preloadFonts` preloads: each critical `@font-face`'s WOFF2 file, in order. */
import { describe, expect, it } from 'vitest'
import { criticalFonts, MAX_FONT_PRELOADS } from '../../src/core/font-preloads.ts'

describe('criticalFonts', () => {
  it('takes the WOFF2 file of each face, by format() or by name, else its first url(); the last src counts', () => {
    const css = [
      '@font-face{font-family:A;src:url(/f/a.woff) format("woff"),url(/f/a.woff2) format("woff2")}',
      '@font-face{font-family:B;src:local("B"),url(/f/b.woff2)}',
      '@font-face{font-family:C;src:url(/f/c.ttf) format("truetype")}',
      '@font-face{font-family:D;src:url(/f/old.woff2);src:url(/f/d.otf)}',
      '.x{font-family:A}',
    ].join('')
    expect(criticalFonts(css)).toEqual(['/f/a.woff2', '/f/b.woff2', '/f/c.ttf', '/f/d.otf'])
  })

  it('leaves out data: fonts, faces without a URL and repeats; at most a few', () => {
    expect(criticalFonts('@font-face{font-family:A;src:url(data:font/woff2;base64,AAAA)}@font-face{font-family:B;src:local(B)}')).toEqual([])
    const many = Array.from({ length: 6 }, (_, i) => `@font-face{font-family:F${i};src:url(/f/${i % 5}.woff2)}`).join('')
    expect(criticalFonts(many)).toEqual(['/f/0.woff2', '/f/1.woff2', '/f/2.woff2', '/f/3.woff2'].slice(0, MAX_FONT_PRELOADS))
    expect(criticalFonts('not css {')).toEqual([])
  })
})
