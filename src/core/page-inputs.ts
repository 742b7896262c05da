/**
 * A page's inputs to the inliner, worked out from its render and the build's own files: the
 * same for an emitted page (run.ts) and for a server route's sample (server-routes.ts), whose
 * manifest carries them to request time.
 */
import type { JobNetwork } from '../contract/api-contract.ts'
import type { PageInlineInputs } from '../html/inline-inputs.ts'
import { stylesheetHrefs } from '../html/scan.ts'
import { criticalFonts } from './font-preloads.ts'
import { unreadSheet } from './network-notes.ts'
import { lazyLinks, wholeSheets, type BuildSheetTexts, type LazySheet } from './whole-sheets.ts'

export interface PageInputsContext {
  /** The build's stylesheets, for sheets worth inlining whole and those the page's code looks up; null where the strategy keeps every link. */
  sheets: { texts: BuildSheetTexts; lazy: LazySheet } | null
  /** Whether the strategy makes a link something else for a while (it must know which ones the code looks up). */
  hidesLinks: boolean
  preloadFonts: boolean
  /** The CSS as the page gets it: relative `url()`s where the page links relatively. */
  portable: (css: string) => string
}

export async function pageInlineInputs(html: string, pageUrl: string, css: string, network: JobNetwork | null, context: PageInputsContext): Promise<PageInlineInputs> {
  const { sheets, portable } = context
  // A stylesheet the render did not get is not in the CSS: first paint still needs its link.
  const unread = unreadSheet(network, pageUrl)
  const whole = sheets && css.trim() !== '' ? await wholeSheets(html, pageUrl, css, sheets.texts, sheets.lazy, unread) : null
  const lookedUp = sheets && context.hidesLinks ? await lazyLinks(html, pageUrl, sheets.texts, sheets.lazy) : null
  return {
    keepBlocking: (network?.unreadStylesheets.length ?? 0) === 0 ? [] : stylesheetHrefs(html).filter(unread),
    wholeSheets: whole === null ? null : Object.fromEntries([...whole].map(([href, text]) => [href, portable(text)])),
    lookedUp: lookedUp === null ? [] : [...lookedUp],
    fontPreloads: context.preloadFonts ? criticalFonts(portable(css)) : [],
  }
}
