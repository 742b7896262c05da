export { default } from './integrations/astro.ts'
