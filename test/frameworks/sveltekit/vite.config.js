import adapter from '@sveltejs/adapter-static'
import { sveltekit } from '@sveltejs/kit/vite'
import criticalCss from 'unplugin-critical-css/sveltekit'
import { defineConfig } from 'vite'

// The integration test passes our options as JSON; `off` builds the site without us.
const ucc = process.env.UCC_TEST_OPTIONS
// Precompressed pages must be made from the pages with critical CSS, not before.
const site = adapter({ precompress: true })

// Kit 3 reads its config from the Vite plugin's options (svelte.config.js is gone).
export default defineConfig({
  plugins: [
    sveltekit({
      adapter: ucc === 'off' ? site : criticalCss(site, ucc ? JSON.parse(ucc) : {}),
      // Served below a path: the pages must be rendered there too.
      paths: { base: '/shop' },
      // Kit names each build by the time it ran, in the pages and the scripts: a fixed name
      // makes two builds of the same source byte-identical, as the test compares them.
      version: { name: 'fixture' },
    }),
  ],
})
