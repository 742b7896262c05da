// The plugin itself (`unplugin`, `inlineCriticalCss`) comes with the plugin and inliner
// issues; until then the root entry carries the shared types.
export type { Job, JobData, JobError, JobStatus, Plan, Usage, Viewport } from './api/contract.ts'
export type { CreateClientOptions, CriticalCssClient, RateLimitOption } from './api/client.ts'
