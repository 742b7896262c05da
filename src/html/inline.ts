/**
 * Puts critical CSS into a page's `<head>` and makes its stylesheets load without blocking
 * render: the inliner (inline-core.ts) over the full scan of the page (scan.ts), which reads
 * any HTML as a browser does. Request time uses the same inliner over the reader of plain
 * pages (plain-head.ts), which a server's bundle carries without a tokenizer library.
 */
import { inlineWithOutline, type InlineOptions, type InlineResult } from './inline-core.ts'
import { scanHtml } from './scan.ts'

export { inlineWithOutline, isLoaderSrc, neutraliseCss, NONCE_PATTERN, type InlineEdit, type InlineOptions, type InlineResult, type OutlineReader } from './inline-core.ts'

/**
 * Inlines `css` into `html`. Pure: returns the new document and what changed. Running it
 * again on its output replaces the inlined block and leaves converted links alone. Empty
 * css changes nothing.
 */
export function inlineCriticalCss(html: string, css: string, options: InlineOptions = {}): InlineResult {
  return inlineWithOutline(html, css, options, scanHtml)
}
