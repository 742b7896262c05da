import { defineConfig } from 'tsdown'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    client: 'src/client.ts',
    service: 'src/service.ts',
    cli: 'src/service/cli.ts',
    'critical-css': 'src/cli/critical-css.ts',
    vite: 'src/vite.ts',
    webpack: 'src/webpack.ts',
    rspack: 'src/rspack.ts',
    rollup: 'src/rollup.ts',
    rolldown: 'src/rolldown.ts',
    esbuild: 'src/esbuild.ts',
    astro: 'src/astro.ts',
    vitepress: 'src/vitepress.ts',
    eleventy: 'src/eleventy.ts',
    docusaurus: 'src/docusaurus.ts',
    nuxt: 'src/nuxt.ts',
    sveltekit: 'src/sveltekit.ts',
    runtime: 'src/runtime.ts',
    // SvelteKit's handle, which the user exports from src/hooks.server.js (unplugin-critical-css/sveltekit/handle).
    'sveltekit-handle': 'src/sveltekit-handle.ts',
    // Astro's middleware, which the Astro integration adds by this file's URL (dist/astro-middleware.mjs).
    'astro-middleware': 'src/runtime/astro-middleware.ts',
    // Nitro's plugin, which the Nuxt module adds by this file's path (dist/nuxt-nitro-plugin.mjs).
    'nuxt-nitro-plugin': 'src/runtime/nitro-plugin.ts',
    // The static engine's worker threads, started by this file's URL (engine/static/workers.ts).
    'static-worker': 'src/engine/static/worker.ts',
  },
  // Resolved by the server build that bundles the middleware (core/server-manifest-module.ts).
  external: [/^virtual:unplugin-critical-css\//],
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  dts: true,
  clean: true,
  // Docusaurus require()s its plugins: a CommonJS door to the ESM build (see the file).
  copy: [{ from: 'src/docusaurus.cjs', to: 'dist' }],
})
