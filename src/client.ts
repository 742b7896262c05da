export { createClient, isJobData } from './api/client.ts'
export type {
  ClientEvent,
  CreateClientOptions,
  CriticalCssClient,
  GenerateOptions,
  GenerateResult,
  RateLimitOption,
  RequestOptions,
  WaitOptions,
} from './api/client.ts'
export type { CheckInterval } from './api/watcher.ts'
export {
  BadRequestError,
  CriticalCssError,
  InvalidResponseError,
  JobFailedError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  UnexpectedStatusError,
} from './api/errors.ts'
export { DEFAULT_VIEWPORTS, PLAN_MONTHLY_GENERATIONS, PLAN_REQUESTS_PER_MINUTE } from './api/contract.ts'
export type { Job, JobData, JobError, JobStatus, Plan, Usage, Viewport } from './api/contract.ts'
