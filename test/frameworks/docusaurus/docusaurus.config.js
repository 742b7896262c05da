// The fixture of test/integration/frameworks/docusaurus.test.ts: our plugin as a user adds it,
// with its options as JSON in UCC_TEST_OPTIONS (`off`: build without it).
const ucc = process.env.UCC_TEST_OPTIONS

export default {
  title: 'Fixture',
  url: 'https://site.example',
  // Below a path, as many documentation sites are: the pages are served at /docs/….
  baseUrl: '/docs/',
  onBrokenLinks: 'throw',
  presets: [['classic', { docs: false, blog: false, theme: { customCss: './src/css/custom.css' } }]],
  plugins: ucc === 'off' ? [] : [['unplugin-critical-css/docusaurus', ucc ? JSON.parse(ucc) : {}]],
}
