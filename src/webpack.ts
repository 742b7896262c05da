import type { WebpackPluginInstance } from 'webpack'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for webpack: `plugins: [new HtmlWebpackPlugin(), criticalCss(options)]`. */
const criticalCss: (options?: Options) => WebpackPluginInstance = unplugin.webpack
export default criticalCss
