/**
 * A server's manifest, read once from beside its bundle (the URL `MANIFEST_MODULE` gives, or
 * the file a server of one's own names). A server copied without it, or with a broken one,
 * serves its pages as they are and says so once on its standard error: a request never fails
 * for it. While the build renders the server's samples (SAMPLING_ENV set) there is none: the
 * samples are the pages as the server makes them, whatever an earlier build left beside it.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { loadManifest, type LoadedManifest } from './manifest.ts'

/** Set in the env of a server the build starts to render its samples. */
export const SAMPLING_ENV = 'UNPLUGIN_CRITICAL_CSS_SAMPLING'

const loaded = new Map<string, LoadedManifest | null>()

/** The manifest at `file` (a path or a `file:` URL), read the first time it is asked for; null where there is none to use. */
export function manifestAt(file: URL | string): LoadedManifest | null {
  if (process.env[SAMPLING_ENV]) return null
  const url = typeof file === 'string' ? pathToFileURL(file) : file
  const known = loaded.get(url.href)
  if (known !== undefined) return known
  let manifest: LoadedManifest | null = null
  try {
    manifest = loadManifest(JSON.parse(readFileSync(url, 'utf8')))
  } catch (error) {
    console.error(`unplugin-critical-css: pages are served without critical CSS: ${fileURLToPath(url)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  loaded.set(url.href, manifest)
  return manifest
}
