/**
 * Nuxt 3 and 4: a module that gives the pages Nitro prerendered (`nuxt generate`, or
 * routes with `prerender: true` in `nuxt build`) their critical CSS. It runs on Nitro's
 * `compiled`, the end of the production build: `prerender:done` comes earlier, before
 * Nitro has copied the client assets (`/_nuxt/*.css`) into the public folder, so a browser
 * could not load the pages' stylesheets yet. `nuxt dev` prerenders nothing and gets none.
 * A server build (`nuxt build`, the node-server preset) gets its pages' CSS at request time:
 * the module adds a Nitro plugin, and on `compiled` starts `.output/server/index.mjs`, renders
 * a sample of each page route and writes the manifest the plugin reads (core/server-routes.ts).
 *
 *   modules: [['unplugin-critical-css/nuxt', options]]   // or `criticalCss: options`
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { processResolvedDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import { resolveDirectoryOptions, type Options } from '../core/options.ts'
import { counted } from '../core/report.ts'
import { serverManifestModule, type ManifestModulePlugin } from '../core/server-manifest-module.ts'
import { renderServerRoutes, sampledRoute, serverLoaderAsset, type ServerRoute } from '../core/server-routes.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'
import { pagesWithInlinedStyles } from './nuxt-inline-styles.ts'

const CONFIG_KEY = 'criticalCss'

/** The part of a Nitro 2 instance this module uses. */
export interface NitroLike {
  options: {
    dev: boolean
    /** `nuxt generate`: every route is prerendered, and no server is built. */
    static?: boolean
    preset?: string
    plugins: string[]
    externals?: { inline?: (string | RegExp)[] } | false
    publicAssets: { dir: string; baseURL?: string; maxAge?: number }[]
    output: { publicDir: string; serverDir: string }
    compressPublicAssets?: boolean | { gzip?: boolean; brotli?: boolean }
  }
  logger?: FrameworkLogger
  hooks: {
    hook(name: 'prerender:done', handler: (result: { prerenderedRoutes?: readonly { route?: string; fileName?: string }[] }) => void): unknown
    hook(name: 'rollup:before', handler: (nitro: unknown, config: { plugins: unknown[] }) => void): unknown
    hook(name: 'compiled', handler: () => Promise<void>): unknown
  }
}

/** The part of a page Nuxt resolved (`pages:resolved`) this module reads. */
export interface NuxtPageLike {
  path: string
  children?: NuxtPageLike[]
}

/** The part of Nuxt's instance this module uses (Nuxt ≥ 3.0). */
export interface NuxtLike {
  options: {
    dev: boolean
    _prepare?: boolean
    /** `false`: a single-page app, whose server renders no page. */
    ssr?: boolean
    rootDir: string
    app: { baseURL: string }
    features?: { inlineStyles?: unknown }
    [CONFIG_KEY]?: Options | false
  }
  hook(name: 'nitro:init', handler: (nitro: NitroLike) => void): unknown
  hook(name: 'pages:resolved', handler: (pages: NuxtPageLike[]) => void): unknown
}

// A type, not an interface: Nuxt's `ModuleMeta` has an index signature only a type literal meets.
export type NuxtModuleMeta = {
  name: string
  configKey: typeof CONFIG_KEY
}

/** A Nuxt module as Nuxt calls one: `@nuxt/kit`'s `defineNuxtModule` makes the same shape. */
export interface NuxtModuleLike {
  (inlineOptions: Options | undefined, nuxt: NuxtLike): void
  meta: NuxtModuleMeta
  /** What Nuxt reads the module's name and config key from. */
  getMeta(): Promise<NuxtModuleMeta>
}

const meta: NuxtModuleMeta = { name: PLUGIN_NAME, configKey: CONFIG_KEY }

/** The Nitro plugin the server's pages get their CSS from (dist/nuxt-nitro-plugin.mjs, beside this module's file). */
const NITRO_PLUGIN = fileURLToPath(new URL('./nuxt-nitro-plugin.mjs', import.meta.url))
/** The Nitro preset whose server the build can start: `node .output/server/index.mjs`. */
const NODE_SERVER = 'node-server'

/**
 * Why a server build's pages rendered per request get no critical CSS, said once it is
 * built; null where they get theirs (or it renders none: `nuxt generate`, dev).
 */
function perRequestPagesLeft(nitro: { options: { dev?: boolean; static?: boolean; preset?: string } }, ssr: boolean | undefined): string | null {
  if (nitro.options.dev || nitro.options.static) return null
  if (ssr === false) return 'with `ssr: false` the server sends every page as one shell that the browser renders, so no page rendered per request gets critical CSS'
  if (nitro.options.preset !== NODE_SERVER) return `with Nitro's \`${nitro.options.preset ?? 'unknown'}\` preset, pages rendered per request get no critical CSS: the build renders them by starting the server it built, which the \`${NODE_SERVER}\` preset makes (\`nitro: { preset: '${NODE_SERVER}' }\`); prerendered pages got theirs`
  return null
}

/** Every page route with its full path (`/posts/:slug()`), children joined to their parents as vue-router does. */
function pagePaths(pages: readonly NuxtPageLike[], parent = ''): string[] {
  return pages.flatMap((page) => {
    const path = page.path.startsWith('/') ? page.path : `${parent.replace(/\/$/, '')}/${page.path}`
    return [path, ...pagePaths(page.children ?? [], path)]
  })
}

/** The page routes the server renders, each with the path it is rendered from: its own, or the `samples` option's. */
function serverRoutes(paths: readonly string[], prerendered: ReadonlySet<string>, base: string, samples: ReadonlyMap<string, readonly string[]>): ServerRoute[] {
  const prefix = base.replace(/\/$/, '')
  return [...new Set(paths)]
    .filter((path) => !prerendered.has(path))
    .map((path) => sampledRoute(path, path.includes(':') ? null : `${prefix}${path}`, samples))
}

