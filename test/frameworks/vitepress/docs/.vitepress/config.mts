import { defineConfig } from 'vitepress'
import criticalCss from 'unplugin-critical-css/vitepress'

// The site lives in docs/, as most projects' docs do, and is built with `vitepress build docs`
// from the package folder: the VitePress root (docs/) is not the working directory or the
// folder of the nearest package.json. The integration test passes our options as JSON;
// `off` builds the site without us.
const ucc = process.env.UCC_TEST_OPTIONS

export default defineConfig({
  title: 'Lantern',
  description: 'A small docs site built by the integration tests',
  // Served below a path, as most project docs are: the pages must be rendered there too.
  base: '/docs/',
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide' },
      { text: 'Reference', link: '/reference' },
      { text: 'About', link: '/about' },
    ],
    sidebar: [
      { text: 'Docs', items: [{ text: 'Guide', link: '/guide' }, { text: 'Reference', link: '/reference' }, { text: 'About', link: '/about' }] },
    ],
    footer: { message: 'Released under the MIT License.', copyright: 'Copyright © Lantern' },
  },
  buildEnd: ucc === 'off' ? undefined : criticalCss(ucc ? JSON.parse(ucc) : {}),
})
