/**
 * Which of the page's questions (selectors.ts: selectors reduced to the element they style)
 * match an element of a page read without a browser. css-select decides every match, over
 * parse5's tree through the adapter below; each selector is compiled once per parse of a
 * site's sheets, and tried only on the elements that have what its subject must have (its
 * tag, classes and id, as the Chromium engine narrows its questions to the tokens present).
 */
import { compile, type Options } from 'css-select'
import { isTraversal, parse, SelectorType, type Selector } from 'css-what'
import type { Questions } from '../css.ts'
import { attribute, elementsWithAttribute, isElement, nameOf, type Element, type Node, type StaticDocument } from './document.ts'

type Compiled = (element: Element) => boolean
type Adapter = NonNullable<Options<Node, Element>['adapter']>
/** A selector css-select cannot run: a browser may still, so it is taken as matching (as the Chromium engine takes one its browser cannot run). */
const UNRUNNABLE = 'unrunnable'

function parentOf(node: Node): Node | null {
  return 'parentNode' in node ? (node.parentNode as Node | null) : null
}

function childrenOf(node: Node | null): Node[] {
  return node !== null && 'childNodes' in node ? node.childNodes : []
}

function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as { value: string }).value
  return 'childNodes' in node ? node.childNodes.map(textOf).join('') : ''
}

/** parse5's tree as css-select walks it; a `<template>`'s content is not part of it, as in a browser. */
const adapter: Adapter = {
  isTag: isElement,
  getAttributeValue: (element, name) => attribute(element, name),
  hasAttrib: (element, name) => attribute(element, name) !== undefined,
  getChildren: childrenOf,
  getName: nameOf,
  getParent: parentOf,
  getSiblings: (node) => (parentOf(node) ? childrenOf(parentOf(node)) : [node]),
  prevElementSibling: (node) => {
    const siblings = childrenOf(parentOf(node))
    for (let index = siblings.indexOf(node) - 1; index >= 0; index--) {
      const sibling = siblings[index]!
      if (isElement(sibling)) return sibling
    }
    return null
  },
  getText: textOf,
  removeSubsets: (nodes) => {
    const kept = new Set(nodes)
    for (const node of nodes) {
      for (let parent = parentOf(node); parent; parent = parentOf(parent)) {
        if (kept.has(parent)) {
          kept.delete(node)
          break
        }
      }
    }
    return [...kept]
  },
}

/** A tag (lowercase), class or id, as the page indexes its elements by them. */
interface Token {
  kind: 't' | 'c' | 'i'
  name: string
}

/** A selector ready to try: what the page must have for it to match at all, and the test of one element. */
interface Prepared {
  /** Every tag, class and id the selector names outside a pseudo-class: a page without one of them has no match. */
  required: Token[]
  /** What its subject must have: the tokens selectors.ts wrote, and the attributes its subject compound names. */
  subject: Token[]
  attributes: string[]
  /** Per document mode, compiled the first time a page of that mode asks. */
  standard?: Compiled
  quirks?: Compiled
  tokens: Selector[][]
}

/** Selectors of one parse, prepared the first time a page asks about them. */
const preparedOf = new WeakMap<Questions, (Prepared | typeof UNRUNNABLE | undefined)[]>()

function prepared(questions: Questions, index: number): Prepared | typeof UNRUNNABLE {
  let list = preparedOf.get(questions)
  if (list === undefined) preparedOf.set(questions, (list = []))
  let found = list[index]
  if (found === undefined) {
    try {
      const tokens = parse(questions.selectors[index]!)
      const single = tokens.length === 1 ? tokens[0]! : null
      found = { tokens, required: single ? requiredTokens(single) : [], subject: (questions.subjects[index] ?? []).map(tokenOf), attributes: single ? subjectAttributes(single) : [] }
    } catch {
      found = UNRUNNABLE
    }
    list[index] = found
  }
  return found
}

/** `t:div`, `c:card`, `i:main` (selectors.ts) as the page's index is keyed. */
function tokenOf(token: string): Token {
  return { kind: token[0] as Token['kind'], name: token.slice(2) }
}

function requiredTokens(selector: Selector[]): Token[] {
  const tokens: Token[] = []
  for (const part of selector) {
    if (part.type === SelectorType.Tag && !part.name.includes('|')) tokens.push({ kind: 't', name: part.name.toLowerCase() })
    else if (part.type === SelectorType.Attribute && part.name === 'class' && part.action === 'element' && part.ignoreCase !== true) tokens.push({ kind: 'c', name: part.value })
    else if (part.type === SelectorType.Attribute && part.name === 'id' && part.action === 'equals' && part.ignoreCase !== true) tokens.push({ kind: 'i', name: part.value })
  }
  return tokens
}

/** The attributes the subject compound (after the last combinator) names outside a pseudo-class: an element without one of them is no match. */
function subjectAttributes(selector: Selector[]): string[] {
  const names: string[] = []
  for (const part of selector) {
    if (isTraversal(part)) names.length = 0
    else if (part.type === SelectorType.Attribute && part.namespace === null) names.push(part.name)
  }
  return names
}

function testOf(selector: Prepared, quirks: boolean): Compiled | typeof UNRUNNABLE {
  const known = quirks ? selector.quirks : selector.standard
  if (known) return known
  let test: Compiled
  try {
    test = compile<Node, Element>(selector.tokens, { adapter, quirksMode: quirks, cacheResults: false }) as Compiled
  } catch {
    return UNRUNNABLE
  }
  if (quirks) selector.quirks = test
  else selector.standard = test
  return test
}

/** Per selector of `questions`, whether some element of the page matches it. */
export function matchSelectors(questions: Questions, page: StaticDocument): boolean[] {
  const answers = new Array<boolean>(questions.selectors.length).fill(false)
  for (let index = 0; index < questions.selectors.length; index++) {
    const selector = prepared(questions, index)
    if (selector === UNRUNNABLE) {
      answers[index] = true
      continue
    }
    if (!selector.required.every((token) => has(page, token))) continue
    const candidates = candidatesOf(selector, page)
    if (candidates.length === 0) continue
    const test = testOf(selector, page.quirks)
    answers[index] = test === UNRUNNABLE || candidates.some(test)
  }
  return answers
}

function elementsWith(page: StaticDocument, { kind, name }: Token): readonly Element[] | undefined {
  return (kind === 't' ? page.byTag : kind === 'c' ? page.byClass : page.byId).get(name)
}

/** Whether some element has `token`; in quirks mode only tags are known for sure (classes and ids match without case). */
function has(page: StaticDocument, token: Token): boolean {
  return (page.quirks && token.kind !== 't') || elementsWith(page, token) !== undefined
}

/** The elements that have everything the selector's subject must have: the shortest list of one of its tokens or attributes (all elements when it names none). */
function candidatesOf(selector: Prepared, page: StaticDocument): readonly Element[] {
  let shortest: readonly Element[] | null = null
  for (const token of selector.subject) {
    // Quirks mode matches classes and ids without case: only the tag narrows there.
    if (page.quirks && token.kind !== 't') continue
    const elements = elementsWith(page, token) ?? []
    if (shortest === null || elements.length < shortest.length) shortest = elements
    if (elements.length === 0) return elements
  }
  // A subject with no tag, class or id: its attributes narrow it (each one asked costs a pass over the page, once).
  if (shortest === null) {
    for (const name of selector.attributes) {
      const elements = elementsWithAttribute(page, name)
      if (shortest === null || elements.length < shortest.length) shortest = elements
      if (elements.length === 0) return elements
    }
  }
  return shortest ?? page.elements
}
