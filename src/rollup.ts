import type { Plugin } from 'rollup'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for Rollup: `plugins: [html(), criticalCss(options)]`. */
const criticalCss: (options?: Options) => Plugin = unplugin.rollup
export default criticalCss
