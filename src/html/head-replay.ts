/**
 * A route's head edits: made at build time from its sample page (head-plan.ts), made again at
 * request time on each page of the route (runtime/). Where a page's head links the same
 * stylesheets, written the same way, in the same order, the edits are the inliner's for that
 * page too: the inliner's choices depend on the head's stylesheet links alone (each one as
 * written, and their order) and on the route's inputs, and the critical style goes before a link. Nothing of the page is read but where
 * its links stand (plain-head.ts), and nothing is made but the output.
 */
import { readPlainHead } from './plain-head.ts'

/** A text an edit puts in, split where a response's nonce goes (` nonce="…"`): one part where none does. */
export type NonceText = string[]

export interface HeadPlan {
  /** The sample's head links that load styles, each as written: a page must have these, in this order, and no other. */
  links: string[]
  /** Which of `links` the critical style goes before; -1 with no style. */
  styleBefore: number
  /** The critical style, font preloads first; null where every deferred sheet went in whole. */
  style: NonceText | null
  /** What each of `links` becomes; null: it is left as it is. */
  rewrites: (NonceText | null)[]
  /** CSP hashes (`sha256-…`) of the styles put in, for a policy that lists the inline styles it allows. */
  hashes: string[]
}

/** A plan ready for requests: its texts joined once for responses without a nonce. */
export interface ReadyHeadPlan extends HeadPlan {
  withoutNonce: { style: string | null; rewrites: (string | null)[] }
}

export function readyHeadPlan(plan: HeadPlan): ReadyHeadPlan {
  return { ...plan, withoutNonce: { style: plan.style?.join('') ?? null, rewrites: plan.rewrites.map((text) => text?.join('') ?? null) } }
}

/** Where the nonce goes in an edit's text. */
export function nonceSlot(nonce: string): string {
  return ` nonce="${nonce}"`
}


/** The offsets of a page's links, written over by each page: requests are read one at a time, and nothing is made per request. */
const found: number[] = []

/** `html` with `plan`'s edits (`nonce` on what they add), or null: not a plain page whose head links are the plan's. */
export function replayHeadPlan(html: string, plan: ReadyHeadPlan, nonce?: string): string | null {
  const { links } = plan
  if (readPlainHead(html, found) !== links.length * 2) return null
  for (let k = 0; k < links.length; k++) {
    if (found[2 * k + 1]! - found[2 * k]! !== links[k]!.length || !html.startsWith(links[k]!, found[2 * k]!)) return null
  }
  let output = ''
  let from = 0
  for (let k = 0; k < links.length; k++) {
    const start = found[2 * k]!
    if (k === plan.styleBefore && plan.style !== null) {
      output += html.slice(from, start) + (nonce === undefined ? plan.withoutNonce.style! : plan.style.join(nonceSlot(nonce)))
      from = start
    }
    const rewrite = plan.rewrites[k]
    if (rewrite != null) {
      output += html.slice(from, start) + (nonce === undefined ? plan.withoutNonce.rewrites[k]! : rewrite.join(nonceSlot(nonce)))
      from = found[2 * k + 1]!
    }
  }
  return output + html.slice(from)
}
