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
  /** Elements by tag (lowercase), class and id: what selectors.ts writes a subject's tokens of (`t:div`, `c:card`, `i:main`). */
  readonly byTag: Map<string, Element[]>
  readonly byClass: Map<string, Element[]>
  readonly byId: Map<string, Element[]>
  /** Elements by attribute name (lowercase), listed the first time one is asked about (see {@link elementsWithAttribute}). */
  readonly byAttribute: Map<string, Element[]>
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
const HAS_WHITESPACE = /[\t\n\f\r ]/
/** `#`: parse5 names every node that is not an element with it (`#text`, `#comment`, `#document`, `#documentType`). */
const NOT_AN_ELEMENT = 35
const NOT_BLANK = /[^\t\n\f\r ]/
/** Elements whose content is not shown as text of the page. */
const UNSHOWN = new Set(['script', 'style', 'template', 'noscript', 'head', 'title'])
/** Elements that show something of their own, with no text in them. */
const REPLACED = new Set(['img', 'svg', 'video', 'canvas', 'iframe', 'picture', 'object', 'embed', 'input', 'textarea', 'select', 'button', 'audio', 'math', 'hr', 'meter', 'progress'])
/** Script types a browser does not run: data blocks. */
const DATA_SCRIPT = /json|template|text\/(?!javascript|ecmascript)|importmap|speculationrules/i

/** Whether a node of parse5's tree is an element: by its name, the cheapest test on a path every element takes. */
export function isElement(node: Node): node is Element {
  return node.nodeName.charCodeAt(0) !== NOT_AN_ELEMENT
}

export function attribute(element: Element, name: string): string | undefined {
  for (const attr of element.attrs) if (attr.name === name) return attr.value
  if (element.namespaceURI === HTML_NS) return undefined
  // parse5 keeps SVG's camelCase (viewBox), which css-select asks for in lowercase: any case
  // matches, a superset of a browser's (more rules kept, never one missed).
  const lower = name.toLowerCase()
  for (const attr of element.attrs) if (attr.name.toLowerCase() === lower) return attr.value
  return undefined
}

/** An element's name as css-select asks for it, lowercase: parse5 lowercases HTML names as it reads them, and keeps SVG's camelCase (linearGradient). */
export function nameOf(element: Element): string {
  return element.namespaceURI === HTML_NS ? element.tagName : element.tagName.toLowerCase()
}

/** The elements that have attribute `name` in any case: every element {@link attribute} finds it on, and perhaps a few more. */
export function elementsWithAttribute(document: StaticDocument, name: string): readonly Element[] {
  listAttributes(document)
  return document.byAttribute.get(name.toLowerCase()) ?? []
}

/** Documents whose attributes are listed: one pass over the page for every name, the first time a name is asked. */
const attributesListed = new WeakSet<StaticDocument>()

function listAttributes(document: StaticDocument): void {
  if (attributesListed.has(document)) return
  attributesListed.add(document)
  for (const element of document.elements) {
    const html = element.namespaceURI === HTML_NS
    for (const attr of element.attrs) add(document.byAttribute, html ? attr.name : attr.name.toLowerCase(), element)
  }
}

/** Puts `element` in `key`'s list once (a class may be written twice). */
function add(index: Map<string, Element[]>, key: string, element: Element): void {
  const list = index.get(key)
  if (list === undefined) index.set(key, [element])
  else if (list[list.length - 1] !== element) list.push(element)
}

/** The page as a browser with scripting parses it, read for the engine. `url`: where it was fetched from, after redirects. */
export function readDocument(html: string, url: string): StaticDocument {
  const root = parse(html)
  const elements: Element[] = []
  const byTag = new Map<string, Element[]>()
  const byClass = new Map<string, Element[]>()
  const byId = new Map<string, Element[]>()
  let base: string | null = null
  const sheets: ListedSheet[] = []
  const styles: string[] = []
  let stylesChars = 0
  let body: Element | null = null
  let scripts = 0
  // Every element of every page passes here: indexed loops, and no string built per element.
  const visit = (parent: ParentNode, inSvg: boolean): void => {
    const children = parent.childNodes
    for (let at = 0; at < children.length; at++) {
      const element = children[at]!
      if (!isElement(element)) continue
      elements.push(element)
      const html = element.namespaceURI === HTML_NS
      const tag = nameOf(element)
      add(byTag, tag, element)
      const svg = inSvg || element.namespaceURI === SVG_NS
      const attrs = element.attrs
      for (let index = 0; index < attrs.length; index++) {
        const { name, value } = attrs[index]!
        if (name === 'id') {
          if (value !== '') add(byId, value, element)
        } else if (name === 'class') {
          if (!HAS_WHITESPACE.test(value)) {
            if (value !== '') add(byClass, value, element)
          } else for (const word of value.split(WHITESPACE)) if (word !== '') add(byClass, word, element)
        } else if (stylesChars < MAX_INLINE_STYLES && (name === 'style' || (svg && value.includes('var(')))) {
          styles.push(value)
          stylesChars += value.length + 1
        }
      }
      if (html) {
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
    byTag,
    byClass,
    byId,
    byAttribute: new Map(),
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
  const added = state.kind === 'class' ? state.name : null
  const had = added === null ? null : (document.byClass.get(added) ?? null)
  if (added !== null && !had?.includes(root)) document.byClass.set(added, [root, ...(had ?? [])])
  // The root has the attribute now: listed with it while in the state (the lists made first, so none is made in the state).
  listAttributes(document)
  const key = name.toLowerCase()
  const listed = document.byAttribute.get(key)
  if (!listed?.includes(root)) document.byAttribute.set(key, [root, ...(listed ?? [])])
  try {
    return read()
  } finally {
    root.attrs = attrs
    if (added !== null) {
      if (had === null) document.byClass.delete(added)
      else document.byClass.set(added, had)
    }
    if (listed === undefined) document.byAttribute.delete(key)
    else document.byAttribute.set(key, listed)
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
    if (!isElement(child)) continue
    const tag = child.tagName.toLowerCase()
    if (UNSHOWN.has(tag)) continue
    if (REPLACED.has(tag) || shows(child)) return true
  }
  return false
}
