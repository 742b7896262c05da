/**
 * How much of a page the engine takes in: what one job may pull from the browser into this
 * process, and what the engine keeps between jobs. Each bound is checked while the bytes
 * arrive, before they are held; a page past one fails `render_failed`, naming it.
 */

const MiB = 1024 * 1024

/** CSS of one page, every stylesheet and `<style>` together, decoded (the biggest sites ship a few MiB). */
export const MAX_PAGE_CSS_BYTES = 8 * MiB
/** One HTML document of the page, decoded: whole specifications on one page stay below it. */
export const MAX_DOCUMENT_BYTES = 32 * MiB
/** Frames one page may attach in a job: each one costs the browser a document and this process its events. */
export const MAX_FRAMES = 100
/** Distinct tags, ids and classes above the fold one read may bring back, and their characters together. */
export const MAX_PRESENT_TOKENS = 100_000
export const MAX_PRESENT_CHARS = 4 * MiB
/** Elements the first-screen check compares, in document order: the first screen's are among the first. */
export const MAX_COMPARED_ELEMENTS = 50_000
/** CSS source the parse cache keeps for jobs to come, every entry together. */
export const PARSED_CSS_CACHE_BYTES = 32 * MiB

export function mebibytes(bytes: number): string {
  return `${Number.isInteger(bytes / MiB) ? bytes / MiB : (bytes / MiB).toFixed(1)} MiB`
}
