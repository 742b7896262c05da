// The integration as a user adds it, by package name; UCC_TEST_OPTIONS carries its options
// as JSON from the test ('off': build without it).
const ucc = process.env.UCC_TEST_OPTIONS

export default defineNuxtConfig({
  compatibilityDate: '2025-07-15',
  devtools: { enabled: false },
  telemetry: false,
  css: ['~/assets/site.css'],
  // Nuxt 3 inlines every style into its pages by default; linked, they are what critical CSS
  // is for. UCC_TEST_NUXT_STYLES=default builds with Nuxt's default instead.
  features: process.env.UCC_TEST_NUXT_STYLES === 'default' ? {} : { inlineStyles: false },
  modules: ucc === 'off' ? [] : [['unplugin-critical-css/nuxt', ucc ? JSON.parse(ucc) : {}]],
  // Reproducible pages: Nuxt writes a random build id and the time each page was rendered
  // into every page, so no two builds match byte for byte. The cache does not need this (its
  // key leaves scripts and preloads out); the test's byte-for-byte comparisons do.
  buildId: 'ucc-fixture',
  nitro: {
    hooks: {
      'prerender:generate'(route) {
        if (route.contents) route.contents = route.contents.replace(/\b\d{13}\b/g, '1700000000000')
      },
    },
  },
})
