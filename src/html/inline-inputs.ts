/**
 * What a page's critical CSS goes in with besides the strategy, as plain data: the build
 * works it out per page from the render and its own files, and a server manifest carries it
 * to request time, where the same inliner gets the same options from it.
 */
import type { InlineOptions } from './inline.ts'

export interface PageInlineInputs {
  /** `href`s (as written) of stylesheets the render could not read: they stay blocking. */
  keepBlocking: string[]
  /** Stylesheets to inline whole in their link's place, `href` (as written) → text; null for none. */
  wholeSheets: Record<string, string> | null
  /** `href`s (as written) the page's code looks up once it runs. */
  lookedUp: string[]
  /** Font files to preload before the critical CSS, as the CSS names them. */
  fontPreloads: string[]
}

export type InputOptions = Required<Pick<InlineOptions, 'keepBlocking' | 'wholeSheet' | 'lookedUp' | 'fontPreloads'>>

/** The inliner's options for `inputs`; made once per page or route, asked once per link. */
export function inlineOptionsOf(inputs: PageInlineInputs): InputOptions {
  const keepBlocking = new Set(inputs.keepBlocking)
  const lookedUp = new Set(inputs.lookedUp)
  const whole = inputs.wholeSheets === null ? null : new Map(Object.entries(inputs.wholeSheets))
  return {
    keepBlocking: (href) => keepBlocking.has(href),
    wholeSheet: (href) => whole?.get(href) ?? null,
    lookedUp: (href) => lookedUp.has(href),
    fontPreloads: inputs.fontPreloads,
  }
}
