import type { Plugin } from 'esbuild'
import type { Options } from './core/options.ts'
import { unplugin } from './index.ts'

/** The critical CSS plugin for esbuild: `plugins: [criticalCss(options)]`; pages are the outdir's HTML files. */
const criticalCss: (options?: Options) => Plugin = unplugin.esbuild
export default criticalCss
