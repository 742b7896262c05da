import { unplugin } from './index.ts'

/** The critical CSS plugin for esbuild: `criticalCss(options?)`. */
export default unplugin.esbuild
