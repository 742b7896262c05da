export { default } from './integrations/nuxt.ts'
