/**
 * The Vite playground site grown to any number of pages, in a temp dir: the three original
 * pages, then copies of them (in turn) under pages/page-N/, each with its own title and
 * heading, so every page is its own cache entry.
 */
import { cp, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ORIGINALS = ['index.html', 'pricing/index.html', 'about/index.html'] as const
const TITLE = /<title>[^<]*<\/title>/
const HEADING = /<h1>[^<]*<\/h1>/

export interface GeneratedSite {
  /** The temp dir: site/ inside it, and whatever the bench puts beside it (dists, caches, reports). */
  root: string
  /** Vite's root. */
  site: string
  /** Every page's HTML file, absolute: Vite's multi-page input. */
  inputs: string[]
}

export async function makeSite(pages: number): Promise<GeneratedSite> {
  const root = await mkdtemp(join(tmpdir(), `ucc-bench-embedded-${pages}-`))
  const site = join(root, 'site')
  await cp(fileURLToPath(new URL('../../playground/site/', import.meta.url)), site, { recursive: true })
  // Keeps Vite and the plugin from looking past the temp dir for a package.json.
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  const files: string[] = ORIGINALS.slice(0, pages)
  const templates = await Promise.all(ORIGINALS.map((file) => readFile(join(site, file), 'utf8')))
  for (let i = files.length + 1; i <= pages; i++) {
    const file = `pages/page-${i}/index.html`
    const html = templates[i % templates.length]!
      .replace(TITLE, `<title>Page ${i} · Playground</title>`)
      .replace(HEADING, `<h1>Page ${i} of ${pages}</h1>`)
    await mkdir(dirname(join(site, file)), { recursive: true })
    await writeFile(join(site, file), html)
    files.push(file)
  }
  return { root, site, inputs: files.map((file) => join(site, file)) }
}
