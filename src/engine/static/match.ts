/**
 * Which of the page's questions (selectors.ts: selectors reduced to the element they style)
 * match an element of a page read without a browser. css-select decides every match, over
 * parse5's tree through the adapter below; each selector is compiled once per parse of a
 * site's sheets, and tried only on the elements that have what its subject must have (its
 * tag, classes and id, as the Chromium engine narrows its questions to the tokens present).
 */
import { compile, type Options } from 'css-select'
import { parse, SelectorType, type Selector } from 'css-what'
import type { Questions } from '../css.ts'
import { attribute, type Element, type Node, type StaticDocument } from './document.ts'

type Compiled = (element: Element) => boolean
type Adapter = NonNullable<Options<Node, Element>['adapter']>
/** A selector css-select cannot run: a browser may still, so it is taken as matching (as the Chromium engine takes one its browser cannot run). */
const UNRUNNABLE = 'unrunnable'

function isElement(node: Node): node is Element {
  return 'tagName' in node
}

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
  getName: (element) => element.tagName,
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

/** A selector ready to try: what the page must have for it to match at all, and the test of one element. */
interface Prepared {
  /** Every tag, class and id the selector names outside a pseudo-class (`t:a`, `c:nav`, `i:main`): a page without one of them has no match. */
  required: string[]
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
      found = { tokens, required: tokens.length === 1 ? requiredTokens(tokens[0]!) : [] }
    } catch {
      found = UNRUNNABLE
    }
    list[index] = found
  }
  return found
}

function requiredTokens(selector: Selector[]): string[] {
  const tokens: string[] = []
  for (const part of selector) {
    if (part.type === SelectorType.Tag && !part.name.includes('|')) tokens.push(`t:${part.name.toLowerCase()}`)
    else if (part.type === SelectorType.Attribute && part.name === 'class' && part.action === 'element' && part.ignoreCase !== true) tokens.push(`c:${part.value}`)
    else if (part.type === SelectorType.Attribute && part.name === 'id' && part.action === 'equals' && part.ignoreCase !== true) tokens.push(`i:${part.value}`)
  }
  return tokens
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
    const candidates = candidatesOf(questions.subjects[index] ?? [], page)
    if (candidates.length === 0) continue
    const test = testOf(selector, page.quirks)
    answers[index] = test === UNRUNNABLE || candidates.some(test)
  }
  return answers
}

/** Whether some element has `token`; in quirks mode only tags are known for sure (classes and ids match without case). */
function has(page: StaticDocument, token: string): boolean {
  return (page.quirks && !token.startsWith('t:')) || page.tokens.has(token)
}

/** The elements that have every token the selector's subject must have: the shortest list of one of them (all elements when it names none). */
function candidatesOf(subject: readonly string[], page: StaticDocument): readonly Element[] {
  let shortest: readonly Element[] | null = null
  for (const token of subject) {
    // Quirks mode matches classes and ids without case: only the tag narrows there.
    if (page.quirks && !token.startsWith('t:')) continue
    const elements = page.tokens.get(token) ?? []
    if (shortest === null || elements.length < shortest.length) shortest = elements
    if (elements.length === 0) break
  }
  return shortest ?? page.elements
}
