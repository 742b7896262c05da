/**
 * A server's manifest, read once from beside its bundle (the URL `MANIFEST_MODULE` gives).
 * A server copied without it, or with a broken one, serves its pages as they are and says so
 * once on its standard error: a request never fails for it.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { loadManifest, type LoadedManifest } from './manifest.ts'

const loaded = new Map<string, LoadedManifest | null>()

export function manifestAt(url: URL): LoadedManifest | null {
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
