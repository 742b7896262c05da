/**
 * SvelteKit: a wrapper around the adapter. Kit awaits the adapter's `adapt(builder)` once the
 * app is built and prerendered (its public Adapter API), so when the wrapped adapter's
 * `adapt` resolves, its pages are on disk; a Vite plugin's `closeBundle` has no such
 * guarantee (kit runs the adapter in a `closeBundle` of its own, in an order it does not
 * document). The folder comes from the adapter's own `writePrerendered` call, the base from
 * `paths.base`. Prerendered pages get critical CSS; pages rendered per request get none.
 *
 *   kit 3, vite.config.js:    sveltekit({ adapter: criticalCss(adapter(), options) })
 *   kit 2, svelte.config.js:  kit: { adapter: criticalCss(adapter(), options) }
 */
import { resolve } from 'node:path'
import { processDirectory } from '../core/directory.ts'
import { ConfigurationError, PLUGIN_NAME } from '../core/errors.ts'
import type { Options } from '../core/options.ts'
import type { BuildLogger } from '../core/report.ts'

/**
 * The part of `builder.config` this wrapper reads: kit 3 puts the options at the top (and
 * warns, `adapter_config_kit_deprecated`, when an adapter reads the `kit` it still offers);
 * kit 2 has them under `kit`.
 */
export type SvelteKitConfigLike = { paths: { base: string } } | { kit: { paths: { base: string } } }

/** The part of SvelteKit's `Builder` this wrapper uses (kit ≥ 2). */
export interface SvelteKitBuilderLike {
  /** Kit prints `log.info` only with a verbose log level, so progress goes to `log` itself. */
  log: { (message: string): void; warn(message: string): void }
  config: SvelteKitConfigLike
  writeClient(dest: string): string[]
  writePrerendered(dest: string): string[]
  /** Kit 2 resolves with nothing, kit 3 with the files it compressed. */
  compress(directory: string): Promise<unknown>
}

/** The part of SvelteKit's `Adapter` this wrapper uses: `adapt` and whatever else it has. */
export interface SvelteKitAdapterLike<B extends SvelteKitBuilderLike = SvelteKitBuilderLike> {
  name: string
  adapt(builder: B): unknown
}

/** Where the adapter wrote the client and the prerendered pages, and the folders it asked to compress. */
interface Written {
  client: Set<string>
  pages: Set<string>
  compress: string[]
}

/**
 * The builder the wrapped adapter sees: kit's own, noting the folders it writes to, with
 * compression held back until the pages have their critical CSS (a `.br`/`.gz` made
 * before would hold the page without it).
 */
function watching<B extends SvelteKitBuilderLike>(builder: B, written: Written): B {
  // A copy, not a prototype link: an adapter may spread or list the builder's members.
  return {
    ...builder,
    writeClient: (dest: string) => {
      written.client.add(resolve(dest))
      return builder.writeClient(dest)
    },
    writePrerendered: (dest: string) => {
      written.pages.add(resolve(dest))
      return builder.writePrerendered(dest)
    },
    compress: async (directory: string) => {
      written.compress.push(directory)
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

/** Wraps a SvelteKit adapter so every page it prerendered gets its critical CSS. */
export default function criticalCss<A extends SvelteKitAdapterLike<never>>(adapter: A, options: Options = {}): A {
  const inner = adapter as unknown as SvelteKitAdapterLike
  return {
    ...adapter,
    async adapt(builder: SvelteKitBuilderLike) {
      const written: Written = { client: new Set(), pages: new Set(), compress: [] }
      await inner.adapt(watching(builder, written))
      try {
        const logger: BuildLogger = { info: (message) => builder.log(message), warn: (message) => builder.log.warn(message) }
        await processDirectory(siteFolder(inner.name, written), options, { framework: { name: 'SvelteKit', base: basePath(builder.config) }, logger })
      } finally {
        // A failed run leaves the folder as the adapter would have: compressed as it asked.
        for (const directory of written.compress) await builder.compress(directory)
      }
    },
  }
}
