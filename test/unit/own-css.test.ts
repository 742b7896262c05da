/**
 * Only this build's CSS: the critical CSS of a deployed release, held against the deployed
 * page's own stylesheets and this build's, keeps what this build has.
 */
import { describe, expect, it } from 'vitest'
import { keepOwnRules } from '../../src/core/own-css.ts'

const pageUrl = 'https://example.com/about/'
const sheet = (text: string, path = '/assets/about.css') => ({ text, url: `https://example.com${path}` })

describe('keepOwnRules', () => {
  it('returns the same bytes when the deployed rules are this build’s', () => {
    const css = '.top{background:#123}.hero{min-height:100vh}'
    const deployed = [sheet('.top{background:#123}.hero{min-height:100vh}.below{color:red}', '/assets/about-A.css')]
    const build = [sheet('.top { background: #123 }\n.hero{min-height:100vh}.below{color:red}.new{color:blue}', '/assets/about-B.css')]
    expect(keepOwnRules(css, { deployed, build, pageUrl })).toEqual({ css, dropped: 0, replaced: 0 })
  })

  it('takes declarations a minifier reordered for the same rule', () => {
    const css = '.hero{min-height:100vh;display:grid;color:#fff}'
    const deployed = [sheet('.hero{min-height:100vh;display:grid;color:#fff}', '/style.css')]
    const build = [sheet('.hero{color:#fff;min-height:100vh;display:grid}', '/assets/style-B.css')]
    expect(keepOwnRules(css, { deployed, build, pageUrl })).toEqual({ css, dropped: 0, replaced: 0 })
  })

  it('gives a changed rule this build’s declarations and drops a rule this build no longer has', () => {
    const css = '.top{background:#123}.promo,.hero{min-height:100vh}@media (min-width:600px){.top{padding:0}}'
    const deployed = [sheet('.top{background:#123}.promo,.hero{min-height:100vh}@media (min-width:600px){.top{padding:0}}', '/assets/about-A.css')]
    const build = [sheet('.top{background:#c00}.hero{min-height:100vh}@media (min-width:600px){.top{padding:0}}', '/assets/about-B.css')]
    const own = keepOwnRules(css, { deployed, build, pageUrl })
    expect(own).toEqual({ css: '.top{background:#c00}.hero{min-height:100vh}@media (min-width:600px){.top{padding:0}}', dropped: 1, replaced: 1 })
  })

  it('keeps what the deployed page’s own sheets do not have (another origin’s), and drops a context left empty', () => {
    const css = '@font-face{font-family:Inter;src:url(https://fonts.example/inter.woff2)}.gone{color:red}@media print{.gone{color:#000}}'
    const deployed = [sheet('.gone{color:red}@media print{.gone{color:#000}}')]
    const own = keepOwnRules(css, { deployed, build: [sheet('.kept{color:red}')], pageUrl })
    expect(own).toEqual({ css: '@font-face{font-family:Inter;src:url(https://fonts.example/inter.woff2)}', dropped: 2, replaced: 0 })
  })

  it('resolves this build’s url()s from the page, as the inlined CSS needs them', () => {
    const css = '.hero{background:url(/assets/old.png)}'
    const deployed = [sheet('.hero{background:url(old.png)}')]
    const build = [sheet('.hero{background:url(./hero-2.png)}')]
    expect(keepOwnRules(css, { deployed, build, pageUrl }).css).toBe('.hero{background:url(/assets/hero-2.png)}')
  })
})
