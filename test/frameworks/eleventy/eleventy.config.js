// The fixture of test/integration/frameworks/eleventy.test.ts: our plugin as a user adds it,
// with its options as JSON in UCC_TEST_OPTIONS (`off`: build without it).
import criticalCss from 'unplugin-critical-css/eleventy'

const ucc = process.env.UCC_TEST_OPTIONS

export default function (eleventyConfig) {
  eleventyConfig.addPassthroughCopy('src/css')
  eleventyConfig.addPassthroughCopy('src/robots.txt')
  if (ucc !== 'off') eleventyConfig.addPlugin(criticalCss, ucc ? JSON.parse(ucc) : {})
}

export const config = {
  dir: { input: 'src', output: '_site' },
}
