import { describe, expect, it } from 'vitest'
import { renderKeyText } from '../../src/html/render-key.ts'

/** A page as `nuxt generate` writes it (trimmed): the build id and render time are stamped into a preload and two scripts. */
function nuxtPage(buildId: string, renderedAt: number, heading = 'Home'): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/_nuxt/entry.BvR3.css" crossorigin>
<link rel="modulepreload" as="script" crossorigin href="/_nuxt/Cx1z.js">
<link rel="preload" as="fetch" crossorigin="anonymous" href="/_payload.json?_b=${buildId}">
<script type="module" src="/_nuxt/Cx1z.js" crossorigin></script></head><body><div id="__nuxt"><header class="hero"><h1>${heading}</h1></header></div>
<script>window.__NUXT__={};window.__NUXT__.config={app:{baseURL:"/",buildId:"${buildId}"}}</script>
<script type="application/json" data-nuxt-data="nuxt-app" id="__NUXT_DATA__" data-src="/_payload.json?_b=${buildId}">[{"prerenderedAt":1},${renderedAt}]</script></body></html>`
}

describe('renderKeyText', () => {
  it('is the same for two builds of one page that differ only in build id and render time', () => {
    const first = nuxtPage('24d136b7-4afe-4fef-8379-19baae45aaa1', 1795443913317)
    const second = nuxtPage('78ffb4a3-7681-4f10-89fb-9c4e7cfe439c', 1795443920154)
    expect(first).not.toBe(second)
    expect(renderKeyText(first)).toBe(renderKeyText(second))
  })

  it('still tells apart what the browser renders and the stylesheets linked', () => {
    const page = nuxtPage('a', 1)
    expect(renderKeyText(nuxtPage('a', 1, 'Pricing'))).not.toBe(renderKeyText(page))
    expect(renderKeyText(page.replace('entry.BvR3.css', 'entry.Qq9.css'))).not.toBe(renderKeyText(page))
    expect(renderKeyText(page)).toContain('<link rel="stylesheet" href="/_nuxt/entry.BvR3.css" crossorigin>')
    expect(renderKeyText(page)).not.toMatch(/modulepreload|_payload|__NUXT__/)
    expect(renderKeyText(page)).toContain('<script src="/_nuxt/Cx1z.js">')
  })

  it('keeps a document without scripts as it is, and ends an unclosed script at the end', () => {
    const plain = '<!doctype html><html><head><link rel="StyleSheet" href="/a.css"></head><body><p>x</p></body></html>'
    expect(renderKeyText(plain)).toBe(plain)
    expect(renderKeyText('<p>x</p><script>let a = "</p>"')).toBe('<p>x</p>')
  })
})

describe('renderKeyText and scripts', () => {
  it('keeps which script file a page loads: a new bundle is a new key', () => {
    const page = (src: string): string => `<html><head><link rel="stylesheet" href="/a.css"><script type="module" src="${src}" crossorigin></script></head><body><p>x</p></body></html>`
    expect(renderKeyText(page('/assets/index-abc.js'))).not.toBe(renderKeyText(page('/assets/index-def.js')))
    expect(renderKeyText(page('/assets/index-abc.js'))).toContain('<script src="/assets/index-abc.js">')
  })
})

describe('renderKeyText reads tags as a browser does', () => {
  it('sees no script or link inside comments, quoted attribute values or raw text', () => {
    const page =
      '<html><head><title><script>t</script></title><!-- <script>c</script> <link rel=icon href=/c.ico> -->' +
      '<style>.a::after{content:"<link rel=icon>"}</style></head>' +
      '<body><div data-x="<script>a</script>" title=\'<link rel="icon">\'>x</div><textarea><script>s</script></textarea>' +
      '<noscript><link rel="preload" href="/n.css"></noscript></body></html>'
    expect(renderKeyText(page)).toBe(page)
  })

  it('cuts each script and non-stylesheet link, whatever its letter case, escapes or attributes', () => {
    const page = '<HEAD><LINK REL="Preload" href="/x.js"><Script SRC=\'/a.js\' data-x=">">let a = "<!--<script>";</script>-->"</SCRIPT ></HEAD><p>kept</p>'
    expect(renderKeyText(page)).toBe('<HEAD><script src="/a.js"></HEAD><p>kept</p>')
  })
})
