export { createClient } from './client/client.ts'
export { isJobData } from './client/types.ts'
export type {
  ClientEvent,
  CreateClientOptions,
  CriticalCssClient,
  GenerateOptions,
  GenerateResult,
  RateLimitOption,
  RequestOptions,
  WaitOptions,
} from './client/types.ts'
export type { PaceLimit } from './client/rate-window.ts'
export type { CheckInterval } from './client/check-planner.ts'
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
  WrongAddressError,
} from './client/errors.ts'
export { DEFAULT_VIEWPORTS, PLAN_MONTHLY_GENERATIONS, PLAN_REQUESTS_PER_MINUTE } from './contract/api-contract.ts'
export type { Job, JobData, JobError, JobStatus, Plan, Selection, Usage, Viewport } from './contract/api-contract.ts'
