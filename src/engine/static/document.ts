/**
 * A page as the static engine reads it: parsed as a browser parses it (parse5, the HTML
 * standard's tree construction, scripting on: a `<noscript>` is text, a `<template>`'s
 * content is not in the tree), then listed as the Chromium engine lists a loaded page:
 * the stylesheets it applies in cascade order, its `style` attributes, its base URL, and
 * its elements indexed by what a selector's subject must have (`t:div`, `c:card`, `i:main`).
 * No script runs: what a script would add is not there.
 */
import { parse, type DefaultTreeAdapterTypes } from 'parse5'
import type { HtmlState } from '../../contract/api-contract.ts'
import { CRITICAL_STYLE_ATTRIBUTE } from '../../html/outline.ts'
import type { ListedSheet } from '../extract.ts'

export type Element = DefaultTreeAdapterTypes.Element
export type Node = DefaultTreeAdapterTypes.Node
type ParentNode = DefaultTreeAdapterTypes.ParentNode

export interface StaticDocument {
  /** The document's root element, and its mode (quirks: classes and ids match without case). */
  readonly root: DefaultTreeAdapterTypes.Document
  readonly quirks: boolean
  /** Every element in tree order. */
  readonly elements: readonly Element[]
  /** Elements by `t:tag`, `c:class` and `i:id`, as selectors.ts writes a subject's tokens. */
  readonly tokens: Map<string, Element[]>
  /** What relative URLs resolve against: the document's URL, or its `<base href>`. */
  readonly base: string
  /** The stylesheets the document applies, in cascade order; a link's href is absolute. */
  readonly sheets: readonly ListedSheet[]
  /** The `style` attributes, and SVG presentation attributes that use `var()`, joined: they use custom properties, fonts and animations too. */
  readonly inlineStyles: string
  /** Whether the body shows nothing without its scripts (an empty `#app` and a script that fills it). */
  readonly scriptBuilt: boolean
}

/** As the Chromium engine's page reading caps them (extract.ts `settle`). */
const MAX_INLINE_STYLES = 200_000
const HTML_NS = 'http://www.w3.org/1999/xhtml'
const SVG_NS = 'http://www.w3.org/2000/svg'
const CSS_TYPE = /^\s*(text\/css)?\s*$/i
const WHITESPACE = /[\t\n\f\r ]+/
const NOT_BLANK = /[^\t\n\f\r ]/
/** Elements whose content is not shown as text of the page. */
const UNSHOWN = new Set(['script', 'style', 'template', 'noscript', 'head', 'title'])
/** Elements that show something of their own, with no text in them. */
const REPLACED = new Set(['img', 'svg', 'video', 'canvas', 'iframe', 'picture', 'object', 'embed', 'input', 'textarea', 'select', 'button', 'audio', 'math', 'hr', 'meter', 'progress'])
/** Script types a browser does not run: data blocks. */
const DATA_SCRIPT = /json|template|text\/(?!javascript|ecmascript)|importmap|speculationrules/i

export function attribute(element: Element, name: string): string | undefined {
  for (const attr of element.attrs) if (attr.name === name) return attr.value
  return undefined
}

