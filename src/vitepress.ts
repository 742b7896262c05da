export { default } from './integrations/vitepress.ts'
