import { unplugin } from './index.ts'

/** The critical CSS plugin for rollup: `criticalCss(options?)`. */
export default unplugin.rollup
