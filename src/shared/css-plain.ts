/**
 * css-tree's plain nodes (children in arrays), as the engine and the plugin both read CSS:
 * generating them, walking them, and resolving their `url()`s from the page.
 */
import { generate, type CssNodePlain } from 'css-tree'

/** At-rules whose block holds rules, so their prelude is part of a rule's context. */
export const GROUP_RULES = new Set(['media', 'supports', 'layer', 'container', 'scope', 'starting-style', 'document', '-moz-document'])

const IMAGE_SET = /^(-webkit-)?image-set$/i
const RAW_URL = /url\(\s*(['"]?)([^'")\s]+)\1\s*\)/gi

/**
 * A same-origin URL becomes root-relative (`/img/bg.jpg`: it still works when the site is
 * deployed on another host), another origin's absolute; `data:` and `#fragment` stay.
 */
export function rebaseUrl(value: string, base: string, pageOrigin: string): string {
  const trimmed = value.trim()
  if (trimmed === '' || trimmed.startsWith('#') || /^data:/i.test(trimmed)) return value
  let resolved: URL
  try {
    resolved = new URL(trimmed, base)
  } catch {
    return value
  }
  if (resolved.origin === pageOrigin) return resolved.pathname + resolved.search + resolved.hash
  return resolved.href
}

/** Every `url()` below `node` rebased as `rebaseUrl` says (image-set strings and custom properties included). */
export function rebaseUrls(node: CssNodePlain, base: string, origin: string): void {
  switch (node.type) {
    case 'Url':
      node.value = rebaseUrl(node.value, base, origin)
      return
    case 'Function':
      if (IMAGE_SET.test(node.name)) {
        for (const child of node.children) if (child.type === 'String') child.value = rebaseUrl(child.value, base, origin)
      }
      break
    case 'Declaration':
      if (node.value.type === 'Raw') {
        // A custom property's value starts after the colon's whitespace, which means nothing.
        node.value.value = node.value.value.trim().replace(RAW_URL, (_whole, quote: string, href: string) => `url(${quote}${rebaseUrl(href, base, origin)}${quote})`)
        return
      }
      break
  }
  for (const child of childNodes(node)) rebaseUrls(child, base, origin)
}

/** The nodes directly below `node`, whatever field holds them. */
export function childNodes(node: CssNodePlain): CssNodePlain[] {
  const out: CssNodePlain[] = []
  const record = node as unknown as Record<string, unknown>
  for (const key of ['prelude', 'block', 'value', 'children', 'condition'] as const) {
    const field = record[key]
    if (Array.isArray(field)) out.push(...(field as CssNodePlain[]))
    else if (field && typeof field === 'object' && 'type' in field) out.push(field as CssNodePlain)
  }
  return out
}

/** css-tree's generator (compact output), for plain nodes: children in arrays. */
export function generatePlain(node: CssNodePlain): string {
  return generate(node as unknown as Parameters<typeof generate>[0])
}
