/**
 * Answers about long texts (a page's HTML, a page's critical CSS) kept for the few texts
 * asked about last: a build asks several questions of one page in a row, then moves on, so
 * a few entries answer most repeats and nothing is held for long.
 */

/** Texts whose answers each memo keeps. Whoever walks pages a few at a time keeps below it (run.ts). */
export const RECENT_TEXTS = 32

/** `compute`, answered from memory for the `RECENT_TEXTS` texts asked about last. It must be a function of the text alone. */
export function forRecentTexts<V>(compute: (text: string) => V): (text: string) => V {
  const kept = new Map<string, V>()
  return (text) => {
    if (kept.has(text)) return kept.get(text)!
    const value = compute(text)
    kept.set(text, value)
    if (kept.size > RECENT_TEXTS) kept.delete(kept.keys().next().value!)
    return value
  }
}
