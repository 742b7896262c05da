/**
 * Results kept across builds: one JSON file per (service, page, viewports), written
 * atomically (temp file + rename) so a crash or a parallel build never leaves half a file.
 * A file that cannot be read or parsed is a miss, never an error.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { z } from 'zod'
import { firstScreenWire, normalizeSelection, type FirstScreenDifference, type JobNetwork, type Selection, type ThirdPartyPolicy, type Viewport } from '../contract/api-contract.ts'
import { writeFileAtomic } from './files.ts'
import { DEFAULT_CACHE_DIR, type ResolvedOptions } from './options.ts'

/** Bumped when what a key means changes: 2 keys embedded pages by their served path, not their file. Older entries are never hit. */
const FORMAT = 2

export interface CacheKeyParts {
  /** Service address without credentials. */
  service: string
  /** What renders (embedded mode: `chromium` or `static`): a result of one engine never answers the other. Null or absent: the service decides. */
  engine?: string | null
  url: string
  viewports: readonly Viewport[]
  /** What the render did with other hosts (null or absent: the service's default). */
  thirdParty?: ThirdPartyPolicy | null
  /** The user's say over the critical set (`keep`, `drop`, `states`, …); null or absent: the defaults. */
  selection?: Selection | null
  /**
   * What the result was made from, when the plugin knows it (embedded mode renders this
   * build): hashes of the page's HTML and of every stylesheet it links, so an unchanged
   * page is a hit on the next build and a changed one never is.
   */
  contents?: readonly string[]
}

export interface CachedResult {
  css: string
  /** What the render went without; null for none (and for entries written before it was kept). */
  network: JobNetwork | null
  /** Where its first screen differs from the full page; null when not checked (and for entries written before it was kept). */
  firstScreen: FirstScreenDifference[] | null
  /** What made it (`chromium`, `static`); null when the service did not say (and for entries written before it was kept). */
  engine: string | null
  /** ms since the epoch. */
  createdAt: number
}

const entrySchema = z.object({
  format: z.literal(FORMAT),
  key: z.string(),
  css: z.string(),
  network: z.object({ skippedHosts: z.array(z.object({ host: z.string(), reason: z.string() })), unreadStylesheets: z.array(z.string()) }).nullable().optional(),
  firstScreen: firstScreenWire.nullable().optional(),
  engine: z.string().nullable().optional(),
  createdAt: z.number(),
})

export function cacheKey(parts: CacheKeyParts): string {
  const viewports = parts.viewports.map((viewport) => [viewport.width, viewport.height])
  // The service's default policy keeps the key it had before the option existed.
  const policy = parts.thirdParty == null ? [] : [parts.thirdParty]
  // Likewise a selection left at its defaults: only a build that has a say gets keys of its own (an object, never read as a policy).
  const selection = normalizeSelection(parts.selection)
  const say = selection === null ? [] : [{ selection }]
  // The engine's name joins the service's, so keys made before engines had names (remote mode's) stay as they were.
  const service = parts.engine == null ? parts.service : `${parts.service} (${parts.engine})`
  return createHash('sha256').update(JSON.stringify([FORMAT, service, parts.url, viewports, parts.contents ?? [], ...policy, ...say])).digest('hex')
}

/** Where a build's cache lives (its results, and remote mode's job times); null with the cache off. */
export function cacheDirOf(cache: ResolvedOptions['cache'], root: string): string | null {
  return cache ? cacheDirectory(cache.dir, root) : null
}

/**
 * The keys the last build of each project root looked up. One cache serves several builds
 * (a monorepo's apps, the demo's two playgrounds): another build's entries say nothing of
 * this one's pages, this build's own last keys do.
 */
const lastBuildSchema = z.object({ format: z.literal(FORMAT), root: z.string(), keys: z.array(z.string()) })

function lastBuildFile(dir: string, root: string): string {
  return join(dir, `last-build-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.json`)
}

export function writeLastBuild(dir: string, root: string, keys: readonly string[]): Promise<void> {
  return writeFileAtomic(lastBuildFile(dir, root), JSON.stringify({ format: FORMAT, root, keys }))
}

