// A landing page on Tailwind 4 with Vite's defaults (its minifier drops Tailwind's
// `@layer theme, base, components, utilities;` statement: the blocks already come in that
// order). The options for our plugin come from the test, as JSON in UCC_TEST_OPTIONS;
// 'off' builds the plain site.
import tailwindcss from '@tailwindcss/vite'
import criticalCss from 'unplugin-critical-css/vite'
import { defineConfig } from 'vite'

const options = process.env.UCC_TEST_OPTIONS ?? '{}'

export default defineConfig({
  plugins: [tailwindcss(), ...(options === 'off' ? [] : [criticalCss(JSON.parse(options))])],
})
