/**
 * Astro: an integration whose `astro:build:done` hook runs once the pages are written, into
 * the folder Astro hands it (static output: the site; server output: the client folder,
 * which holds the prerendered pages). With the node adapter (`mode: 'standalone'`), pages
 * rendered on demand get theirs at request time: the build starts the built server, renders
 * a sample of each route, and writes the manifest our middleware reads
 * (core/server-routes.ts). Tested with Astro 5 and 7, and Starlight (add it after `starlight()`).
 *
 *   integrations: [criticalCss()]
 */
import { fileURLToPath } from 'node:url'
import { processResolvedDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import { resolveDirectoryOptions, type Options } from '../core/options.ts'
import { renderServerRoutes, sampledRoute, type ServerRoute } from '../core/server-routes.ts'
import { serverManifestModule, type ManifestModulePlugin } from '../core/server-manifest-module.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'

/** The part of Astro's resolved config this integration reads. */
export interface AstroConfigLike {
  root: URL
  base: string
  /** Where the site is deployed: the page URLs a remote service is asked for, unless `siteUrl` or the env says otherwise. */
  site?: string | undefined
  output: string
  build: { inlineStylesheets: string; server: URL; serverEntry: string }
  adapter?: { name: string } | undefined
}

/** The part of a route Astro resolved that this integration reads (astro ≥ 5). */
export interface AstroRouteLike {
  pattern: string
  /** The route's parameters: none for a route with one URL. */
  params: string[]
  type: string
  origin: string
  isPrerendered: boolean
}

/** The part of Astro's integration API this one uses (astro ≥ 4; `buildOutput` and `astro:routes:resolved` from astro 5). */
export interface AstroIntegrationLike {
  name: string
  hooks: {
    'astro:config:setup': (params: {
      command: string
      config: Pick<AstroConfigLike, 'base' | 'site'> & { adapter?: { name: string } | undefined }
      addMiddleware: (middleware: { order: 'pre' | 'post'; entrypoint: string | URL }) => void
      updateConfig: (config: { vite: { plugins: ManifestModulePlugin[] } }) => unknown
    }) => void
    'astro:routes:resolved': (params: { routes: AstroRouteLike[] }) => void
    'astro:config:done': (params: { config: AstroConfigLike; logger: FrameworkLogger; buildOutput?: 'static' | 'server' }) => void
    'astro:build:done': (params: { dir: URL; logger: FrameworkLogger }) => Promise<void>
  }
}

const LISTED = 5
/** The node adapter, whose standalone server the build starts to render its on-demand routes. */
const NODE_ADAPTER = '@astrojs/node'

/** The routes rendered on demand, each with the path it is rendered from: its own, or the `samples` option's. */
function serverRoutes(routes: readonly AstroRouteLike[], base: string, samples: ReadonlyMap<string, readonly string[]>): ServerRoute[] {
  const prefix = base.replace(/\/$/, '')
  return routes
    .filter((route) => route.type === 'page' && route.origin === 'project' && !route.isPrerendered)
    .map((route) => sampledRoute(route.pattern, route.params.length === 0 ? `${prefix}${route.pattern}` : null, samples))
}

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
      'astro:config:setup': ({ command, config: setup, addMiddleware, updateConfig }) => {
        // Only a build whose server it can start and render (the node adapter) gets the middleware; outermost, it sees the HTML the user's own made.
        if (command !== 'build' || setup.adapter?.name !== NODE_ADAPTER) return
        const { options: resolved } = resolveDirectoryOptions(options, { framework: { name: 'Astro', base: setup.base, siteUrl: setup.site } })
        if (resolved.enabled === false) return
        addMiddleware({ order: 'pre', entrypoint: new URL('./astro-middleware.mjs', import.meta.url) })
        updateConfig({ vite: { plugins: [serverManifestModule()] } })
      },
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
        const root = config ? fileURLToPath(config.root) : process.cwd()
        const resolved = resolveDirectoryOptions(options, { framework: { name: 'Astro', base: config?.base, siteUrl: config?.site } })
        const renders = server && config !== null && config.adapter?.name === NODE_ADAPTER && routes !== null && resolved.options.enabled !== false
        if (server && !renders) {
          const note = onDemandNote(routes)
          if (note !== null) log.info(note)
        }
        // With its routes rendered per request, a build that prerenders no page has nothing to be told of it.
        await processResolvedDirectory(fileURLToPath(dir), resolved, { root, logger: log, projectSheets: true, pagesOptional: renders })
        if (!renders) return
        const entry = fileURLToPath(new URL(config!.build.serverEntry, config!.build.server))
        const onDemand = serverRoutes(routes!, config!.base, resolved.options.samples)
        await renderServerRoutes(resolved.options, {
          server: { command: process.execPath, args: [entry], cwd: root, env: (port) => ({ PORT: String(port), HOST: '127.0.0.1' }) },
          routes: onDemand,
          staticDir: fileURLToPath(dir),
          base: config!.base,
          serverDir: fileURLToPath(config!.build.server),
          root,
          logger: log,
        })
      },
    },
  }
}
