import { unplugin } from './index.ts'

/** The critical CSS plugin for vite: `criticalCss(options?)`. */
export default unplugin.vite
