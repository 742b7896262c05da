import type { RspackPluginInstance } from '@rspack/core'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for Rspack: `plugins: [new rspack.HtmlRspackPlugin(), criticalCss(options)]`. */
const criticalCss: (options?: Options) => RspackPluginInstance = unplugin.rspack
export default criticalCss
