/**
 * The Vite plugin that gives a server bundle its manifest's place (`MANIFEST_MODULE`): a
 * `URL` relative to the chunk that imports it, pointing at `MANIFEST_FILE` in the bundle's
 * output folder. Relative, because a server is deployed by moving its folder; resolved when
 * the chunk is written, since only then is its place in the folder known.
 */
import { posix } from 'node:path'
import { MANIFEST_FILE, MANIFEST_MODULE } from '../runtime/manifest.ts'
import { PLUGIN_NAME } from './errors.ts'

const RESOLVED = `\0${MANIFEST_MODULE}`
/** Stands for the manifest's path from the chunk until the chunk is written. */
const PLACEHOLDER = '__UNPLUGIN_CRITICAL_CSS_MANIFEST__'

/** The part of a Vite plugin this one is: structural, so no Vite types leak into ours. */
export interface ManifestModulePlugin {
  name: string
  resolveId(id: string): string | null
  load(id: string): string | null
  renderChunk(code: string, chunk: { fileName: string }): { code: string; map: null } | null
}

export function serverManifestModule(): ManifestModulePlugin {
  return {
    name: `${PLUGIN_NAME}:server-manifest`,
    resolveId: (id) => (id === MANIFEST_MODULE ? RESOLVED : null),
    load: (id) => (id === RESOLVED ? `export default new URL(${JSON.stringify(PLACEHOLDER)}, import.meta.url)\n` : null),
    renderChunk(code, chunk) {
      if (!code.includes(PLACEHOLDER)) return null
      const path = posix.relative(posix.dirname(chunk.fileName), MANIFEST_FILE)
      return { code: code.replaceAll(PLACEHOLDER, path.startsWith('.') ? path : `./${path}`), map: null }
    },
  }
}