const criticalCss: NuxtModuleLike = Object.assign(
  (inlineOptions: Options | undefined, nuxt: NuxtLike): void => {
    const fromConfig = nuxt.options[CONFIG_KEY]
    // `nuxi prepare` (often a postinstall script) builds nothing either.
    if (nuxt.options.dev || nuxt.options._prepare || fromConfig === false) return
    // A bad option fails `nuxt generate` now, not once the whole site is built.
    const resolved = resolveDirectoryOptions({ ...fromConfig, ...inlineOptions }, { framework: { name: 'Nuxt', base: nuxt.options.app.baseURL } })
    let pages: NuxtPageLike[] = []
    nuxt.hook('pages:resolved', (resolvedPages) => {
      pages = resolvedPages
    })
    nuxt.hook('nitro:init', (nitro) => {
      // A server that renders pages and that the build can start: its pages get their CSS per request.
      const left = perRequestPagesLeft(nitro, nuxt.options.ssr)
      const server = !nitro.options.dev && !nitro.options.static && left === null && resolved.options.enabled !== false
      if (server) {
        nitro.options.plugins.push(NITRO_PLUGIN)
        // Bundled, not left for the server to import from node_modules: it imports the manifest module.
        if (nitro.options.externals) nitro.options.externals.inline = [...(nitro.options.externals.inline ?? []), dirname(NITRO_PLUGIN)]
        // Nitro makes every chunk's `import.meta.url` the entry's (.output/server/index.mjs).
        const manifestModule: ManifestModulePlugin = serverManifestModule('entry')
        nitro.hooks.hook('rollup:before', (_nitro, config) => {
          config.plugins.push(manifestModule)
        })
        // Nitro serves only the public files it indexed as it built: the loader must be among them. No page names it unless the manifest is written.
        const loader = serverLoaderAsset(resolved.options)
        if (loader !== null) {
          // Not below .nuxt, which Nuxt empties as it builds.
          const dir = join(nuxt.options.rootDir, 'node_modules', '.cache', PLUGIN_NAME, 'nuxt-public')
          mkdirSync(dir, { recursive: true })
          writeFileSync(join(dir, loader.file), loader.text)
          nitro.options.publicAssets.push({ dir, baseURL: '/', maxAge: 0 })
        }
      }
      let prerendered: readonly { route?: string; fileName?: string }[] = []
      nitro.hooks.hook('prerender:done', ({ prerenderedRoutes }) => {
        prerendered = prerenderedRoutes ?? []
      })
      nitro.hooks.hook('compiled', async () => {
        if (nitro.options.dev || resolved.options.enabled === false) return
        const log = buildLogger(nitro.logger)
        const folder = nitro.options.output.publicDir
        // A server build that prerendered nothing has no pages in its public folder.
        if (prerendered.length > 0) {
          // Only with `features.inlineStyles` on can Nuxt inline; whether it did, the pages say.
          if (nuxt.options.features?.inlineStyles) {
            const files = prerendered.flatMap(({ fileName }) => (fileName?.endsWith('.html') ? [fileName] : []))
            const inlined = await pagesWithInlinedStyles(folder, files, nuxt.options.app.baseURL)
            if (inlined > 0) {
              log.info(
                `critical CSS: Nuxt inlined styles it did not link into ${counted(inlined, 'page')} (\`features.inlineStyles\`: Nuxt 3 inlines every style by default). They paint without a request, but every page carries them in full, and critical CSS cannot trim them; set \`features: { inlineStyles: false }\` in nuxt.config to have them linked, and only what each page shows first inlined.`,
              )
            }
          }
          const { written } = await processResolvedDirectory(folder, resolved, { root: nuxt.options.rootDir, logger: log, projectSheets: true })
          if (nitro.options.compressPublicAssets) await recompress(folder, written)
        }
        if (left !== null) log.info(`critical CSS: ${left}.`)
        if (!server) return
        const routes = serverRoutes(pagePaths(pages), new Set(prerendered.flatMap(({ route }) => (route === undefined ? [] : [route]))), nuxt.options.app.baseURL, resolved.options.samples)
        await renderServerRoutes(resolved.options, {
          server: { command: process.execPath, args: [join(nitro.options.output.serverDir, 'index.mjs')], cwd: nuxt.options.rootDir, env: (port) => ({ NITRO_PORT: String(port), NITRO_HOST: '127.0.0.1' }) },
          routes,
          staticDir: folder,
          base: nuxt.options.app.baseURL,
          serverDir: nitro.options.output.serverDir,
          root: nuxt.options.rootDir,
          logger: log,
        })
      })
    })
  },
  { meta, getMeta: () => Promise.resolve(meta) },
)

export default criticalCss

const gzipAsync = promisify(gzip)
const brotliAsync = promisify(brotliCompress)

/**
 * `compressPublicAssets` made `.gz` and `.br` copies of the pages before they got their
 * critical CSS; a host serving those would send the old page. Made again, as Nitro makes them.
 */
async function recompress(folder: string, written: readonly string[]): Promise<void> {
  for (const file of written) {
    const path = join(folder, file)
    const gz = `${path}.gz`
    const br = `${path}.br`
    if (!existsSync(gz) && !existsSync(br)) continue
    const html = await readFile(path)
    if (existsSync(gz)) await writeFile(gz, await gzipAsync(html, { level: constants.Z_BEST_COMPRESSION }))
    if (existsSync(br)) {
      const params = { [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: html.length }
      await writeFile(br, await brotliAsync(html, { params }))
    }
  }
}
