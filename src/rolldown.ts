import { unplugin } from './index.ts'

/** The critical CSS plugin for rolldown: `criticalCss(options?)`. */
export default unplugin.rolldown
