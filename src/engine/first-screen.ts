/**
 * The first screen with only the critical CSS against the first screen with every
 * stylesheet, in the page itself: the code below runs inside the page (sent as its source
 * text, so it uses nothing from this module's scope), after `settle` and `probe`.
 */

export interface CompareInput {
  /** The critical CSS the page would get inlined. */
  css: string
  /** Linked stylesheets that stay as they are (blocking) in the processed page: they stay on here too. */
  kept: string[]
  /** What marks the engine's own styles (`settle`'s animation freeze, an earlier run's critical CSS). */
  ignoreAttribute: string
  /** Most elements compared; past it the rest of the document is not looked at. */
  maxElements: number
  /** Most elements named per difference. */
  maxNamed: number
  /** Longest wait for the critical CSS's web fonts, which load anew from its own `@font-face`s (from the cache). */
  fontsMs: number
}

export interface CompareOutput {
  /** Share of the first screen's area that differs, 0–1 (cells of a grid over it that a differing element covers). */
  share: number
  /** Elements that differ, named as a selector would (`footer.site`), the largest first. */
  named: string[]
  /**
   * Elements whose own rules would bring the two closer: shown in the first screen only
   * without the full CSS (pushed out of it by their own rules), or wider than the viewport
   * only without it. They are now above the fold for `probe`; their tokens (`t:`, `i:`, `c:`)
   * are what `probe`'s questions are filtered by.
   */
  marked: string[]
}

/**
 * Measures the first screen twice: as it is, then with every author stylesheet off but those
 * kept, the critical CSS on in a `<style>` where the first of them was, and the page's own
 * `<style>`s as they are (the processed page keeps them). Boxes of every element, and the
 * painted properties of those in the first screen, are compared; everything is put back as
 * it was before returning.
 */
