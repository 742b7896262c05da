/**
 * The code that runs inside the page. Each function is sent as its source text
 * (`Function.prototype.toString`), so it must not use anything from its module scope.
 */

/** A stylesheet the document applies, in document (cascade) order. */
export interface ListedSheet {
  /** Null for a `<style>`. */
  href: string | null
  /** The owner element's media list, '' for all. */
  media: string
  /** A `<style>`'s text as written; null for a `<link>` (its text comes from the network response). */
  text: string | null
}

export interface ListedSheets {
  /** What an inline style's relative URLs resolve against (honours `<base href>`). */
  base: string
  sheets: ListedSheet[]
}

/** In the page: the document's enabled stylesheets. */
export function listSheets(): ListedSheets {
  const sheets: ListedSheet[] = []
  for (const sheet of Array.from(document.styleSheets)) {
    if (sheet.disabled) continue
    const owner = sheet.ownerNode
    sheets.push({ href: sheet.href, media: sheet.media.mediaText, text: sheet.href === null ? (owner?.textContent ?? '') : null })
  }
  return { base: document.baseURI, sheets }
}

/** In the page: a same-origin sheet's rules as the CSSOM serialises them, when its response body was not seen. */
export function cssomText(href: string): string | null {
  for (const sheet of Array.from(document.styleSheets)) {
    if (sheet.href !== href) continue
    try {
      return Array.from(sheet.cssRules, (rule) => rule.cssText).join('\n')
    } catch {
      return null
    }
  }
  return null
}

export interface ProbeInput {
  selectors: string[]
  media: string[]
}

export interface ProbeOutput {
  /** One character per selector: '1' when it matches an element above the fold. */
  selectors: string
  /** One character per media query: '1' when it matches this viewport. */
  media: string
  inlineStyles: string
}

/**
 * In the page, scrolled to the top as at first paint: which selectors match an element
 * whose box starts above the fold. Only the top edge counts: an element above the
 * viewport, beside it (off-canvas menus) or fixed to it is positioned by its rules, and
 * without them would show up in the first paint. An element without a box (display: none)
 * counts where its nearest rendered ancestor is: the rule that hides a collapsed menu in
 * the header is what keeps it hidden.
 */
export function probe(input: ProbeInput): ProbeOutput {
  const MAX_INLINE_STYLES = 200_000
  window.scrollTo(0, 0)
  const fold = window.innerHeight
  const known = new Map<Element, boolean>()
  const aboveFold = (element: Element): boolean => {
    const cached = known.get(element)
    if (cached !== undefined) return cached
    let box: Element | null = element
    while (box !== null && box.getClientRects().length === 0) box = box.parentElement
    const result = box === null || box.getBoundingClientRect().top < fold
    known.set(element, result)
    return result
  }
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
  const inlineStyles = Array.from(document.querySelectorAll('[style]'), (element) => element.getAttribute('style') ?? '')
    .join(';')
    .slice(0, MAX_INLINE_STYLES)
  return { selectors, media, inlineStyles }
}

/** In the page: animations and transitions stopped, so boxes are where they rest and every run measures the same. */
export function freezeMotion(): void {
  const style = document.createElement('style')
  style.textContent = '*,*::before,*::after{animation:none!important;transition:none!important}'
  document.documentElement.append(style)
}

/** In the page: waits for web fonts (they change line heights, so the fold), at most `ms`. */
export function fontsSettled(ms: number): Promise<void> {
  return Promise.race([document.fonts.ready.then(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, ms))])
}
