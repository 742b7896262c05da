// The plugin itself (`unplugin`) comes with the plugin issue.
export { inlineCriticalCss } from './html/inline.ts'
export type { InlineEdit, InlineOptions, InlineResult, PreloadStrategy } from './html/inline.ts'
export type { Job, JobData, JobError, JobStatus, Plan, Usage, Viewport } from './api/contract.ts'
export type { CreateClientOptions, CriticalCssClient, RateLimitOption } from './api/client.ts'
