/**
 * Third-party files from the npm registry instead of their CDNs, which this machine cannot
 * reach: a pinned package version is `npm pack`ed into the bench cache once, and a corpus
 * page's CDN links are pointed at copies of its files inside the site.
 */
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { CACHE_DIR } from './corpus.ts'

const PACKAGES_DIR = join(CACHE_DIR, 'packages')

/** The package's unpacked folder (its `package.json` at the top), packed from the registry unless already in the cache. */
export function vendorPackage(name: string, version: string): string {
  const dir = join(PACKAGES_DIR, name, version)
  if (existsSync(join(dir, 'package.json'))) return dir
  const staging = `${dir}.unpacking`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const out = execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', staging, '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const tarball = join(staging, out.trim().split('\n').at(-1)!)
  execFileSync('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1'])
  rmSync(tarball)
  // Renamed whole, so an interrupted unpack is never taken for a cached one.
  renameSync(staging, dir)
  return dir
}

// ─── startbootstrap-creative ──────────────────────────────────────────────────────────

interface VendoredFile {
  /** In the unpacked package. */
  from: string
  /** In the site copy, under `vendor/<package>/`. */
  to: string
}

interface Replacement {
  /** The URL as the page has it. */
  cdn: string
  name: string
  version: string
  /** The file the page links, first; then what it needs beside it. */
  files: VendoredFile[]
}

/** Every CDN file of the creative page that an npm package holds, by the version its URL names. */
const CREATIVE_PACKAGES: readonly Replacement[] = [
  {
    cdn: 'https://cdn.jsdelivr.net/npm/bootstrap-icons@1.5.0/font/bootstrap-icons.css',
    name: 'bootstrap-icons',
    version: '1.5.0',
    // The sheet finds its fonts at ./fonts/.
    files: [
      { from: 'font/bootstrap-icons.css', to: 'font/bootstrap-icons.css' },
      { from: 'font/fonts', to: 'font/fonts' },
    ],
  },
  {
    // The registry has no simplelightbox 2.1.0 (cdnjs took it from GitHub); 2.1.3 is its nearest release, a patch later.
    cdn: 'https://cdnjs.cloudflare.com/ajax/libs/SimpleLightbox/2.1.0/simpleLightbox.min.css',
    name: 'simplelightbox',
    version: '2.1.3',
    files: [{ from: 'dist/simple-lightbox.min.css', to: 'simple-lightbox.min.css' }],
  },
  {
    cdn: 'https://cdn.jsdelivr.net/npm/bootstrap@5.2.3/dist/js/bootstrap.bundle.min.js',
    name: 'bootstrap',
    version: '5.2.3',
    // Its source map too: Lighthouse asks for it, and a 404 would stand among the site's own misses.
    files: [
      { from: 'dist/js/bootstrap.bundle.min.js', to: 'bootstrap.bundle.min.js' },
      { from: 'dist/js/bootstrap.bundle.min.js.map', to: 'bootstrap.bundle.min.js.map' },
    ],
  },
  {
    cdn: 'https://cdnjs.cloudflare.com/ajax/libs/SimpleLightbox/2.1.0/simpleLightbox.min.js',
    name: 'simplelightbox',
    version: '2.1.3',
    files: [{ from: 'dist/simple-lightbox.min.js', to: 'simple-lightbox.min.js' }],
  },
]

/** The @fontsource package of each Google Fonts family the page asks for, pinned (`npm view` on 2026-11-26). */
const FONTSOURCE_VERSIONS: Readonly<Record<string, string>> = {
  'Merriweather Sans': '5.3.0',
  Merriweather: '5.3.0',
}

const CREATIVE_GOOGLE_FONTS = [
  'https://fonts.googleapis.com/css?family=Merriweather+Sans:400,700',
  'https://fonts.googleapis.com/css?family=Merriweather:400,300,300italic,400italic,700,700italic',
]

/**
 * SB Forms, the contact form's backend, is served only from startbootstrap.com (`latest`,
 * no version, no npm package): its tag is dropped, and the form stays unwired as it is offline.
 */
const SB_FORMS = '<script src="https://cdn.startbootstrap.com/sb-forms-latest.js"></script>'

/** What the vendored copy of the creative page loads instead of its CDN links, for the bench's site line. */
export const CREATIVE_VENDORED: string = [
  ...new Set([...CREATIVE_PACKAGES.map(({ name, version }) => `${name}@${version}`), ...Object.entries(FONTSOURCE_VERSIONS).map(([family, version]) => `${fontsourceName(family)}@${version}`)]),
].join(', ')

const hrefOf = (url: string): string => url.replace(/&/g, '&amp;')

