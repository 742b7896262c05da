export { default } from './integrations/docusaurus.ts'
