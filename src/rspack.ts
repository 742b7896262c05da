import { unplugin } from './index.ts'

/** The critical CSS plugin for rspack: `criticalCss(options?)`. */
export default unplugin.rspack
