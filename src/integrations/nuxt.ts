/**
 * Nuxt 3 and 4: a module that gives the pages Nitro prerendered (`nuxt generate`, or
 * routes with `prerender: true` in `nuxt build`) their critical CSS. It runs on Nitro's
 * `compiled`, the end of the production build: `prerender:done` comes earlier, before
 * Nitro has copied the client assets (`/_nuxt/*.css`) into the public folder, so a browser
 * could not load the pages' stylesheets yet. `nuxt dev` prerenders nothing and gets none.
 *
 *   modules: [['unplugin-critical-css/nuxt', options]]   // or `criticalCss: options`
 */
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { processResolvedDirectory } from '../core/directory.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import { resolveDirectoryOptions, type Options } from '../core/options.ts'
import { counted } from '../core/report.ts'
import { buildLogger, type FrameworkLogger } from './log.ts'
import { pagesWithInlinedStyles } from './nuxt-inline-styles.ts'

const CONFIG_KEY = 'criticalCss'

/** The part of a Nitro 2 instance this module uses. */
export interface NitroLike {
  options: {
    dev: boolean
    output: { publicDir: string }
    compressPublicAssets?: boolean | { gzip?: boolean; brotli?: boolean }
  }
  logger?: FrameworkLogger
  hooks: {
    hook(name: 'prerender:done', handler: (result: { prerenderedRoutes?: readonly { fileName?: string }[] }) => void): unknown
    hook(name: 'compiled', handler: () => Promise<void>): unknown
  }
}

/** The part of Nuxt's instance this module uses (Nuxt ≥ 3.0). */
export interface NuxtLike {
  options: {
    dev: boolean
    _prepare?: boolean
    rootDir: string
    app: { baseURL: string }
    features?: { inlineStyles?: unknown }
    [CONFIG_KEY]?: Options | false
  }
  hook(name: 'nitro:init', handler: (nitro: NitroLike) => void): unknown
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

const criticalCss: NuxtModuleLike = Object.assign(
  (inlineOptions: Options | undefined, nuxt: NuxtLike): void => {
    const fromConfig = nuxt.options[CONFIG_KEY]
    // `nuxi prepare` (often a postinstall script) builds nothing either.
    if (nuxt.options.dev || nuxt.options._prepare || fromConfig === false) return
    // A bad option fails `nuxt generate` now, not once the whole site is built.
    const resolved = resolveDirectoryOptions({ ...fromConfig, ...inlineOptions }, { framework: { name: 'Nuxt', base: nuxt.options.app.baseURL } })
    nuxt.hook('nitro:init', (nitro) => {
      let prerendered: readonly { fileName?: string }[] = []
      nitro.hooks.hook('prerender:done', ({ prerenderedRoutes }) => {
        prerendered = prerenderedRoutes ?? []
      })
      nitro.hooks.hook('compiled', async () => {
        // A server build that prerendered nothing has no pages in its public folder.
        if (nitro.options.dev || prerendered.length === 0 || resolved.options.enabled === false) return
        const log = buildLogger(nitro.logger)
        const folder = nitro.options.output.publicDir
        // Only with `features.inlineStyles` on can Nuxt inline; whether it did, the pages say.
        if (nuxt.options.features?.inlineStyles) {
          const pages = prerendered.flatMap(({ fileName }) => (fileName?.endsWith('.html') ? [fileName] : []))
          const inlined = await pagesWithInlinedStyles(folder, pages, nuxt.options.app.baseURL)
          if (inlined > 0) {
            log.info(
              `critical CSS: Nuxt inlined styles it did not link into ${counted(inlined, 'page')} (\`features.inlineStyles\`: Nuxt 3 inlines every style by default). They paint without a request, but every page carries them in full, and critical CSS cannot trim them; set \`features: { inlineStyles: false }\` in nuxt.config to have them linked, and only what each page shows first inlined.`,
            )
          }
        }
        const { written } = await processResolvedDirectory(folder, resolved, { root: nuxt.options.rootDir, logger: log, projectSheets: true })
        if (nitro.options.compressPublicAssets) await recompress(folder, written)
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
