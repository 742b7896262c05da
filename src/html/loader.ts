/**
 * The loader script of the `loader` strategy: a file the build emits beside its assets
 * (same origin, so `script-src 'self'` admits it; no inline script, no event handler).
 * Each deferred link is already the page's `<link rel="stylesheet">`, where it was, held at
 * `media="print"`: a stylesheet whose media does not match when the parser creates it is
 * neither render-blocking nor script-blocking (HTML standard, "contributes a script-blocking
 * style sheet"), so first paint and the page's scripts never wait for it. This script gives
 * each its own media back once it has loaded. Because the stylesheet link is in the
 * document from the start, an app that looks for it (Vite's preload helper, webpack's CSS
 * chunk loader) finds it whenever it starts, before or after this script (issue 33).
 */
import { createHash } from 'node:crypto'
import { LOADER_MEDIA_ATTRIBUTE } from './outline.ts'

// The media changes only once the sheet has loaded: by the standard's rule, a parser-inserted
// stylesheet still loading whose media matches holds up the scripts that have not run yet. Loaded already,
// `sheet` is set and no load event comes; a sheet that fails to load has nothing to apply.
// Async, it may run before the parser has reached the body's links: it looks again when the
// document is parsed ('interactive' comes before deferred and module scripts run,
// DOMContentLoaded after them). A link found twice gets its media back once.
// In a block, so that it declares no global. Another copy of the script (a page processed
// twice) finds the mark gone and does nothing.
export const LOADER_SCRIPT = `/* unplugin-critical-css: applies the full stylesheets without blocking render or scripts */
{
  const restore = () => {
    for (const link of document.querySelectorAll('link[${LOADER_MEDIA_ATTRIBUTE}]')) {
      const apply = () => {
        if (!link.hasAttribute('${LOADER_MEDIA_ATTRIBUTE}')) return
        const media = link.getAttribute('${LOADER_MEDIA_ATTRIBUTE}')
        link.removeAttribute('${LOADER_MEDIA_ATTRIBUTE}')
        if (media) link.media = media
        else link.removeAttribute('media')
      }
      if (link.sheet) apply()
      else link.addEventListener('load', apply)
    }
  }
  restore()
  if (document.readyState === 'loading') document.addEventListener('readystatechange', restore, { once: true })
}
`

/** The loader's file name, content-hashed: a new loader gets a new name, so it can be cached for ever. */
export const LOADER_FILE = `critical-css-loader.${createHash('sha256').update(LOADER_SCRIPT).digest('hex').slice(0, 8)}.js`
