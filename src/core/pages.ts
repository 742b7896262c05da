/**
 * Which emitted HTML file is which page: the configured pages matched to the files the
 * build emitted (URL path → file, below the bundler's base), or every emitted HTML file
 * turned into its URL.
 */
import { posix } from 'node:path'
import { ConfigurationError } from './errors.ts'
import { ENV, relativePageError, type ResolvedPage } from './options.ts'

export interface Page {
  /** Absolute URL the service renders. */
  url: string
  /** Emitted HTML file, relative to the output directory, with `/` separators. */
  file: string
}

export interface PageContext {
  siteUrl: URL | null
  /** The bundler's base / publicPath (`/`, `/app/`, `./`, `https://cdn.example.com/`, `auto`). */
  base: string
}

const HTML_FILE = /\.html?$/i

export function isHtmlFile(file: string): boolean {
  return HTML_FILE.test(file)
}

/** A bundler plugin whose name says HTML (html-webpack-plugin, HtmlRspackPlugin, @rollup/plugin-html): what writes a bundle's pages. */
const HTML_PLUGIN = /html/i

/**
 * Whether a bundler's configuration says the build writes pages: an entry that is an HTML
 * file, or a plugin named for HTML. Only the early start hangs on it; the run still takes
 * whatever HTML the build emits.
 */
export function configEmitsHtml(config: { entries: readonly unknown[]; plugins: readonly string[] }): boolean {
  return config.entries.some((entry) => typeof entry === 'string' && isHtmlFile(entry)) || config.plugins.some((name) => HTML_PLUGIN.test(name))
}

/** The base as a path prefix, or null for a relative, absolute-URL or `auto` base (those say where assets go, not pages). */
export function basePath(base: string): string | null {
  if (!base.startsWith('/') || base.startsWith('//')) return null
  return base.endsWith('/') ? base : `${base}/`
}

/**
 * How `page` names `file`, both relative to the output directory: below the base as the
 * bundler writes its asset URLs (a path, or another origin like a CDN); relative to the
 * page for a relative or `auto` base.
 */
export function assetUrl(base: string, page: string, file: string): string {
  const prefix = basePath(base) ?? (/^(?:[a-z][a-z\d+.-]*:)?\/\//i.test(base) ? (base.endsWith('/') ? base : `${base}/`) : null)
  return prefix !== null ? `${prefix}${file}` : relativeAsset(page, file)
}

/** How `page` names `file` from where it stands (both relative to the output directory): what works at any base and from `file://`. */
export function relativeAsset(page: string, file: string): string {
  return posix.relative(posix.dirname(page), file)
}

/** Where pages live: below a path base, else below the site URL's own path (a site deployed at `https://host/app/`). */
export function pagesPrefix(base: string, siteUrl: URL | null): string {
  return basePath(base) ?? siteUrl?.pathname ?? '/'
}

function normaliseFile(file: string): string {
  return file.replaceAll('\\', '/').replace(/^(?:\.\/|\/)+/, '')
}

function describeFiles(files: readonly string[]): string {
  if (files.length === 0) return 'no HTML files were emitted'
  const shown = files.slice(0, 8).join(', ')
  return `emitted HTML files: ${shown}${files.length > 8 ? `, … (${files.length} in all)` : ''}`
}

function resolveUrl(url: string, siteUrl: URL | null): URL {
  let absolute: URL | null = null
  try {
    absolute = new URL(url)
  } catch {
    if (siteUrl === null) throw relativePageError(url)
    absolute = new URL(url, siteUrl)
  }
  if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:') {
    throw new ConfigurationError(`unplugin-critical-css: page "${url}" is not an http(s) URL (option \`pages\`).`)
  }
  return absolute
}

/** A path segment decoded, unless decoding would turn it into more than one segment (`%2F`). */
function decodeSegment(segment: string): string {
  try {
    const decoded = decodeURIComponent(segment)
    return decoded.includes('/') ? segment : decoded
  } catch {
    return segment
  }
}

