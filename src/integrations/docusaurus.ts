/**
 * Docusaurus 3: a plugin whose `postBuild` runs once a locale's static pages are written
 * to its `outDir` (`build/`, `build/fr/`…), below that locale's `baseUrl`.
 *
 *   plugins: [['unplugin-critical-css/docusaurus', options]]
 */
import { processDirectory } from '../core/directory.ts'
import { ConfigurationError, PLUGIN_NAME } from '../core/errors.ts'
import { ENV, type Options } from '../core/options.ts'
import { buildLogger } from './log.ts'

/** The part of Docusaurus's `LoadContext` this plugin uses. */
export interface DocusaurusContextLike {
  siteDir: string
}

/** The part of the props `postBuild` gets (the site's props, for the locale being built). */
export interface DocusaurusPostBuildProps {
  outDir: string
  /** The locale's base URL (`/docs/`, `/docs/fr/`). */
  baseUrl: string
}

/** The part of Docusaurus's plugin API this plugin uses. */
export interface DocusaurusPluginLike {
  name: string
  postBuild(props: DocusaurusPostBuildProps): Promise<void>
}

/** Docusaurus adds the plugin instance's `id` to its options. */
export type DocusaurusOptions = Options & { id?: string }

export default function criticalCssPlugin(context: DocusaurusContextLike, options: DocusaurusOptions = {}): DocusaurusPluginLike {
  const { id: _id, ...rest } = options
  // Docusaurus writes the site config, plugin options included, into the site's JavaScript.
  if (rest.token !== undefined) {
    throw new ConfigurationError(
      `${PLUGIN_NAME}: Docusaurus publishes plugin options in the site's JavaScript, so the option \`token\` would be public. Remove it and set ${ENV.token} in the build's environment instead.`,
    )
  }
  return {
    name: PLUGIN_NAME,
    async postBuild({ outDir, baseUrl }) {
      await processDirectory(outDir, rest, { framework: { name: 'Docusaurus', base: baseUrl }, root: context.siteDir, logger: buildLogger(null) })
    },
  }
}
