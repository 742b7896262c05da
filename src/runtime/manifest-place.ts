/**
 * Where a server bundle that no plugin of ours builds (SvelteKit's, with the user's `handle`)
 * finds its manifest: MANIFEST_PATH_PLACEHOLDER, which the build writes over in the server's
 * own files with the manifest's path from each file once the manifest is written
 * (core/server-manifest-module.ts). The string and the `import.meta.url` it is read against
 * are in this one module, so a bundler puts them in one file whatever chunks it makes. Until
 * the build writes it (`vite dev`, the framework's prerendering, the build's own renders of
 * the server), the bundle has no manifest.
 */
import { MANIFEST_FILE } from './manifest.ts'

/** Long enough for a path from a file a dozen folders down; the path is written in with spaces after it to this length. */
export const MANIFEST_PATH_PLACEHOLDER = '__UNPLUGIN_CRITICAL_CSS_MANIFEST_PATH_____________________________________________'

// A variable, not the literal in `new URL(…)`: a bundler would make that an asset of its own.
const manifestPath: string = MANIFEST_PATH_PLACEHOLDER

/** The manifest's URL, or null where the build has not written its place (yet). */
export function writtenManifestUrl(): URL | null {
  const path = manifestPath.trimEnd()
  return path.endsWith(MANIFEST_FILE) ? new URL(path, import.meta.url) : null
}
