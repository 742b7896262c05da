/**
 * Frameworks that write their pages after the bundler is done (from a prerender step of
 * their own), so the bundler plugin sees no HTML: told by their Vite plugins' names, with
 * what reaches their pages instead.
 */
export interface Framework {
  name: string
  /** What to use instead of the bundler plugin, in a sentence's second half. */
  instead: string
}

const FRAMEWORKS: readonly (Framework & { plugin: RegExp })[] = [
  { name: 'VitePress', plugin: /^vitepress$/, instead: "set `buildEnd: criticalCss()` in .vitepress/config, with `import criticalCss from 'unplugin-critical-css/vitepress'`" },
  { name: 'Astro', plugin: /^astro:/, instead: "add the integration instead of the Vite plugin: `integrations: [criticalCss()]`, with `import criticalCss from 'unplugin-critical-css/astro'`" },
  { name: 'SvelteKit', plugin: /^vite-plugin-sveltekit/, instead: "wrap the adapter instead of adding the Vite plugin: `sveltekit({ adapter: criticalCss(adapter()) })` in vite.config.js (kit 2: `kit: { adapter: criticalCss(adapter()) }` in svelte.config.js), with `import criticalCss from 'unplugin-critical-css/sveltekit'`" },
  { name: 'Nuxt', plugin: /^nuxt:/, instead: "add the module instead of the Vite plugin, `modules: ['unplugin-critical-css/nuxt']`, and build with `nuxt generate`" },
]

/** The framework whose Vite plugins these are, if we know it. */
export function frameworkOf(pluginNames: readonly string[]): Framework | null {
  return FRAMEWORKS.find((framework) => pluginNames.some((name) => framework.plugin.test(name))) ?? null
}

/** Said once when a client build emitted no HTML page at all. */
export function noPagesMessage(framework: Framework | null): string {
  const what = "critical CSS: the build's output has no HTML page, so no page got critical CSS."
  if (framework) return `${what} ${framework.name} writes its pages after the bundler: ${framework.instead}.`
  return `${what} If your framework writes its HTML after the bundler, run \`critical-css <output dir>\` after the build instead.`
}
