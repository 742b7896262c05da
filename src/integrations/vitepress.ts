/**
 * VitePress renders its pages after the client build; its `buildEnd` hook runs once they
 * are written to `outDir` (VitePress 1.6 and 2; `vitepress build --base/--outDir` are already
 * applied to the config it passes). `cache.dir` and `report` are relative to the VitePress
 * root, the folder holding `.vitepress` (`docs/` for `vitepress build docs`), as VitePress's own
 * paths are; the default cache is below the nearest package.json at or above that root.
 *
 *   export default defineConfig({ buildEnd: criticalCss() })
 */
import { processDirectory } from '../core/directory.ts'
import type { Options } from '../core/options.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'

/** The part of VitePress's `SiteConfig` this hook uses. */
export interface VitePressSiteConfigLike {
  root: string
  outDir: string
  site: { base: string }
  logger?: FrameworkLogger
}

/** `buildEnd` for `.vitepress/config`: gives every page VitePress wrote its critical CSS. */
export default function criticalCss(options: Options = {}): (siteConfig: VitePressSiteConfigLike) => Promise<void> {
  return async (siteConfig) => {
    await processDirectory(siteConfig.outDir, options, { framework: { name: 'VitePress', base: siteConfig.site.base }, root: siteConfig.root, logger: buildLogger(siteConfig.logger) })
  }
}
