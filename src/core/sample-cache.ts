/**
 * Server routes' samples kept across builds, as pages are (cache.ts): each render of a sample
 * by what it read, the sample's HTML as this build's server answers it and the stylesheets it
 * links in this build, with the viewports, the selection it was asked with and what renders.
 * A route whose samples and sheets are unchanged gets its CSS from here, and no browser starts.
 */
import { renderKeyParts } from '../html/render-key.ts'
import { ENGINE_REVISION } from '../shared/engine-revision.ts'
import type { Selection } from '../contract/api-contract.ts'
import { buildFileFinder, type BuildOutput } from './build-server.ts'
import { contentHashOfParts, sheetHashes, sheetLookup } from './build-sheets.ts'
import { cacheDirOf, cacheKey, createResultCache } from './cache.ts'
import type { Rendered } from './modes/mode.ts'
import type { ResolvedOptions } from './options.ts'

/** A sample as the build's server answered it: its path (`/posts/first`), its URL there, its HTML. */
export interface ServedSample {
  sample: string
  url: string
  html: string
}

export interface SampleCache {
  get(page: ServedSample, selection: Selection | null): Promise<Rendered | null>
  set(page: ServedSample, selection: Selection | null, rendered: Rendered): Promise<void>
}

/**
 * The cache of this build's samples; null with the cache off. `service`: what renders, as the
 * keys name it (the embedded service and its engine, or the configured service's address);
 * `engine`: the engine a result was made with, when the build knows it.
 */
export function sampleCache(options: ResolvedOptions, where: { output: BuildOutput; base: string; root: string; origin: string; service: string; engine: string | null }): SampleCache | null {
  const dir = cacheDirOf(options.cache, where.root)
  if (dir === null || options.cache === null) return null
  const results = createResultCache({ dir, ttlMs: options.cache.ttlMs })
  const hashes = sheetHashes(sheetLookup(buildFileFinder(where.output, where.base), where.origin, options.siteUrl))
  const keyOf = async (page: ServedSample, selection: Selection | null, engine: string | null): Promise<string> => {
    const contents = [contentHashOfParts((part) => renderKeyParts(page.html, part)), ...(await hashes(page.html, page.url))]
    return cacheKey({ service: `${where.service} server route r${ENGINE_REVISION}`, engine, url: page.sample, viewports: options.viewports, thirdParty: options.thirdParty, selection, contents })
  }
  let writable = true
  return {
    async get(page, selection) {
      return await results.get(await keyOf(page, selection, where.engine))
    },
    async set(page, selection, rendered) {
      if (!writable) return
      // A cache that cannot be written never fails a route: its results are not kept, as a page's are not.
      // Kept for the engine that made it (a browser found that did not start renders statically); a service's results by its name alone.
      const engine = where.engine === null ? null : (rendered.engine ?? where.engine)
      await results.set(await keyOf(page, selection, engine), rendered).catch(() => (writable = false))
    },
  }
}
