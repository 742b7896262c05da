import type { Plugin } from 'rolldown'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for Rolldown: `plugins: [criticalCss(options)]`. */
const criticalCss: (options?: Options) => Plugin = unplugin.rolldown
export default criticalCss
