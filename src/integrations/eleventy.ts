/**
 * Eleventy: a plugin whose `eleventy.after` handler runs once a build has written its
 * output folder (not in `--serve` or `--watch`, where pages are rewritten on every change).
 *
 *   eleventyConfig.addPlugin(criticalCss, options)
 */
import { processDirectory } from '../core/directory.ts'
import type { Options } from '../core/options.ts'
import { buildLogger } from './log.ts'

/** The part of Eleventy's `eleventy.after` event this plugin uses (Eleventy ≥ 2). */
export interface EleventyAfterEvent {
  dir?: { output: string }
  directories?: { output: string }
  runMode?: 'build' | 'serve' | 'watch'
}

/** The part of Eleventy's config API this plugin uses. */
export interface EleventyConfigLike {
  pathPrefix?: string
  on(event: 'eleventy.after', handler: (event: EleventyAfterEvent) => Promise<void>): unknown
}

export default function criticalCss(eleventyConfig: EleventyConfigLike, options: Options = {}): void {
  eleventyConfig.on('eleventy.after', async (event) => {
    if (event.runMode !== undefined && event.runMode !== 'build') return
    const output = event.directories?.output ?? event.dir?.output ?? '_site'
    const prefix = eleventyConfig.pathPrefix ?? '/'
    await processDirectory(output, { ...options, base: prefix.startsWith('/') ? prefix : `/${prefix}` }, { logger: buildLogger(null) })
  })
}
