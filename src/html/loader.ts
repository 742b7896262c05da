/**
 * The loader script of the `loader` strategy: a file the build emits beside its assets
 * (same origin, so `script-src 'self'` admits it; no inline script, no event handler).
 * Each deferred link is already the page's `<link rel="stylesheet">`, where it was, held at
 * `media="print"`: a stylesheet whose media does not match when the parser creates it is
 * neither render-blocking nor script-blocking (HTML standard, "contributes a script-blocking
 * style sheet"), so first paint and the page's scripts never wait for it. This script gives
 * them their own media back, all together, once every one has loaded. Because the stylesheet
 * link is in the document from the start, an app that looks for it (Vite's preload helper,
 * webpack's CSS chunk loader) finds it whenever it starts, before or after this script (issue 33).
 */
import { createHash } from 'node:crypto'
import { LOADER_MEDIA_ATTRIBUTE } from './outline.ts'

// Every deferred sheet gets its media back in one go, once all have loaded (or failed) and the
// document is parsed, so the cascade is at every moment the critical CSS alone or all of it:
// a small sheet that came first would otherwise win over the inlined copies of a later sheet's
// rules, and the layout would move twice (issue 35). By the standard's rule, a parser-inserted
// stylesheet still loading whose media matches holds up the scripts that have not run yet, so
// none is given its media before it has loaded. Async, the script may run before the parser
// has reached the body's links: it looks again when the document is parsed ('interactive'
// comes before deferred and module scripts run). At 'complete' every link has loaded or
// failed, even one that failed before the script ran. In a block, so that it declares no
// global. Another copy of the script (a page processed twice) finds the marks gone.
export const LOADER_SCRIPT = `/* unplugin-critical-css: applies the full stylesheets together, without blocking render or scripts */
{
  const ended = new WeakSet()
  const swap = () => {
    if (document.readyState === 'loading') return
    const links = document.querySelectorAll('link[${LOADER_MEDIA_ATTRIBUTE}]')
    if (document.readyState !== 'complete') for (const link of links) if (!link.sheet && !ended.has(link)) return
    for (const link of links) {
      const media = link.getAttribute('${LOADER_MEDIA_ATTRIBUTE}')
      link.removeAttribute('${LOADER_MEDIA_ATTRIBUTE}')
      if (media) link.media = media
      else link.removeAttribute('media')
    }
  }
  const watch = () => {
    for (const link of document.querySelectorAll('link[${LOADER_MEDIA_ATTRIBUTE}]')) {
      const end = () => {
        ended.add(link)
        swap()
      }
      link.addEventListener('load', end, { once: true })
      link.addEventListener('error', end, { once: true })
    }
    swap()
  }
  watch()
  document.addEventListener('readystatechange', watch)
}
`

/** The loader's file name, content-hashed: a new loader gets a new name, so it can be cached for ever. */
export const LOADER_FILE = `critical-css-loader.${createHash('sha256').update(LOADER_SCRIPT).digest('hex').slice(0, 8)}.js`
