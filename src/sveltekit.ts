export { default } from './integrations/sveltekit.ts'
