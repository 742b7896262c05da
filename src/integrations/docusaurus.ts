/**
 * Docusaurus: a plugin whose `postBuild` runs once the static site is written to `outDir`.
 *
 *   plugins: [['unplugin-critical-css/docusaurus', options]]
 */
import { processDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import type { Options } from '../core/options.ts'
import { buildLogger } from './log.ts'

/** The part of Docusaurus's plugin API this plugin uses (Docusaurus ≥ 2). */
export interface DocusaurusPluginLike {
  name: string
  postBuild(props: { outDir: string; siteConfig: { baseUrl: string } }): Promise<void>
}

export default function criticalCssPlugin(context: { siteDir: string }, options: Options = {}): DocusaurusPluginLike {
  return {
    name: PLUGIN_NAME,
    async postBuild({ outDir, siteConfig }) {
      await processDirectory(outDir, { ...options, base: siteConfig.baseUrl }, { root: context.siteDir, logger: buildLogger(null) })
    },
  }
}
