/** The element names whose tree-building rules the scan follows, grouped as the HTML standard groups them. */

/** Start tags the standard processes "in head" when they come after `</head>`. */
export const AFTER_HEAD_CONTENT: ReadonlySet<string> = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'noframes', 'script', 'style', 'template', 'title'])
/** ...and before it, where a `<noscript>` is head content too. */
export const HEAD_CONTENT: ReadonlySet<string> = new Set([...AFTER_HEAD_CONTENT, 'noscript'])
/** Elements whose raw text htmlparser2's tokenizer reads correctly (scripts are read by `scriptEnd`). */
export const RAW_TEXT: ReadonlySet<string> = new Set(['iframe', 'noembed', 'noframes', 'plaintext', 'style', 'textarea', 'title', 'xmp'])
const FOREIGN: ReadonlySet<string> = new Set(['svg', 'math'])
/** Elements of SVG and MathML whose content is HTML again (the standard's integration points). */
export const INTEGRATION_POINTS: Readonly<Record<'svg' | 'math', ReadonlySet<string>>> = {
  svg: new Set(['foreignobject', 'desc', 'title']),
  math: new Set(['mi', 'mo', 'mn', 'ms', 'mtext']),
}
/** HTML start tags that end SVG or MathML content where they appear. */
export const BREAKOUT: ReadonlySet<string> = new Set([
  'b', 'big', 'blockquote', 'body', 'br', 'center', 'code', 'dd', 'div', 'dl', 'dt', 'em', 'embed', 'font', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'head',
  'hr', 'i', 'img', 'li', 'listing', 'menu', 'meta', 'nobr', 'ol', 'p', 'pre', 'ruby', 's', 'small', 'span', 'strong', 'strike', 'sub', 'sup', 'table',
  'tt', 'u', 'ul', 'var',
])
/** Names that matter in the body. */
const BODY_NAMES: ReadonlySet<string> = new Set([...RAW_TEXT, ...FOREIGN, 'script', 'noscript', 'template', 'body', 'html', 'link', 'select', 'frameset'])
/**
 * Those of them that show nothing where they stand (the user agent's style sheet hides
 * them, and with scripting on a `<noscript>` holds only text). Every other element in the
 * body is taken to show something.
 */
const SHOWS_NOTHING: ReadonlySet<string> = new Set(['body', 'html', 'link', 'noembed', 'noframes', 'noscript', 'script', 'style', 'template', 'title'])
/** First letter and length of each of them: most body tags (div, p, a, li…) are ruled out without making a string. */
const BODY_NAME_SHAPES: ReadonlySet<number> = new Set([...BODY_NAMES].map((name) => name.charCodeAt(0) * 32 + name.length))

/** `<svg>` or `<math>`: the root of foreign content. */
export function isForeignRoot(name: string): name is 'svg' | 'math' {
  return FOREIGN.has(name)
}

/** A body element (lowercased name) that shows nothing where it stands. */
export function showsNothing(name: string): boolean {
  return SHOWS_NOTHING.has(name)
}

/** The lowercased tag name if it matters in the body, else ''. */
export function bodyTagName(html: string, start: number, end: number): string {
  const length = end - start
  if (length >= 32 || !BODY_NAME_SHAPES.has((html.charCodeAt(start) | 0x20) * 32 + length)) return ''
  const name = html.slice(start, end).toLowerCase()
  return BODY_NAMES.has(name) ? name : ''
}
