/**
 * The loader script of the `loader` strategy: a file the build emits beside its assets
 * (same origin, so `script-src 'self'` admits it; no inline script, no event handler).
 * It turns each marked `<link rel="preload" as="style">` into the stylesheet it stood
 * for, inserted right after the preload, so the cascade keeps the page's order. A
 * stylesheet created by script is neither render-blocking nor script-blocking (HTML
 * standard, "contributes a script-blocking style sheet": only elements the parser
 * created), so first paint and the page's module scripts never wait for it, where a
 * parser-inserted link anywhere in the document holds up every deferred and module script.
 */
import { createHash } from 'node:crypto'
import { LOADER_PRELOAD_ATTRIBUTE } from './outline.ts'

// Attributes carry over as written; the nonce is read from the property, because a
// browser hides the attribute's value once a CSP header applies. The id moves to the
// stylesheet, the element scripts look for. The mark goes, so a second copy of the
// script (a page processed twice) adds nothing.
export const LOADER_SCRIPT = `/* unplugin-critical-css: applies the full stylesheets without blocking render or scripts */
for (const preload of document.querySelectorAll('link[${LOADER_PRELOAD_ATTRIBUTE}]')) {
  const sheet = document.createElement('link')
  for (const { name, value } of preload.attributes) if (name !== 'rel' && name !== 'as' && name !== '${LOADER_PRELOAD_ATTRIBUTE}') sheet.setAttribute(name, value)
  sheet.rel = 'stylesheet'
  if (preload.nonce) sheet.nonce = preload.nonce
  preload.removeAttribute('${LOADER_PRELOAD_ATTRIBUTE}')
  preload.removeAttribute('id')
  preload.after(sheet)
}
`

/** The loader's file name, content-hashed: a new loader gets a new name, so it can be cached for ever. */
export const LOADER_FILE = `critical-css-loader.${createHash('sha256').update(LOADER_SCRIPT).digest('hex').slice(0, 8)}.js`
