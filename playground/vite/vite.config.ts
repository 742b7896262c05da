import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
// The playground imports the source, as a user's config imports 'unplugin-critical-css/vite'.
import criticalCss from '../../src/vite.ts'

const site = fileURLToPath(new URL('../site/', import.meta.url))

// No service configured: embedded mode. Set CRITICAL_CSS_BASE_URL and _API_TOKEN (and _SITE_URL) for a remote service.
export default defineConfig({
  root: site,
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./dist/', import.meta.url)),
    emptyOutDir: true,
    rollupOptions: { input: ['index.html', 'pricing/index.html', 'about/index.html'].map((page) => site + page) },
  },
  plugins: [criticalCss({ report: fileURLToPath(new URL('./report.json', import.meta.url)) })],
})