/** The page as a browser with scripting parses it, read for the engine. `url`: where it was fetched from, after redirects. */
export function readDocument(html: string, url: string): StaticDocument {
  const root = parse(html)
  const elements: Element[] = []
  const tokens = new Map<string, Element[]>()
  const note = (token: string, element: Element): void => {
    const list = tokens.get(token)
    if (list === undefined) tokens.set(token, [element])
    else if (list[list.length - 1] !== element) list.push(element)
  }
  let base: string | null = null
  const sheets: ListedSheet[] = []
  const styles: string[] = []
  let stylesChars = 0
  let body: Element | null = null
  let scripts = 0
  const visit = (parent: ParentNode, inSvg: boolean): void => {
    for (const child of parent.childNodes) {
      if (!('tagName' in child)) continue
      const element = child as Element
      elements.push(element)
      const tag = element.tagName.toLowerCase()
      note(`t:${tag}`, element)
      const svg = inSvg || element.namespaceURI === SVG_NS
      for (const attr of element.attrs) {
        if (attr.name === 'id' && attr.value !== '') note(`i:${attr.value}`, element)
        else if (attr.name === 'class') {
          for (const name of attr.value.split(WHITESPACE)) if (name !== '') note(`c:${name}`, element)
        } else if (stylesChars < MAX_INLINE_STYLES && (attr.name === 'style' || (svg && attr.value.includes('var(')))) {
          styles.push(attr.value)
          stylesChars += attr.value.length + 1
        }
      }
      if (element.namespaceURI === HTML_NS) {
        if (tag === 'base' && base === null) {
          const href = attribute(element, 'href')
          if (href !== undefined && URL.canParse(href.trim(), url)) base = new URL(href.trim(), url).href
        } else if (tag === 'body' && body === null) body = element
        else if (tag === 'script' && runs(element)) scripts += 1
        else if (tag === 'link') {
          const sheet = linkedSheet(element, base ?? url)
          if (sheet) sheets.push(sheet)
        }
      }
      if (tag === 'style' && (element.namespaceURI === HTML_NS || element.namespaceURI === SVG_NS)) {
        const sheet = styleSheet(element)
        if (sheet) sheets.push(sheet)
      }
      visit(element, svg)
    }
  }
  visit(root, false)
  return {
    root,
    quirks: root.mode === 'quirks',
    elements,
    tokens,
    base: base ?? url,
    sheets,
    inlineStyles: styles.join(';').slice(0, MAX_INLINE_STYLES),
    scriptBuilt: scripts > 0 && (body === null || !shows(body)),
  }
}

/**
 * `read`'s answer with `<html>` put in `state`, as a head script would before first paint (an
 * attribute set, or a class added), and the document as it was again after.
 */
export function inRootState<T>(document: StaticDocument, state: HtmlState, read: () => T): T {
  const root = document.elements[0]
  if (root === undefined || root.tagName !== 'html') return read()
  const name = state.kind === 'class' ? 'class' : state.name
  const before = attribute(root, name)
  const attrs = root.attrs
  root.attrs = [...attrs.filter((attr) => attr.name !== name), { name, value: state.kind === 'class' ? `${before ?? ''} ${state.name}`.trim() : (state.value ?? '') }]
  const token = state.kind === 'class' ? `c:${state.name}` : null
  const had = token === null ? null : (document.tokens.get(token) ?? null)
  if (token !== null && !had?.includes(root)) document.tokens.set(token, [root, ...(had ?? [])])
  try {
    return read()
  } finally {
    root.attrs = attrs
    if (token !== null) {
      if (had === null) document.tokens.delete(token)
      else document.tokens.set(token, had)
    }
  }
}

/** A `<link rel=stylesheet>` the document applies: not an alternate, not disabled, of CSS. */
function linkedSheet(element: Element, base: string): ListedSheet | null {
  const rel = (attribute(element, 'rel') ?? '').toLowerCase().split(WHITESPACE)
  if (!rel.includes('stylesheet') || rel.includes('alternate')) return null
  if (attribute(element, 'disabled') !== undefined || !CSS_TYPE.test(attribute(element, 'type') ?? '')) return null
  const href = attribute(element, 'href')?.trim()
  if (!href || !URL.canParse(href, base)) return null
  const resolved = new URL(href, base)
  if (resolved.protocol !== 'http:' && resolved.protocol !== 'https:') return null
  return { href: resolved.href, media: (attribute(element, 'media') ?? '').trim(), text: null }
}

/** A `<style>` the document applies; not a critical style an earlier run inlined (a copy of the page's own rules). */
function styleSheet(element: Element): ListedSheet | null {
  if (!CSS_TYPE.test(attribute(element, 'type') ?? '') || attribute(element, CRITICAL_STYLE_ATTRIBUTE) !== undefined) return null
  const text = element.childNodes.map((node) => ('value' in node && node.nodeName === '#text' ? node.value : '')).join('')
  return { href: null, media: (attribute(element, 'media') ?? '').trim(), text }
}

function runs(script: Element): boolean {
  return !DATA_SCRIPT.test(attribute(script, 'type') ?? '')
}

/** Whether anything below shows without scripts: text outside scripts and styles, or an element that shows content of its own. */
function shows(parent: ParentNode): boolean {
  for (const child of parent.childNodes) {
    if (child.nodeName === '#text') {
      if (NOT_BLANK.test((child as DefaultTreeAdapterTypes.TextNode).value)) return true
      continue
    }
    if (!('tagName' in child)) continue
    const tag = child.tagName.toLowerCase()
    if (UNSHOWN.has(tag)) continue
    if (REPLACED.has(tag) || shows(child)) return true
  }
  return false
}
