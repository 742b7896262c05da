/** What the first-paint bench's browser timings and its Lighthouse part both print with. */
import type { PreparedPage } from './variants.ts'

export const median = (values: number[]): number | null => {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return null
  const middle = sorted.length / 2
  return sorted.length % 2 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const ms = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toFixed(0))

export const label = (page: PreparedPage): string => `${page.site.name} ${page.page}`

/** A markdown table, columns padded: readable in a terminal, pasted as is into bench/README.md. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)))
  const line = (cells: string[]): string => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n')
}
