/**
 * The code that runs inside the page. Each function is sent as its source text
 * (`Function.prototype.toString`), so it must not use anything from its module scope;
 * `settle` leaves its fold test on the page for `probe`, under a symbol.
 */
import type { HtmlState } from '../contract/api-contract.ts'

/** Where the page's init script leaves the function that stops the page's dedicated workers (page-pool.ts). */
export const STOP_WORKERS_KEY = 'critical-css.stopWorkers'

/** A stylesheet the document applies, in document (cascade) order. */
export interface ListedSheet {
  /** Null for a `<style>`. */
  href: string | null
  /** The owner element's media list, '' for all. */
  media: string
  /** A `<style>`'s text as written; null for a `<link>` (its text comes from the network response). */
  text: string | null
}

export interface SettledPage {
  /** What an inline style's relative URLs resolve against (honours `<base href>`). */
  base: string
  sheets: ListedSheet[]
  /** What elements above the fold have: `t:tag`, `i:id`, `c:class`. */
  present: string[]
  /** The page's `style` attributes, the SVG presentation attributes that use `var()` and the styles of shadow trees above the fold, joined: they may use custom properties, fonts and animations too. */
  inlineStyles: string
  /** In how many ms its `<meta http-equiv="refresh">` moves it to another URL; null without one. */
  refreshMs: number | null
  /** Whether the parser got to the end of the document (not held by a script still coming). */
  parsed: boolean
  /** A bound the page passed, and how far it got: it is not read further, and `sheets` and `present` are incomplete. */
  over: { what: 'css' | 'tokens'; count: number } | null
}

export interface SettleInput {
  fontsMs: number
  /** {@link STOP_WORKERS_KEY}: the page's dedicated workers are stopped as it is read. */
  stopWorkersKey: string
  ignoreAttribute: string
  /** Most characters of sheets brought back: `<style>` text, addresses and media, every sheet together. */
  maxCssChars: number
  /** Most distinct tags, ids and classes above the fold brought back, and most characters they may hold together. */
  maxTokens: number
  maxTokenChars: number
}

/**
 * In the page, once it has loaded: waits for web fonts (they change line heights, so the
 * fold) at most `fontsMs`, lists the enabled stylesheets (not a critical style an earlier
 * run inlined, marked with `ignoreAttribute`), stops animations and transitions
 * so boxes are where they rest and every run measures the same, then notes what the
 * elements above the fold are.
 *
 * An element is above the fold when its box starts above the viewport's bottom edge. Only
 * the top edge counts: an element above the viewport, beside it (off-canvas menus) or fixed
 * to it is positioned by its rules, and without them would show up in the first paint. An
 * element without a box (display: none) counts where its nearest rendered ancestor is: the
 * rule that hides a collapsed menu in the header is what keeps it hidden.
 */
