// A small Starlight docs site, the theme most Astro docs use, built with our integration as a
// user adds it. UCC_TEST_OPTIONS is the options JSON for our integration (`off`: build without it).
import starlight from '@astrojs/starlight'
import { defineConfig } from 'astro/config'
import criticalCss from 'unplugin-critical-css/astro'

const ucc = process.env.UCC_TEST_OPTIONS

export default defineConfig({
  site: 'https://docs.example/',
  integrations: [
    starlight({
      title: 'Lantern Docs',
      sidebar: [
        { label: 'Guides', items: ['guides/getting-started', 'guides/configuration'] },
        { label: 'Reference', items: ['reference/options'] },
      ],
    }),
    ...(ucc === 'off' ? [] : [criticalCss(ucc ? JSON.parse(ucc) : {})]),
  ],
})
