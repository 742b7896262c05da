import type { Plugin } from 'vite'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for Vite: `plugins: [criticalCss(options)]`. */
const criticalCss: (options?: Options) => Plugin = unplugin.vite
export default criticalCss