/**
 * Whether a build of `root` will likely render, so that it starts its browser (or reads the
 * service's pace) while the bundler works: the cache is off, or the root's last build left
 * no record, or one of the entries it looked up is gone or past the ttl. A build whose pages
 * changed since renders anyway, only without the head start; a guess that was wrong costs a
 * browser launch or a late one, never a result.
 */
export function buildMayRender(cache: ResolvedOptions['cache'], cacheDir: string | null, root: string, now: number = Date.now()): boolean {
  if (cache === null || cacheDir === null) return true
  try {
    const last = lastBuildSchema.parse(JSON.parse(readFileSync(lastBuildFile(cacheDir, root), 'utf8')))
    if (last.root !== root || last.keys.length === 0) return true
    // The entry file's time is when it was written, as its createdAt is: no need to read each one.
    return last.keys.some((key) => now - statSync(join(cacheDir, `${key}.json`)).mtimeMs >= cache.ttlMs)
  } catch {
    return true
  }
}

/** The cache directory: `dir` against the root, or the default below the nearest package.json. */
export function cacheDirectory(dir: string | null, root: string): string {
  if (dir !== null) return resolve(root, dir)
  let current = resolve(root)
  for (;;) {
    if (existsSync(join(current, 'package.json'))) return join(current, DEFAULT_CACHE_DIR)
    const parent = dirname(current)
    if (parent === current) return join(resolve(root), DEFAULT_CACHE_DIR)
    current = parent
  }
}

export interface ResultCache {
  /** The result stored under `key`, if there is one younger than the ttl. */
  get(key: string): Promise<CachedResult | null>
  set(key: string, result: Omit<CachedResult, 'createdAt'>): Promise<void>
}

/**
 * How long a service's jobs took in earlier builds (the client's `jobTimes`), kept beside the
 * results so that the next build times its first status checks by them. One file per
 * service; one that cannot be read is no memory, never an error.
 */
const jobTimesSchema = z.object({ format: z.literal(FORMAT), service: z.string(), times: z.array(z.number().nonnegative()) })

function jobTimesFile(dir: string, service: string): string {
  return join(dir, `job-times-${createHash('sha256').update(service).digest('hex').slice(0, 16)}.json`)
}

export function readJobTimes(dir: string, service: string): number[] {
  try {
    const entry = jobTimesSchema.parse(JSON.parse(readFileSync(jobTimesFile(dir, service), 'utf8')))
    return entry.service === service ? entry.times : []
  } catch {
    return []
  }
}

export function writeJobTimes(dir: string, service: string, times: readonly number[]): Promise<void> {
  return writeFileAtomic(jobTimesFile(dir, service), JSON.stringify({ format: FORMAT, service, times }))
}

export function createResultCache(options: { dir: string; ttlMs: number; now?: () => number }): ResultCache {
  const now = options.now ?? Date.now
  const fileOf = (key: string): string => join(options.dir, `${key}.json`)
  return {
    async get(key) {
      let text: string
      try {
        // Synchronous: entries are a few KiB, and 50 of them read through the thread pool
        // took 6–13 ms against ~1 ms this way — the whole cost of a warm build.
        text = readFileSync(fileOf(key), 'utf8')
      } catch {
        return null
      }
      let entry: z.infer<typeof entrySchema>
      try {
        entry = entrySchema.parse(JSON.parse(text))
      } catch {
        return null
      }
      const age = now() - entry.createdAt
      if (entry.key !== key || age < 0 || age >= options.ttlMs) return null
      return { css: entry.css, network: entry.network ?? null, firstScreen: entry.firstScreen ?? null, engine: entry.engine ?? null, createdAt: entry.createdAt }
    },
    async set(key, { css, network, firstScreen, engine }) {
      const entry: z.infer<typeof entrySchema> = { format: FORMAT, key, css, ...(network ? { network } : {}), ...(firstScreen ? { firstScreen } : {}), ...(engine ? { engine } : {}), createdAt: now() }
      await writeFileAtomic(fileOf(key), JSON.stringify(entry))
    },
  }
}
