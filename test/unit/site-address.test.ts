/**
 * Issue 32, absolute-URL themes: where a folder's pages say they are deployed, and the
 * build server serving that origin's URLs from the folder.
 */
import { describe, expect, it } from 'vitest'
import { sitePageOf } from '../../src/core/base-check.ts'
import { siteAddress } from '../../src/core/site-address.ts'
import { onSiteOrigin, servedFromBuild } from '../../src/core/site-origin.ts'

const page = (file: string, head: string) => sitePageOf('', file, `<!doctype html><html><head><title>t</title>${head}</head><body>x</body></html>`)
const theme = '<link rel="stylesheet" href="https://example.org/css/main.css">'

describe('servedFromBuild: the site origin, however written, becomes the build server', () => {
  const site = new URL('https://example.org/')
  const local = new URL('http://127.0.0.1:4173/')
  it.each([
    ['<link href="https://example.org/css/main.css">', '<link href="http://127.0.0.1:4173/css/main.css">'],
    ['<link href="http://example.org/css/main.css">', '<link href="http://127.0.0.1:4173/css/main.css">'],
    ["<link href='//example.org/css/main.css'>", "<link href='http://127.0.0.1:4173/css/main.css'>"],
    ['<a href="https://EXAMPLE.org">home</a>', '<a href="http://127.0.0.1:4173">home</a>'],
    ['.a{background:url(https://example.org:443/img/a.png)}', '.a{background:url(http://127.0.0.1:4173/img/a.png)}'],
    // Other hosts stay.
    ['<link href="https://example.org.evil.test/x.css">', '<link href="https://example.org.evil.test/x.css">'],
    ['<link href="https://example.organic/x.css">', '<link href="https://example.organic/x.css">'],
    ['<link href="https://cdn.example.org/x.css">', '<link href="https://cdn.example.org/x.css">'],
    ['<link href="https://example.org:8443/x.css">', '<link href="https://example.org:8443/x.css">'],
  ])('%s', (text, expected) => {
    expect(servedFromBuild(text, site, local)).toBe(expected)
  })

  it('onSiteOrigin takes either scheme on the same host and port', () => {
    expect(onSiteOrigin(new URL('http://example.org/x'), site)).toBe(true)
    expect(onSiteOrigin(new URL('https://example.org:8443/x'), site)).toBe(false)
    expect(onSiteOrigin(new URL('https://www.example.org/x'), site)).toBe(false)
    expect(onSiteOrigin(new URL('https://example.org/x'), null)).toBe(false)
  })
})

describe('siteAddress: where the pages say they are deployed', () => {
  it('agrees when every page names the same root, by canonical or og:url', () => {
    const found = siteAddress([
      page('index.html', `<link rel="canonical" href="https://example.org/">${theme}`),
      page('posts/first/index.html', `<meta property="og:url" content="https://example.org/posts/first/">${theme}`),
      page('about.html', `<link rel="canonical" href="https://example.org/about.html">${theme}`),
    ])
    expect(found).toEqual({ kind: 'agreed', siteUrl: new URL('https://example.org/'), pages: 3, of: 3 })
  })

  it('finds a root below a path (a project site)', () => {
    const found = siteAddress([
      page('index.html', '<link rel="canonical" href="https://user.github.io/fieldnotes/"><link rel="stylesheet" href="https://user.github.io/fieldnotes/css/main.css">'),
      page('posts/index.html', '<link rel="canonical" href="https://user.github.io/fieldnotes/posts/">'),
    ])
    expect(found).toMatchObject({ kind: 'agreed', siteUrl: new URL('https://user.github.io/fieldnotes/') })
  })

  it('is unsure when the pages disagree, and says nothing when no page links a sheet on its address', () => {
    const disagree = siteAddress([page('index.html', `<link rel="canonical" href="https://example.org/">${theme}`), page('a/index.html', '<link rel="canonical" href="https://other.test/a/">')])
    expect(disagree.kind).toBe('unsure')
    expect(siteAddress([page('index.html', '<link rel="canonical" href="https://example.org/"><link rel="stylesheet" href="/css/main.css">')])).toEqual({ kind: 'none' })
    expect(siteAddress([page('index.html', theme)])).toEqual({ kind: 'none' })
  })
})