export async function compareFirstScreen(input: CompareInput): Promise<CompareOutput> {
  const PAINTED = ['color', 'background-color', 'background-image', 'font-family', 'font-size', 'font-weight', 'font-style', 'visibility', 'opacity', 'border-top-width', 'border-bottom-width', 'border-left-width', 'border-right-width', 'box-shadow', 'text-decoration-line', 'fill', 'stroke']
  const CELL = 10
  window.scrollTo(0, 0)
  const width = document.documentElement.clientWidth || window.innerWidth
  const height = window.innerHeight
  const elements = Array.from(document.body ? document.body.getElementsByTagName('*') : []).slice(0, input.maxElements)
  if (document.body) elements.unshift(document.body)

  interface Shot {
    /** x, y, width, height per element, rounded. */
    boxes: Float64Array
    painted: (string | null)[]
    scrollWidth: number
  }
  const inScreen = (boxes: Float64Array, index: number): boolean => {
    const x = boxes[index * 4]!
    const y = boxes[index * 4 + 1]!
    const w = boxes[index * 4 + 2]!
    const h = boxes[index * 4 + 3]!
    return w > 0 && h > 0 && x < width && y < height && x + w > 0 && y + h > 0
  }
  const shoot = (): Shot => {
    const boxes = new Float64Array(elements.length * 4)
    // The inside of a `display: none` element has no box either: its zeros stand, unasked.
    let hidden: Element | null = null
    elements.forEach((element, index) => {
      if (hidden !== null && hidden.contains(element)) return
      hidden = null
      const box = element.getBoundingClientRect()
      if (box.width === 0 && box.height === 0 && element.getClientRects().length === 0 && getComputedStyle(element).display === 'none') hidden = element
      boxes.set([Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)], index * 4)
    })
    const painted = elements.map((element, index) => {
      if (!inScreen(boxes, index)) return null
      const style = getComputedStyle(element)
      return PAINTED.map((name) => style.getPropertyValue(name)).join('|')
    })
    return { boxes, painted, scrollWidth: document.documentElement.scrollWidth }
  }

  const full = shoot()
  const stuck = new Set(Array.from(document.fonts).filter((face) => face.status === 'loading'))
  const turnedOff: CSSStyleSheet[] = []
  let firstOff: Element | null = null
  for (const sheet of Array.from(document.styleSheets)) {
    const owner = sheet.ownerNode
    if (sheet.disabled || !(owner instanceof Element)) continue
    const mark = owner.getAttribute(input.ignoreAttribute)
    if (mark === 'freeze') continue
    if (mark === null && (sheet.href === null || input.kept.includes(sheet.href))) continue
    if (firstOff === null && mark === null) firstOff = owner
    sheet.disabled = true
    turnedOff.push(sheet)
  }
  const critical = document.createElement('style')
  critical.textContent = input.css
  if (firstOff?.parentNode) firstOff.parentNode.insertBefore(critical, firstOff)
  else (document.head ?? document.documentElement).append(critical)
  let bare: Shot
  try {
    // Laid out once, the critical CSS's own font faces start loading: a glyph's width must not depend on how soon.
    // Only those are waited for; a font of the page's that never came does not come now either.
    void document.documentElement.offsetHeight
    const loading = Array.from(document.fonts).filter((face) => face.status === 'loading' && !stuck.has(face))
    if (loading.length > 0) await Promise.race([Promise.all(loading.map((face) => face.loaded.catch(() => face))), new Promise<void>((resolve) => setTimeout(resolve, input.fontsMs))])
    bare = shoot()
  } finally {
    critical.remove()
    for (const sheet of turnedOff) sheet.disabled = false
  }
  // Not laid out again here: whatever reads the page next (a resize, a probe) lays it out once, with its CSS.

  // Only what the first screen shows counts: a body that ends lower, a box that grows below the fold, look the same.
  const clipped = (boxes: Float64Array, index: number): string => {
    const x = boxes[index * 4]!
    const y = boxes[index * 4 + 1]!
    return [Math.max(0, x), Math.max(0, y), Math.min(width, x + boxes[index * 4 + 2]!), Math.min(height, y + boxes[index * 4 + 3]!)].join(',')
  }
  const same = (index: number): boolean => full.painted[index] === bare.painted[index] && clipped(full.boxes, index) === clipped(bare.boxes, index)
  const differing: number[] = []
  const marked: Element[] = []
  const aboveFold = (window as unknown as Record<symbol, ((element: Element) => boolean) | undefined>)[Symbol.for('critical-css.aboveFold')]
  const forced = (window as unknown as Record<symbol, Set<Element> | undefined>)[Symbol.for('critical-css.forced')]
  const widened = bare.scrollWidth > Math.max(width, full.scrollWidth)
  elements.forEach((element, index) => {
    const shownFull = full.painted[index] !== null
    const shownBare = bare.painted[index] !== null
    if (!shownFull && !shownBare) {
      const right = bare.boxes[index * 4]! + bare.boxes[index * 4 + 2]!
      if (widened && right > width && !(aboveFold?.(element) ?? false)) marked.push(element)
      return
    }
    if (same(index)) return
    differing.push(index)
    // Shown only without the full CSS: its own rules (a margin, a position) keep it out of the first screen.
    if (shownBare && !shownFull && !(aboveFold?.(element) ?? false)) marked.push(element)
    else if (widened && bare.boxes[index * 4]! + bare.boxes[index * 4 + 2]! > width && !(aboveFold?.(element) ?? false)) marked.push(element)
  })
  for (const element of marked) forced?.add(element)

  const columns = Math.ceil(width / CELL)
  const rows = Math.ceil(height / CELL)
  const cells = new Uint8Array(columns * rows)
  const cover = (boxes: Float64Array, index: number): number => {
    if (!inScreen(boxes, index)) return 0
    const x0 = Math.max(0, Math.floor(boxes[index * 4]! / CELL))
    const y0 = Math.max(0, Math.floor(boxes[index * 4 + 1]! / CELL))
    const x1 = Math.min(columns, Math.ceil((boxes[index * 4]! + boxes[index * 4 + 2]!) / CELL))
    const y1 = Math.min(rows, Math.ceil((boxes[index * 4 + 1]! + boxes[index * 4 + 3]!) / CELL))
    for (let y = y0; y < y1; y++) cells.fill(1, y * columns + x0, y * columns + x1)
    return (x1 - x0) * (y1 - y0)
  }
  // A box that changed marks where it was and where it is; an element inside a differing one marks nothing more.
  const areas = differing.map((index) => ({ index, area: Math.max(cover(full.boxes, index), cover(bare.boxes, index)) }))
  let covered = 0
  for (const cell of cells) covered += cell
  if (widened) covered = Math.max(covered, 1)

  const name = (element: Element): string => {
    let text = element.localName
    if (element.id) text += `#${element.id}`
    else for (const each of Array.from(element.classList).slice(0, 2)) text += `.${each}`
    return text
  }
  const inDiffering = new Set(differing.map((index) => elements[index]!))
  const named = areas
    // The outermost differing elements say where; their insides repeat it.
    .filter(({ index }) => !(elements[index]!.parentElement && inDiffering.has(elements[index]!.parentElement!)))
    .sort((a, b) => b.area - a.area)
    .map(({ index }) => name(elements[index]!))
  if (widened) named.unshift(`the document (${bare.scrollWidth} px wide, the viewport ${width} px)`)
  const tokens = new Set<string>()
  for (const element of marked) {
    tokens.add(`t:${element.localName.toLowerCase()}`)
    if (element.id) tokens.add(`i:${element.id}`)
    for (const each of Array.from(element.classList)) tokens.add(`c:${each}`)
  }
  return { share: covered / cells.length, named: [...new Set(named)].slice(0, input.maxNamed), marked: [...tokens] }
}
