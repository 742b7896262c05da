import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig, type UserConfig } from 'vite'
// The playground imports the source, as a user's config imports 'unplugin-critical-css/vite'.
import criticalCss from '../../src/vite.ts'
import type { Options } from '../../src/core/options.ts'
import { PAGES } from '../pages.ts'

/** The playground's build; the end-to-end tests build a copy of the site elsewhere with it. */
export function playgroundConfig({
  site = fileURLToPath(new URL('../site/', import.meta.url)),
  outDir = fileURLToPath(new URL('./dist/', import.meta.url)),
  plugin = { report: fileURLToPath(new URL('./report.json', import.meta.url)) },
}: { site?: string; outDir?: string; plugin?: Options } = {}): UserConfig {
  return {
    root: site,
    publicDir: false,
    build: { outDir, emptyOutDir: true, rollupOptions: { input: PAGES.map((page) => join(site, page)) } },
    // No service configured: embedded mode. Set CRITICAL_CSS_BASE_URL and _API_TOKEN (and _SITE_URL) for a remote service.
    plugins: [criticalCss(plugin)],
  }
}

export default defineConfig(playgroundConfig())
