/**
 * `unplugin-critical-css/runtime`: server-rendered routes get the critical CSS a build
 * measured for them, at request time. Imports the inliner only: no browser, no service.
 */
export { applyCriticalCss, routeOf, type ApplyOptions } from './runtime/apply.ts'
export { withCriticalCss } from './runtime/server-response.ts'
export { manifestAt as readManifest } from './runtime/manifest-file.ts'
export { loadManifest, ManifestError, MANIFEST_VERSION, type CriticalCssManifest, type LoadedManifest, type ManifestRoute } from './runtime/manifest.ts'
