/**
 * The name a mistyped one most likely meant, for "did you mean …?" after an unknown flag or
 * option. Case, `-` and `_` do not count (`--siteUrl` is `--site-url`, `site_url` is
 * `siteUrl`: people type one surface's spelling on the other), and two neighbours swapped
 * are one typo (`strcit`), as a hand makes them.
 */

function folded(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '')
}

/** Edits from `a` to `b`: insert, delete, replace, or swap two neighbours (optimal string alignment). */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The known name closest to `typed`, or null when none is close enough to be worth naming:
 * at most one edit per three letters typed (one for short names), so a different word gets
 * no suggestion rather than a wrong one. The first of equally close names wins.
 */
export function didYouMean(typed: string, known: readonly string[]): string | null {
  const wanted = folded(typed)
  const allowed = Math.max(1, Math.floor(wanted.length / 3))
  let best: { name: string; edits: number } | null = null
  for (const name of known) {
    const edits = distance(wanted, folded(name))
    if (edits <= allowed && (best === null || edits < best.edits)) best = { name, edits }
  }
  return best?.name ?? null
}
