import { unplugin } from './index.ts'

/** The critical CSS plugin for webpack: `criticalCss(options?)`. */
export default unplugin.webpack
