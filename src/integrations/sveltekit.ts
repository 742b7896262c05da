/**
 * SvelteKit: a wrapper around the adapter. Kit awaits the adapter's `adapt(builder)` once the
 * app is built and prerendered (its public Adapter API), so when the wrapped adapter's
 * `adapt` resolves, its pages are on disk; a Vite plugin's `closeBundle` has no such
 * guarantee (kit runs the adapter in a `closeBundle` of its own, in an order it does not
 * document). The folder comes from the adapter's own `writePrerendered` call, the base from
 * `paths.base`. Prerendered pages (adapter-static) get critical CSS in their files.
 * With adapter-node, pages rendered per request get theirs at request time: the build starts
 * the built server (`node build/index.js`), renders a sample of each page route and writes
 * the manifest that the `handle` from `unplugin-critical-css/sveltekit/handle` reads
 * (core/server-routes.ts).
 *
 *   kit 3, vite.config.js:    sveltekit({ adapter: criticalCss(adapter(), options) })
 *   kit 2, svelte.config.js:  kit: { adapter: criticalCss(adapter(), options) }
 */
import { writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { processDirectory } from '../core/directory.ts'
import { ConfigurationError, PLUGIN_NAME } from '../core/errors.ts'
import { resolveDirectoryOptions, type Options, type ResolvedOptions } from '../core/options.ts'
import type { BuildLogger } from '../core/report.ts'
import { manifestPathEdits } from '../core/server-manifest-module.ts'
import { renderServerRoutes, sampledRoute, serverLoaderAsset, type ServerRoute } from '../core/server-routes.ts'

/**
 * The part of `builder.config` this wrapper reads: kit 3 puts the options at the top (and
 * warns, `adapter_config_kit_deprecated`, when an adapter reads the `kit` it still offers);
 * kit 2 has them under `kit`.
 */
export type SvelteKitConfigLike = { paths: { base: string } } | { kit: { paths: { base: string } } }

/** The part of a route kit built (its `RouteDefinition`) this wrapper reads. */
export interface SvelteKitRouteLike {
  /** `/`, `/blog/[slug]`, `/(app)/about`: what `event.route.id` says at request time. */
  id: string
  /** A route with a page answers GET or POST with one; an endpoint's is empty. */
  page: { methods: readonly string[] }
  prerender: boolean | 'auto'
  segments: readonly { dynamic: boolean }[]
}

/** The part of SvelteKit's `Builder` this wrapper uses (kit ≥ 2). */
export interface SvelteKitBuilderLike {
  /** Kit prints `log.info` only with a verbose log level, so progress goes to `log` itself. */
  log: { (message: string): void; warn(message: string): void }
  config: SvelteKitConfigLike
  writeClient(dest: string): string[]
  writePrerendered(dest: string): string[]
  /** Kit 2 resolves with nothing, kit 3 with the files it compressed. */
  compress(directory: string): Promise<unknown>
  routes: readonly SvelteKitRouteLike[]
  prerendered: { paths: readonly string[] }
  getServerDirectory(): string
  copy(from: string, to: string, options?: object): string[]
}

/** The part of SvelteKit's `Adapter` this wrapper uses: `adapt` and whatever else it has. */
export interface SvelteKitAdapterLike<B extends SvelteKitBuilderLike = SvelteKitBuilderLike> {
  name: string
  adapt(builder: B): unknown
}

/** Where the adapter wrote the client, the prerendered pages and the server, and the folders it asked to compress. */
interface Written {
  client: Set<string>
  pages: Set<string>
  /** Where it copied kit's server output to (adapter-node: `build/server`). */
  server: Set<string>
  compress: string[]
}

/** The adapter whose server the build starts to render its routes: `node build/index.js`. */
const NODE_ADAPTER = '@sveltejs/adapter-node'

/**
 * The builder the wrapped adapter sees: kit's own, noting the folders it writes to. For a
 * static site, compression is held back until the pages have their critical CSS (a `.br`/
 * `.gz` made before would hold the page without it). For a server (`loader` given), the
 * loader script goes among the client files as they are written: adapter-node serves only
 * the files it listed then, and no page names it unless the manifest is written.
 */
function watching<B extends SvelteKitBuilderLike>(builder: B, written: Written, loader: { file: string; text: string } | null): B {
  // A copy, not a prototype link: an adapter may spread or list the builder's members.
  return {
    ...builder,
    writeClient: (dest: string) => {
      written.client.add(resolve(dest))
      const files = builder.writeClient(dest)
      if (loader === null) return files
      writeFileSync(join(dest, loader.file), loader.text)
      return [...files, loader.file]
    },
    writePrerendered: (dest: string) => {
      written.pages.add(resolve(dest))
      return builder.writePrerendered(dest)
    },
    copy: (from: string, to: string, options?: object) => {
      if (resolve(from) === resolve(builder.getServerDirectory())) written.server.add(resolve(to))
      return builder.copy(from, to, options)
    },
    compress: async (directory: string) => {
      if (loader === null) written.compress.push(directory)
      else await builder.compress(directory)
    },
  }
}

/** `paths.base` where this kit keeps it. `in` looks without running kit 3's warning `kit` getter. */
function basePath(config: SvelteKitConfigLike): string {
  return 'paths' in config ? config.paths.base : config.kit.paths.base
}

/** The one folder a static site was written to, or a message naming why there is none. */
function siteFolder(adapter: string, written: Written): string {
  const pages = [...written.pages]
  if (pages.length !== 1) {
    throw new ConfigurationError(`${PLUGIN_NAME}: ${adapter} wrote prerendered pages to ${pages.length === 0 ? 'no folder' : pages.join(', ')}: the SvelteKit integration needs one folder of prerendered pages (adapter-static, or \`export const prerender = true\`).`)
  }
  const [folder] = pages as [string]
  if ([...written.client].some((dir) => dir !== folder)) {
    throw new ConfigurationError(`${PLUGIN_NAME}: ${adapter} wrote the pages to ${folder} and the assets to ${[...written.client].join(', ')}: critical CSS renders the pages with their stylesheets, so both must be one folder (adapter-static: leave \`assets\` unset, or equal to \`pages\`).`)
  }
  return folder
}

/** The page routes kit renders per request, each with the path it is rendered from: its own, or the `samples` option's. */
function serverRoutes(routes: readonly SvelteKitRouteLike[], base: string, samples: ReadonlyMap<string, readonly string[]>): ServerRoute[] {
  return routes
    .filter((route) => route.page.methods.length > 0 && route.prerender !== true)
    .map((route) => {
      // A group folder (`(app)`) is no part of the URL; below a base, kit answers `/` at the base with a slash (it redirects the base to it).
      const path = route.id.split('/').filter((segment) => segment !== '' && !/^\(.+\)$/.test(segment)).join('/')
      return sampledRoute(route.id, route.segments.some((segment) => segment.dynamic) ? null : `${base}/${path}`, samples)
    })
}

/** adapter-node's build: its pages rendered per request get their CSS from the manifest the routes' renders write. */
async function renderNodeServer(builder: SvelteKitBuilderLike, written: Written, resolved: ResolvedOptions, logger: BuildLogger): Promise<void> {
  const base = basePath(builder.config)
  if (builder.prerendered.paths.length > 0) {
    logger.info(`critical CSS: ${builder.prerendered.paths.length} prerendered page${builder.prerendered.paths.length === 1 ? ' is' : 's are'} left as ${builder.prerendered.paths.length === 1 ? 'it is' : 'they are'}: ${NODE_ADAPTER} writes them apart from their stylesheets (pages rendered per request get critical CSS; adapter-static gives prerendered pages theirs).`)
  }
  const [serverDir] = [...written.server]
  const [clientDir] = [...written.client]
  if (written.server.size !== 1 || written.client.size !== 1) {
    // adapter-node 5 (kit 2) bundles kit's server output again with Rollup instead of copying it: untested, so refused in words.
    throw new ConfigurationError(
      `${PLUGIN_NAME}: ${NODE_ADAPTER} copied kit's server to ${[...written.server].join(', ') || 'no folder'} and wrote its client to ${[...written.client].join(', ') || 'no folder'}; the SvelteKit integration renders the server of ${NODE_ADAPTER} 6 (SvelteKit 3), one server with one client folder. Without it, use adapter-static and \`export const prerender = true\`.`,
    )
  }
  // A server whose bundle has no handle of ours would never read a manifest: nothing to render for.
  const edits = await manifestPathEdits(serverDir!)
  if (edits.size === 0) {
    logger.warn(
      `critical CSS: the server has no \`handle\` from unplugin-critical-css/sveltekit/handle, so its pages rendered per request are left as they are. Add \`export { handle } from 'unplugin-critical-css/sveltekit/handle'\` to src/hooks.server.js (with your own: \`sequence(criticalCss, handle)\` from @sveltejs/kit/hooks), and keep unplugin-critical-css in devDependencies, so the server bundles it.`,
    )
    return
  }
  await renderServerRoutes(resolved, {
    server: { command: process.execPath, args: [join(dirname(serverDir!), 'index.js')], cwd: process.cwd(), env: (port) => ({ PORT: String(port), HOST: '127.0.0.1' }) },
    routes: serverRoutes(builder.routes, base, resolved.samples),
    staticDir: clientDir!,
    base: `${base}/`,
    serverDir: serverDir!,
    root: process.cwd(),
    logger,
    writeWith: edits,
  })
}

/** Wraps a SvelteKit adapter so every page it prerendered, or its server renders (adapter-node), gets its critical CSS. */
export default function criticalCss<A extends SvelteKitAdapterLike<never>>(adapter: A, options: Options = {}): A {
  const inner = adapter as unknown as SvelteKitAdapterLike
  return {
    ...adapter,
    async adapt(builder: SvelteKitBuilderLike) {
      const logger: BuildLogger = { info: (message) => builder.log(message), warn: (message) => builder.log.warn(message) }
      if (inner.name === NODE_ADAPTER) {
        const resolved = resolveDirectoryOptions(options, { framework: { name: 'SvelteKit', base: basePath(builder.config) } })
        const renders = resolved.options.enabled !== false
        const written: Written = { client: new Set(), pages: new Set(), server: new Set(), compress: [] }
        await inner.adapt(watching(builder, written, renders ? serverLoaderAsset(resolved.options) : null))
        if (renders) await renderNodeServer(builder, written, resolved.options, logger)
        return
      }
      const written: Written = { client: new Set(), pages: new Set(), server: new Set(), compress: [] }
      await inner.adapt(watching(builder, written, null))
      try {
        await processDirectory(siteFolder(inner.name, written), options, { framework: { name: 'SvelteKit', base: basePath(builder.config) }, logger })
      } finally {
        // A failed run leaves the folder as the adapter would have: compressed as it asked.
        for (const directory of written.compress) await builder.compress(directory)
      }
    },
  }
}
