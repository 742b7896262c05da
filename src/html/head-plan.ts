/**
 * A route's head edits (head-replay.ts) made from its sample page, at build time: the full
 * inliner's edits of the page, each one at one of its stylesheet links, with the places its
 * nonce goes marked. Null where the page's edits are of another kind (an earlier run's
 * style to replace, a head with no stylesheet that blocks, the body's end) or it is not a
 * page the request-time reader follows: the build leaves such a route out and names it.
 */
import { inlineCriticalCss, type InlineOptions } from './inline.ts'
import { nonceSlot, readyHeadPlan, replayHeadPlan, type HeadPlan } from './head-replay.ts'
import { readPlainHead } from './plain-head.ts'

/** A nonce no page holds, to find where the inliner puts one. */
const MARK = 'N0nceOfTheCriticalCssHeadPlan0'

export function headPlanOf(html: string, css: string, options: Omit<InlineOptions, 'nonce'>): HeadPlan | null {
  const found: number[] = []
  const count = readPlainHead(html, found)
  if (count <= 0) return null
  const starts = found.slice(0, count).filter((_, index) => index % 2 === 0)
  const ends = found.slice(0, count).filter((_, index) => index % 2 === 1)
  const plain = inlineCriticalCss(html, css, options)
  const marked = inlineCriticalCss(html, css, { ...options, nonce: MARK })
  if (!plain.changed || plain.edits.length !== marked.edits.length) return null
  const plan: HeadPlan = {
    links: starts.map((start, k) => html.slice(start, ends[k])),
    styleBefore: -1,
    style: null,
    rewrites: starts.map(() => null),
    hashes: [...(plain.cspHash === null ? [] : [plain.cspHash]), ...plain.inlinedWhole.map((sheet) => sheet.cspHash)],
  }
  for (const [index, edit] of plain.edits.entries()) {
    const withNonce = marked.edits[index]!
    const text = withNonce.text.split(nonceSlot(MARK))
    if (withNonce.start !== edit.start || withNonce.end !== edit.end || text.join('') !== edit.text) return null
    const k = starts.indexOf(edit.start)
    if (k === -1 || plan.rewrites[k] !== null) return null
    if (edit.end === edit.start && plan.style === null) {
      plan.styleBefore = k
      plan.style = text
    } else if (edit.end === ends[k]) plan.rewrites[k] = text
    else return null
  }
  // Made again on the page itself, with and without a nonce, the plan gives the inliner's bytes, or it is none.
  const ready = readyHeadPlan(plan)
  return replayHeadPlan(html, ready) === plain.html && replayHeadPlan(html, ready, MARK) === marked.html ? plan : null
}

/** Whether `plan` made on `html` gives what the inliner gives it (`options` as the plan was made with): a route's other samples are held to it. */
export function replaysAsInliner(html: string, css: string, options: Omit<InlineOptions, 'nonce'>, plan: HeadPlan): boolean {
  const ready = readyHeadPlan(plan)
  return replayHeadPlan(html, ready) === inlineCriticalCss(html, css, options).html && replayHeadPlan(html, ready, MARK) === inlineCriticalCss(html, css, { ...options, nonce: MARK }).html
}
