/**
 * Astro: an integration whose `astro:build:done` hook runs once the pages are written
 * (static output: the whole site; `output: 'server'`: the prerendered pages in the client
 * folder; pages rendered on demand are made per request, so they get none).
 *
 *   integrations: [criticalCss()]
 */
import { fileURLToPath } from 'node:url'
import { processDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import type { Options } from '../core/options.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'

/** The part of Astro's integration API this one uses (astro ≥ 4). */
export interface AstroIntegrationLike {
  name: string
  hooks: {
    'astro:config:done': (params: { config: { root: URL; base: string; output: string } }) => void
    'astro:build:done': (params: { dir: URL; logger: FrameworkLogger }) => Promise<void>
  }
}

export default function criticalCss(options: Options = {}): AstroIntegrationLike {
  let config: { root: URL; base: string; output: string } | null = null
  return {
    name: PLUGIN_NAME,
    hooks: {
      'astro:config:done': (params) => {
        config = params.config
      },
      'astro:build:done': async ({ dir, logger }) => {
        const log = buildLogger(logger)
        if (config?.output === 'server') log.info('critical CSS: `output: \'server\'`: only the prerendered pages get critical CSS; pages rendered on demand are made per request.')
        await processDirectory(fileURLToPath(dir), { ...options, base: config?.base ?? '/' }, { root: config ? fileURLToPath(config.root) : process.cwd(), logger: log })
      },
    },
  }
}