/** The part of a URL path below `prefix`, segments decoded; null when the path is not below it. */
export function pathBelow(pathname: string, prefix: string): string | null {
  if (!pathname.startsWith(prefix) && `${pathname}/` !== prefix) return null
  return pathname.slice(prefix.length).split('/').map(decodeSegment).join('/')
}

/** The HTML files a path below the prefix (see `pathBelow`) can be served from, most likely first. */
export function pageFiles(rest: string): string[] {
  if (rest === '' || rest.endsWith('/')) return [`${rest}index.html`, `${rest}index.htm`]
  if (isHtmlFile(rest)) return [rest]
  return [`${rest}.html`, `${rest}/index.html`, `${rest}.htm`, `${rest}/index.htm`]
}

function candidateFiles(pathname: string, prefix: string): string[] | null {
  const rest = pathBelow(pathname, prefix)
  return rest === null ? null : pageFiles(rest)
}

/** The page URL a file is served at, below the prefix. */
function urlOfFile(file: string, prefix: string, siteUrl: URL): string {
  const path = file.replace(/(^|\/)index\.html?$/i, '$1')
  return new URL(prefix + path.split('/').map(encodeURIComponent).join('/'), siteUrl).href
}

/**
 * Pairs each page with its emitted HTML file. Throws a ConfigurationError for a page whose
 * file was not emitted (naming both), a relative page without a site URL, or two pages
 * sharing one file.
 */
export function planPages(configured: readonly ResolvedPage[] | null, emitted: readonly string[], context: PageContext): Page[] {
  const files = emitted.map(normaliseFile)
  const known = new Set(files)
  const prefix = pagesPrefix(context.base, context.siteUrl)

  let pages: Page[]
  if (configured === null) {
    const htmlFiles = files.filter(isHtmlFile).sort()
    if (htmlFiles.length === 0) return []
    const siteUrl = context.siteUrl
    if (siteUrl === null) {
      throw new ConfigurationError(
        `unplugin-critical-css: every emitted HTML file is a page, but no site URL is set to tell where they are served. Set ${ENV.siteUrl} (or the \`siteUrl\` option), or list the pages with the \`pages\` option.`,
      )
    }
    pages = htmlFiles.map((file) => ({ url: urlOfFile(file, prefix, siteUrl), file }))
  } else {
    pages = configured.map((page) => {
      const url = resolveUrl(page.url, context.siteUrl)
      if (page.html !== null) {
        const file = normaliseFile(page.html)
        if (!known.has(file)) {
          throw new ConfigurationError(
            `unplugin-critical-css: page ${url.href} names the HTML file "${page.html}", which the build did not emit (${describeFiles(files.filter(isHtmlFile))}).`,
          )
        }
        return { url: url.href, file }
      }
      const candidates = candidateFiles(url.pathname, prefix)
      if (candidates === null) {
        throw new ConfigurationError(
          `unplugin-critical-css: page ${url.href} is outside the build's base path "${prefix}", so no emitted file can be it. Give its file as \`{ url, html }\` in \`pages\`.`,
        )
      }
      const file = candidates.find((candidate) => known.has(candidate))
      if (file === undefined) {
        throw new ConfigurationError(
          `unplugin-critical-css: page ${url.href} would be ${candidates.map((c) => `"${c}"`).join(' or ')}, which the build did not emit (${describeFiles(files.filter(isHtmlFile))}). Give its file as \`{ url, html }\` in \`pages\`.`,
        )
      }
      return { url: url.href, file }
    })
  }

  const byFile = new Map<string, string>()
  for (const page of pages) {
    const other = byFile.get(page.file)
    if (other !== undefined) {
      throw new ConfigurationError(
        `unplugin-critical-css: pages ${other} and ${page.url} are both "${page.file}"; one HTML file can hold one page's critical CSS (option \`pages\`).`,
      )
    }
    byFile.set(page.file, page.url)
  }
  return pages
}
