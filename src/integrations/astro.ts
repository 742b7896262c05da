/**
 * Astro: an integration whose `astro:build:done` hook runs once the pages are written, into
 * the folder Astro hands it (static output: the site; server output: the client folder,
 * which holds the prerendered pages). Pages rendered on demand are made per request, so
 * they get none. Tested with Astro 5 and 7, and Starlight (add it after `starlight()`).
 *
 *   integrations: [criticalCss()]
 */
import { fileURLToPath } from 'node:url'
import { processDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import type { Options } from '../core/options.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'

/** The part of Astro's resolved config this integration reads. */
export interface AstroConfigLike {
  root: URL
  base: string
  /** Where the site is deployed: the page URLs a remote service is asked for, unless `siteUrl` or the env says otherwise. */
  site?: string | undefined
  output: string
  build: { inlineStylesheets: string }
}

/** The part of a route Astro resolved that this integration reads (astro ≥ 5). */
export interface AstroRouteLike {
  pattern: string
  type: string
  origin: string
  isPrerendered: boolean
}

/** The part of Astro's integration API this one uses (astro ≥ 4; `buildOutput` and `astro:routes:resolved` from astro 5). */
export interface AstroIntegrationLike {
  name: string
  hooks: {
    'astro:routes:resolved': (params: { routes: AstroRouteLike[] }) => void
    'astro:config:done': (params: { config: AstroConfigLike; logger: FrameworkLogger; buildOutput?: 'static' | 'server' }) => void
    'astro:build:done': (params: { dir: URL; logger: FrameworkLogger }) => Promise<void>
  }
}

const LISTED = 5

/** What the build log says about the pages Astro renders per request: there is no file to give CSS to. */
function onDemandNote(routes: readonly AstroRouteLike[] | null): string | null {
  const fix = '`export const prerender = true` in a page prerenders it, and then it gets critical CSS'
  if (routes === null) return `critical CSS: a server build: pages rendered on demand are made per request and get none; ${fix}.`
  const patterns = routes.filter((route) => route.type === 'page' && route.origin === 'project' && !route.isPrerendered).map((route) => route.pattern)
  if (patterns.length === 0) return null
  const listed = patterns.slice(0, LISTED).join(', ') + (patterns.length > LISTED ? `, and ${patterns.length - LISTED} more` : '')
  return `critical CSS: ${patterns.length} ${patterns.length === 1 ? 'page is' : 'pages are'} rendered on demand (${listed}), made per request, so ${patterns.length === 1 ? 'it gets' : 'they get'} none; ${fix}.`
}

export default function criticalCss(options: Options = {}): AstroIntegrationLike {
  let config: AstroConfigLike | null = null
  let server = false
  let routes: AstroRouteLike[] | null = null
  return {
    name: PLUGIN_NAME,
    hooks: {
      'astro:routes:resolved': (params) => {
        routes = params.routes
      },
      'astro:config:done': ({ config: resolved, logger, buildOutput }) => {
        config = resolved
        // Astro 5 builds a server whenever one page opts out of prerendering, whatever `output` says.
        server = (buildOutput ?? (resolved.output === 'static' ? 'static' : 'server')) === 'server'
        if (resolved.build.inlineStylesheets === 'always') {
          logger.warn(
            "critical CSS: `build.inlineStylesheets: 'always'` inlines every stylesheet Astro makes, so no page has one left to load without blocking render. Set it to 'auto' or 'never' in the Astro config.",
          )
        }
      },
      'astro:build:done': async ({ dir, logger }) => {
        const log = buildLogger(logger)
        const note = server ? onDemandNote(routes) : null
        if (note !== null) log.info(note)
        await processDirectory(fileURLToPath(dir), options, {
          framework: { name: 'Astro', base: config?.base, siteUrl: config?.site },
          root: config ? fileURLToPath(config.root) : process.cwd(),
          logger: log,
        })
      },
    },
  }
}
