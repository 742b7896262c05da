/**
 * The Vite/Rollup plugin that gives a server bundle its manifest's place (`MANIFEST_MODULE`):
 * a `URL` pointing at `MANIFEST_FILE` in the bundle's output folder, relative to the chunk
 * that imports it (Vite), or to the entry at the folder's top where the bundler makes every
 * chunk's `import.meta.url` the entry's (Nitro). Relative, because a server is deployed by
 * moving its folder; resolved when the chunk is written, since only then is its place known.
 */
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join, posix, relative, sep } from 'node:path'
import { MANIFEST_PATH_PLACEHOLDER } from '../runtime/manifest-place.ts'
import { MANIFEST_FILE, MANIFEST_MODULE } from '../runtime/manifest.ts'
import { PLUGIN_NAME } from './errors.ts'

const RESOLVED = `\0${MANIFEST_MODULE}`
/** Stands for the manifest's path from the chunk until the chunk is written. */
const PLACEHOLDER = '__UNPLUGIN_CRITICAL_CSS_MANIFEST__'

/**
 * `path` (`./…` or `../…`) in `placeholder`'s place, padded to its length where shorter: the
 * spaces after it, which a URL's parser drops, keep every later column of the line where the
 * bundle's source map has it.
 */
function inPlaceOf(placeholder: string, path: string): string {
  return (path.startsWith('.') ? path : `./${path}`).padEnd(placeholder.length)
}

/** The part of a Vite plugin this one is: structural, so no Vite types leak into ours. */
export interface ManifestModulePlugin {
  name: string
  resolveId(id: string): string | null
  load(id: string): string | null
  renderChunk(code: string, chunk: { fileName: string }): { code: string; map: null } | null
}

/** What the bundle's `import.meta.url` is: each chunk's own, or the entry's at the output folder's top. */
export type ImportMetaUrl = 'chunk' | 'entry'

export function serverManifestModule(importMetaUrl: ImportMetaUrl = 'chunk'): ManifestModulePlugin {
  return {
    name: `${PLUGIN_NAME}:server-manifest`,
    resolveId: (id) => (id === MANIFEST_MODULE ? RESOLVED : null),
    // Asked when a request comes, not when the chunk loads: Nitro sets the entry's URL only after its chunks have loaded.
    load: (id) => (id === RESOLVED ? `export default () => new URL(${JSON.stringify(PLACEHOLDER)}, import.meta.url)\n` : null),
    renderChunk(code, chunk) {
      if (!code.includes(PLACEHOLDER)) return null
      const path = importMetaUrl === 'entry' ? MANIFEST_FILE : posix.relative(posix.dirname(chunk.fileName), MANIFEST_FILE)
      return { code: code.replaceAll(PLACEHOLDER, inPlaceOf(PLACEHOLDER, path)), map: null }
    },
  }
}

/**
 * The files below `serverDir` that carry MANIFEST_PATH_PLACEHOLDER (a bundle no plugin of
 * ours built: SvelteKit's, with the user's `handle`), each with the manifest's path from it
 * written in: to be written together with the manifest. Empty: nothing in the server reads one.
 */
export async function manifestPathEdits(serverDir: string): Promise<Map<string, string>> {
  const edits = new Map<string, string>()
  for (const entry of await readdir(serverDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.[cm]?js$/.test(entry.name)) continue
    const file = join(entry.parentPath, entry.name)
    const text = await readFile(file, 'utf8')
    if (!text.includes(MANIFEST_PATH_PLACEHOLDER)) continue
    const path = relative(dirname(file), join(serverDir, MANIFEST_FILE)).split(sep).join('/')
    edits.set(file, text.replaceAll(MANIFEST_PATH_PLACEHOLDER, inPlaceOf(MANIFEST_PATH_PLACEHOLDER, path)))
  }
  return edits
}
