/**
 * A copy of a short string read out of a long one that keeps the long one alive no longer.
 * V8 makes `slice` and friends views into their parent: an href read out of a page's HTML
 * holds the whole page for as long as the href is kept (a folder's thousand pages, through
 * one href each, for a whole run).
 */
export function detached(text: string): string {
  return text.length === 0 ? '' : (JSON.parse(JSON.stringify(text)) as string)
}
