/** The quality corpus page by page: each site served on loopback while its pages are visited. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { qualitySite, serveStatic, type Site } from './corpus.ts'
import { createBeasties, type BeastiesRunner } from './peers.ts'

/** One page of a quality site, served: where, what it is, and the site's beasties. */
export interface ServedPage {
  site: Site
  page: string
  url: string
  html: string
  /** `site page`, for what the run notes. */
  label: string
  beasties: BeastiesRunner
}

/** Visits every page of the named sites, one site at a time, each served on loopback while its pages are visited. */
export async function forEachPage(names: readonly string[], maxPages: number, visit: (page: ServedPage) => Promise<void>): Promise<Site[]> {
  const sites: Site[] = []
  for (const name of names) {
    const site = qualitySite(name, maxPages)
    sites.push(site)
    const server = await serveStatic(site.dir)
    const beasties = createBeasties(site.dir)
    console.error(`${site.name}@${site.version}: ${site.pages.length} page(s) on ${server.origin}`)
    try {
      for (const page of site.pages) await visit({ site, page, url: server.origin + page, html: readFileSync(join(site.dir, page), 'utf8'), label: `${site.name} ${page}`, beasties })
    } finally {
      await server.close()
    }
  }
  return sites
}