export async function settle(input: SettleInput): Promise<SettledPage> {
  const MAX_INLINE_STYLES = 200_000
  // Only fonts still loading are waited for: `ready` can also wait on the document's load, which an image of a host that never answers holds.
  if (document.fonts.status === 'loading') await Promise.race([document.fonts.ready, new Promise<void>((resolve) => setTimeout(resolve, input.fontsMs))])
  // The page is read now: its workers' messages would only come after, and their work costs every other job its CPU.
  ;(window as unknown as Record<symbol, (() => void) | undefined>)[Symbol.for(input.stopWorkersKey)]?.()
  // A page past a bound is read no further: nothing past it crosses to the engine, only the count.
  const stopped = (what: 'css' | 'tokens', count: number): SettledPage => ({ base: '', sheets: [], present: [], inlineStyles: '', refreshMs: null, parsed: true, over: { what, count } })
  const sheets: ListedSheet[] = []
  let cssChars = 0
  for (const sheet of Array.from(document.styleSheets)) {
    if (sheet.disabled) continue
    // Critical CSS inlined by an earlier run is a copy of rules from the page's own sheets.
    if (sheet.ownerNode instanceof Element && sheet.ownerNode.hasAttribute(input.ignoreAttribute)) continue
    const text = sheet.href === null ? (sheet.ownerNode?.textContent ?? '') : null
    // Its address and media count too: a page can list a great many sheets with long ones.
    cssChars += (text?.length ?? 0) + (sheet.href?.length ?? 0) + sheet.media.mediaText.length
    if (cssChars > input.maxCssChars) return stopped('css', cssChars)
    sheets.push({ href: sheet.href, media: sheet.media.mediaText, text })
  }
  // Marked like an inlined critical style, so a second read of the page (after a resize) does not list it.
  if (!document.querySelector(`style[${input.ignoreAttribute}="freeze"]`)) {
    const freeze = document.createElement('style')
    freeze.setAttribute(input.ignoreAttribute, 'freeze')
    freeze.textContent = '*,*::before,*::after{animation:none!important;transition:none!important}'
    document.documentElement.append(freeze)
  }
  window.scrollTo(0, 0)
  const fold = window.innerHeight
  const known = new Map<Element, boolean>()
  // Elements the first-screen check found its rules are needed for, wherever they are (see first-screen.ts).
  const forced = new Set<Element>()
  const aboveFold = (element: Element): boolean => {
    if (forced.has(element)) return true
    const cached = known.get(element)
    if (cached !== undefined) return cached
    let box: Element | null = element
    while (box !== null && box.getClientRects().length === 0) box = box.parentElement
    const result = box === null || box.getBoundingClientRect().top < fold
    known.set(element, result)
    return result
  }
  const elements = Array.from(document.getElementsByTagName('*'))
  // Parents come before their children: an element without a box takes its parent's answer, and
  // the inside of a `display: none` element (a closed menu of a thousand links) asks nothing more.
  let hidden: Element | null = null
  let hiddenAnswer = true
  for (const element of elements) {
    if (hidden !== null && hidden.contains(element)) {
      known.set(element, hiddenAnswer)
      continue
    }
    hidden = null
    if (element.getClientRects().length > 0) {
      known.set(element, element.getBoundingClientRect().top < fold)
      continue
    }
    const parent = element.parentElement
    const answer = parent === null ? true : aboveFold(parent)
    known.set(element, answer)
    if (getComputedStyle(element).display === 'none') {
      hidden = element
      hiddenAnswer = answer
    }
  }
  ;(window as unknown as Record<symbol, unknown>)[Symbol.for('critical-css.aboveFold')] = aboveFold
  ;(window as unknown as Record<symbol, unknown>)[Symbol.for('critical-css.forced')] = forced
  const present = new Set<string>()
  let tokenChars = 0
  const note = (token: string): void => {
    if (present.has(token)) return
    present.add(token)
    tokenChars += token.length
  }
  for (const element of elements) {
    if (!aboveFold(element)) continue
    note(`t:${element.localName.toLowerCase()}`)
    if (element.id) note(`i:${element.id}`)
    for (const name of Array.from(element.classList)) note(`c:${name}`)
    if (present.size > input.maxTokens || tokenChars > input.maxTokenChars) return stopped('tokens', present.size)
  }
  const styled = Array.from(document.querySelectorAll('[style]'), (element) => element.getAttribute('style') ?? '')
  // SVG presentation attributes take CSS values, custom properties included (`fill="var(--icon)"`, as TypeDoc's icons).
  for (const element of Array.from(document.querySelectorAll('svg, svg *'))) {
    for (const attribute of Array.from(element.attributes)) if (attribute.name !== 'style' && attribute.value.includes('var(')) styled.push(attribute.value)
  }
  // A shadow tree's own styles (a declarative shadow root's <style>, adopted sheets, style attributes) read the
  // document's custom properties, fonts and animations: what a host above the fold shows needs them as its own rules do.
  const shadowStyles = (root: ShadowRoot): void => {
    for (const sheet of [...Array.from(root.styleSheets), ...root.adoptedStyleSheets]) {
      try {
        styled.push(Array.from(sheet.cssRules, (rule) => rule.cssText).join(''))
      } catch {
        // Another origin's sheet linked in the shadow tree: its rules are not readable.
      }
    }
    for (const inner of Array.from(root.querySelectorAll('*'))) {
      const style = inner.getAttribute('style')
      if (style) styled.push(style)
      if (inner.shadowRoot) shadowStyles(inner.shadowRoot)
    }
  }
  for (const element of elements) if (element.shadowRoot && aboveFold(element)) shadowStyles(element.shadowRoot)
  const inlineStyles = styled.join(';').slice(0, MAX_INLINE_STYLES)
  const refresh = /^\s*(\d+(?:\.\d*)?)\s*[;,]\s*(?:url\s*=\s*)?\S/i.exec(document.querySelector('meta[http-equiv="refresh" i]')?.getAttribute('content') ?? '')
  return { base: document.baseURI, sheets, present: [...present], inlineStyles, refreshMs: refresh ? Number(refresh[1]) * 1000 : null, parsed: document.readyState !== 'loading', over: null }
}

export interface ProbeInput {
  /** Only selectors whose subject an element above the fold could be (see SettledPage.present). */
  selectors: string[]
  media: string[]
}

export interface ProbeOutput {
  /** One character per selector: '1' when it matches an element above the fold. */
  selectors: string
  /** One character per media query: '1' when it matches this viewport. */
  media: string
}

/** In the page, after `settle`: which selectors match an element above the fold, which media queries match. */
export function probe(input: ProbeInput): ProbeOutput {
  const aboveFold = (window as unknown as Record<symbol, (element: Element) => boolean>)[Symbol.for('critical-css.aboveFold')]!
  let selectors = ''
  for (const selector of input.selectors) {
    let critical = false
    try {
      for (const element of Array.from(document.querySelectorAll(selector))) {
        if (aboveFold(element)) {
          critical = true
          break
        }
      }
    } catch {
      // A selector this browser cannot run may still style another browser's first paint.
      critical = true
    }
    selectors += critical ? '1' : '0'
  }
  let media = ''
  for (const query of input.media) media += window.matchMedia(query).matches ? '1' : '0'
  return { selectors, media }
}


/** The root's attribute a state changes, as it was: null when absent. What `restoreRootState` puts back. */
export interface RootStateBefore {
  attribute: string
  value: string | null
}

/**
 * In the page: puts `<html>` in `state`, as a head script would before first paint (an
 * attribute set, with its value or empty, or a class added), and says what the attribute it
 * changed (`class` for a class) was, so that it can be put back exactly.
 */
export function applyRootState(state: HtmlState): RootStateBefore {
  const root = document.documentElement
  const attribute = state.kind === 'class' ? 'class' : state.name
  const before = { attribute, value: root.getAttribute(attribute) }
  if (state.kind === 'class') root.classList.add(state.name)
  else root.setAttribute(state.name, state.value ?? '')
  return before
}

/** In the page: the root's attribute back as `applyRootState` found it (removed when it was absent). */
export function restoreRootState(before: RootStateBefore): void {
  const root = document.documentElement
  if (before.value === null) root.removeAttribute(before.attribute)
  else root.setAttribute(before.attribute, before.value)
}