/** Replaces `from` (an attribute value or a whole tag) once, or says the page is not the one this was written for. */
function replaceIn(html: string, from: string, to: string): string {
  const at = html.indexOf(from)
  if (at === -1) throw new Error(`startbootstrap-creative's index.html no longer has ${from}: the vendored copy (bench/quality/vendor.ts) needs updating`)
  return html.slice(0, at) + to + html.slice(at + from.length)
}

function copyInto(site: string, { name, version, files }: Replacement): string {
  const unpacked = vendorPackage(name, version)
  for (const file of files) {
    const source = join(unpacked, file.from)
    if (!existsSync(source)) throw new Error(`${name}@${version} has no ${file.from}`)
    cpSync(source, join(site, 'vendor', name, file.to), { recursive: true })
  }
  return `vendor/${name}/${files[0]!.to}`
}

function fontsourceName(family: string): string {
  return `@fontsource/${family.toLowerCase().replace(/\s+/g, '-')}`
}

/** A Google Fonts (v1 API) link's one family and its styles, e.g. `Merriweather:300italic,700` → 300-italic, 700. */
function googleFamily(url: string): { family: string; styles: string[] } {
  const spec = new URL(url).searchParams.get('family') ?? ''
  const [family = '', variants = '400'] = spec.split(':')
  if (!family || spec.includes('|')) throw new Error(`${url}: one family expected`)
  const styles = variants.split(',').map((variant) => {
    const match = /^(\d{3})?(italic)?$/.exec(variant.trim())
    if (!match || (!match[1] && !match[2])) throw new Error(`${url}: unknown style ${variant}`)
    return `${match[1] ?? '400'}${match[2] ? '-italic' : ''}`
  })
  return { family, styles: [...new Set(styles)] }
}

/**
 * The sheet for one Google Fonts link, from the family's @fontsource package: its per-style
 * CSS files, concatenated for exactly the styles the link asks for (every subset, each
 * with its unicode-range, as Google serves a current browser), beside the font files those
 * name so their `url(./files/…)` resolve. Fontsource declares `font-display: swap`, where
 * this link without `display=` gets Google's default (`auto`).
 */
function fontsourceSheet(site: string, url: string): string {
  const { family, styles } = googleFamily(url)
  const version = FONTSOURCE_VERSIONS[family]
  if (!version) throw new Error(`${url}: no @fontsource package pinned for ${family}`)
  const name = fontsourceName(family)
  const unpacked = vendorPackage(name, version)
  const css = styles
    .map((style) => {
      const file = join(unpacked, `${style}.css`)
      if (!existsSync(file)) throw new Error(`${name}@${version} has no ${style}.css (asked for by ${url})`)
      return readFileSync(file, 'utf8')
    })
    .join('\n')
  const target = join(site, 'vendor', name)
  for (const [, font] of css.matchAll(/url\(\s*['"]?\.\/(files\/[^'")]+)['"]?\s*\)/g)) {
    mkdirSync(dirname(join(target, font!)), { recursive: true })
    cpSync(join(unpacked, font!), join(target, font!))
  }
  const sheet = 'google-fonts.css'
  writeFileSync(join(target, sheet), `/* ${url}, from ${name}@${version}: ${styles.map((style) => `${style}.css`).join(', ')} */\n${css}`)
  return `vendor/${name}/${sheet}`
}

/**
 * A copy of startbootstrap-creative's built site (`siteDir`) at `dir`, its CDN stylesheets
 * and scripts replaced by the npm packages they name (copied under `vendor/<package>/`),
 * its Google Fonts by @fontsource sheets, and the SB Forms script dropped: the page the
 * issue's target measures, loadable with nothing but 127.0.0.1.
 */
export function vendorCreative(siteDir: string, dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  cpSync(siteDir, dir, { recursive: true })
  const page = join(dir, 'index.html')
  let html = readFileSync(page, 'utf8')
  for (const replacement of CREATIVE_PACKAGES) html = replaceIn(html, `"${hrefOf(replacement.cdn)}"`, `"${copyInto(dir, replacement)}"`)
  for (const url of CREATIVE_GOOGLE_FONTS) html = replaceIn(html, `"${hrefOf(url)}"`, `"${fontsourceSheet(dir, url)}"`)
  html = replaceIn(html, SB_FORMS, '<!-- sb-forms-latest.js dropped: no npm package (bench/quality/vendor.ts) -->')
  const left = /(?:href|src)="(https?:\/\/[^"]+)"/.exec(html.replace(/<a\b[^>]*>/gi, ''))
  if (left) throw new Error(`startbootstrap-creative's index.html links ${left[1]}, which bench/quality/vendor.ts does not vendor`)
  writeFileSync(page, html)
}
