export { default } from './integrations/eleventy.ts'
