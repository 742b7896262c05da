// The fixture site the Astro integration test builds. UCC_TEST_OPTIONS is the options JSON
// for our integration (`off`: build without it); UCC_ASTRO_BASE builds it below a base path
// and UCC_ASTRO_OUTPUT=server as an on-demand site, each into its own folder so the test can
// keep one build of each beside the others.
import node from '@astrojs/node'
import { defineConfig } from 'astro/config'
import criticalCss from 'unplugin-critical-css/astro'

const ucc = process.env.UCC_TEST_OPTIONS
const base = process.env.UCC_ASTRO_BASE
const server = process.env.UCC_ASTRO_OUTPUT === 'server'

export default defineConfig({
  // Where the site is deployed: the integration asks a remote service for pages there.
  site: 'https://site.example/',
  ...(base ? { base, outDir: './dist-base' } : {}),
  ...(server ? { output: 'server', adapter: node({ mode: 'standalone' }), outDir: './dist-server' } : {}),
  // Astro inlines stylesheets under Vite's 4 kB limit (`inlineStylesheets: 'auto'`), which
  // would leave this small site nothing to defer; most sites' CSS is larger and is linked.
  build: { inlineStylesheets: 'never' },
  integrations: ucc === 'off' ? [] : [criticalCss(ucc ? JSON.parse(ucc) : {})],
})
