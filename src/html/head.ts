/**
 * What the parser puts in the head: the stylesheets that take part in the cascade there,
 * critical-CSS blocks an earlier run left, which a new run replaces, the `<base>` the
 * page's links resolve against, and where the page says it is deployed.
 */
import { attribute, CRITICAL_STYLE_ATTRIBUTE, type HtmlOutline, type SourceTag } from './outline.ts'
import { asciiLowercase, asciiTrim } from './syntax.ts'

export class HeadContent {
  /** A critical-CSS `<style>` whose `</style>` is still to come. */
  private openCritical: SourceTag | null = null

  constructor(private readonly outline: HtmlOutline) {}

  /** The first end counts: later head content (after `</head>`) does not move it. */
  end(at: number): void {
    if (this.outline.headEnd === null) this.outline.headEnd = at
  }

  /** A start tag the parser puts in the head; `skippedTo`: where its raw text was skipped to, if it was. */
  add(tag: SourceTag, afterHead: boolean, skippedTo: number | null): void {
    const { outline } = this
    if (tag.name === 'link' && attribute(tag, CRITICAL_STYLE_ATTRIBUTE)) {
      outline.criticalPreloads.push(tag)
    } else if (tag.name === 'link') {
      outline.headLinks.push(tag)
      if (afterHead) outline.linksAfterHead.add(tag)
    } else if (tag.name === 'base') {
      // The first with an href is the document's base URL; a later one changes nothing.
      const href = attribute(tag, 'href')
      if (href !== undefined && outline.baseHref === null) outline.baseHref = href.value
    } else if (tag.name === 'meta') {
      if (outline.openGraphUrl === null && asciiLowercase(asciiTrim(attribute(tag, 'property')?.value ?? '')) === 'og:url') outline.openGraphUrl = attribute(tag, 'content')?.value ?? null
    } else if (tag.name === 'style') {
      if (!attribute(tag, CRITICAL_STYLE_ATTRIBUTE)) outline.headStyles.push(tag)
      // Written `<style data-critical-css/>`, its raw text was skipped to its end already.
      else if (skippedTo !== null) outline.criticalStyles.push({ tag, end: skippedTo })
      else this.openCritical = tag
    }
  }

  styleClosed(end: number): void {
    if (!this.openCritical) return
    this.outline.criticalStyles.push({ tag: this.openCritical, end })
    this.openCritical = null
  }
}
