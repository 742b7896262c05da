/**
 * The wire contract of the Critical CSS Generation API (`shared/api-contract.md`), once.
 *
 * Wire objects are snake_case JSON; the TypeScript side is camelCase. Parsing ignores
 * unknown fields (forward compatible) and rejects a missing or malformed required field
 * with a message that names it. The client and the reference service both use this
 * module, so they cannot drift apart.
 */
import { z } from 'zod'

export const API_PATHS = {
  generate: '/api/critical-css/generate',
  jobs: '/api/critical-css/jobs',
  usage: '/api/critical-css/usage',
  jobData: (id: string): string => `/api/critical-css/job/${id}/data`,
} as const

export const JOB_STATUSES = ['queued', 'processing', 'done', 'failed'] as const
export type JobStatus = (typeof JOB_STATUSES)[number]

/** Failure codes the contract names; a service may add others, so `JobError.code` stays a string. */
export const JOB_FAILURE_CODES = ['fetch_failed', 'timeout', 'render_failed', 'blocked_url', 'internal'] as const

export const PLANS = ['free', 'pro', 'ent'] as const
export type Plan = (typeof PLANS)[number]

/** Requests per minute of each plan; `null` is unlimited. */
export const PLAN_REQUESTS_PER_MINUTE: Readonly<Record<Plan, number | null>> = { free: 5, pro: 60, ent: null }
/** Generations per calendar month (UTC) of each plan by default; `null` is unlimited. */
export const PLAN_MONTHLY_GENERATIONS: Readonly<Record<Plan, number | null>> = { free: 100, pro: 10_000, ent: null }

export const RATE_WINDOW_MS = 60_000
export const MAX_URL_LENGTH = 2048
export const MAX_BODY_BYTES = 16 * 1024
export const DEFAULT_VIEWPORTS: readonly Viewport[] = [
  { width: 1300, height: 900 },
  { width: 412, height: 915 },
]
export const VIEWPORT_LIMITS = { minCount: 1, maxCount: 4, minWidth: 240, maxWidth: 3840, minHeight: 240, maxHeight: 4320 } as const
export const JOB_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/
export const TOKEN_PATTERN = /^[\x21-\x7e]{16,256}$/
export const JOBS_LIMIT = { min: 1, max: 100, default: 20 } as const
/**
 * What a render does with another host than the page's own (an extension of generate,
 * `third_party`): `cut` it once the page's own resources are in and it still holds the page
 * past a short bound (the default), `wait` for it within the page's load bound, or `block`
 * it (never contacted: a build that is the same offline).
 */
export const THIRD_PARTY_POLICIES = ['cut', 'wait', 'block'] as const
export type ThirdPartyPolicy = (typeof THIRD_PARTY_POLICIES)[number]
export const DEFAULT_THIRD_PARTY: ThirdPartyPolicy = 'cut'

/**
 * Bounds of the user's say over the critical set (extensions of generate: `keep`, `drop`,
 * `states`): the plugin's options, the client and the service all check these, so a build
 * fails on what a service would refuse. 200 selectors of 300 characters are more than a
 * 16 KiB body holds: the body's own bound is the one a request meets first in that case.
 */
export const SELECTION_LIMITS = { maxSelectors: 200, minSelectorChars: 1, maxSelectorChars: 300, maxStates: 4 } as const
/**
 * A state `<html>` may be in before first paint (`states`): an attribute, `[data-dark]`, with a
 * value, bare `[data-theme=dark]` or quoted `[data-theme="dark"]`, or a class, `.dark`. Strict on
 * purpose: the engine sets exactly this on the page's root, and nothing else is a state.
 */
export const STATE_PATTERN = /^(?:\[([a-zA-Z_][\w-]{0,60})(?:=(?:([\w-]{1,60})|"([^"\\\x00-\x1f]{0,60})"))?\]|\.([a-zA-Z_][\w-]{0,60}))$/
/** What {@link STATE_PATTERN} allows, in words, for messages. */
export const STATE_RULE = 'must be an attribute selector ([data-theme=dark], [data-theme="dark"], [data-dark]) or a class (.dark)'

/** A state of `<html>` as the engine applies it: an attribute (a null value: present, empty) or a class. */
export type HtmlState = { kind: 'attribute'; name: string; value: string | null } | { kind: 'class'; name: string }

/** A state as {@link STATE_PATTERN} reads it, or null when it is not one. */
export function parseState(state: string): HtmlState | null {
  const match = STATE_PATTERN.exec(state)
  if (!match) return null
  const [, attribute, bare, quoted, className] = match
  if (className !== undefined) return { kind: 'class', name: className }
  return { kind: 'attribute', name: attribute!, value: bare ?? quoted ?? null }
}

/**
 * The user's say over what a render keeps (issue 49), on the wire `keep`, `drop`, `states`,
 * `font_faces` and `keyframes`. Every field absent is the render every service does by itself;
 * {@link normalizeSelection} makes that `null`, so the plain request stays the contract's own.
 */
export interface Selection {
  /** Selectors whose rules are kept as if their element were above the fold (media queries still apply). */
  keep?: string[]
  /** Selectors whose rules are never kept. */
  drop?: string[]
  /** Other states of `<html>` the page may be in at first paint ({@link STATE_PATTERN}); each is read too. */
  states?: string[]
  /** False: no `@font-face` in the CSS at all. Default true: those a kept rule uses. */
  fontFaces?: boolean
  /** False: no `@keyframes` in the CSS at all. Default true: those a kept rule uses. */
  keyframes?: boolean
}

/** `selection` with defaults left out (empty lists, `true` switches), or null when nothing is left: one form for keys, wires and stores. */
export function normalizeSelection(selection: Selection | null | undefined): Selection | null {
  if (!selection) return null
  const out: Selection = {}
  if (selection.keep && selection.keep.length > 0) out.keep = [...selection.keep]
  if (selection.drop && selection.drop.length > 0) out.drop = [...selection.drop]
  if (selection.states && selection.states.length > 0) out.states = [...selection.states]
  if (selection.fontFaces === false) out.fontFaces = false
  if (selection.keyframes === false) out.keyframes = false
  return Object.keys(out).length > 0 ? out : null
}

export interface Viewport {
  width: number
  height: number
}

/** What a render went without (an extension of job data, `network`): the page's CSS is still its own, read from what did load. */
export interface JobNetwork {
  /** Other hosts the render got no answer from, and why: cut when they held the page, unreachable, refused, or not contacted. */
  skippedHosts: { host: string; reason: string }[]
  /** Stylesheets the page asked for that the render could not read (absolute URLs): their rules are not in the CSS, so their links must stay as they are. */
  unreadStylesheets: string[]
}

/**
 * Where a render's first screen with only its critical CSS still differs from the full page,
 * after the engine's repairs (an extension of job data, `first_screen`): one per viewport that
 * differs. Measured in the render's browser, the CSS as the page would get it inlined.
 */
export interface FirstScreenDifference {
  viewport: Viewport
  /**
   * The state the first screen was read in: `prefers-color-scheme: dark`, one of the job's
   * `states` as it was given (`[data-theme=dark]`), or both (`[data-theme=dark] + prefers-color-scheme: dark`).
   * Absent: the page as it loads, light.
   */
  state?: string
  /** Share of the viewport's area that differs, 0–1. */
  share: number
  /** The outermost elements that differ (`footer.site`), the largest first. */
  elements: string[]
}

/** What a first-screen difference read with the dark colour scheme emulated names as its state. */
export const DARK_SCHEME_STATE = 'prefers-color-scheme: dark'

export interface JobError {
  /** One of {@link JOB_FAILURE_CODES}, or a code this client does not know yet. */
  code: string
  message: string
}

export interface Job {
  id: string
  url: string
  status: JobStatus
  /** True exactly when `status` is `done` and `css` is a string. */
  cssAvailable: boolean
  createdAt: string
  updatedAt: string
  error: JobError | null
}

export interface JobData extends Job {
  /** Ready to inline into the page at `url`; possibly empty. */
  css: string | null
  cssBytes: number | null
  viewports: Viewport[]
  durationMs: number | null
  /**
   * What the job did with other hosts than the page's own (the `third_party` extension).
   * Undefined from a service that does not say, or one that names a policy this client does
   * not know.
   */
  thirdParty?: ThirdPartyPolicy
  /**
   * What the render went without (the `network` extension): null until the job is done,
   * when its engine said nothing, and from a service that does not say.
   */
  network?: JobNetwork | null
  /**
   * Where the first screen with only the CSS still differs from the full page (the
   * `first_screen` extension): empty when it was checked and does not, null until the job is
   * done, when its engine did not check, and from a service that does not say.
   */
  firstScreen?: FirstScreenDifference[] | null
  /**
   * What made the CSS (the `engine` extension): `chromium` or `static` from the reference
   * service, null until the job is done, when its engine does not say, and from a service
   * that does not say.
   */
  engine?: string | null
}

export interface Usage {
  /** The contract names three plans; any other name is a broken answer, not a plan to guess the pace of. */
  plan: Plan
  subscription: { status: string; expiresAt: string | null }
  rateLimit: { requestsPerMinute: number | null; remaining: number | null; resetSeconds: number | null }
  quota: { period: string; generationsLimit: number | null; generationsUsed: number; resetsAt: string }
  stats: {
    jobsTotal: number
    jobsQueued: number
    jobsProcessing: number
    jobsDone: number
    jobsFailed: number
    cssBytesTotal: number
  }
}

export interface ErrorBody {
  code: string
  message: string
}

export interface GenerateRequest {
  url: string
  viewports?: Viewport[]
  /** What the render does with other hosts than the page's own; the service's default is {@link DEFAULT_THIRD_PARTY}. */
  thirdParty?: ThirdPartyPolicy
  /** What the render keeps or drops beyond what the first screen uses, and the states of `<html>` it reads too. */
  selection?: Selection
}

export interface JobsQuery {
  limit?: number
  status?: JobStatus
}

// ---------------------------------------------------------------------------------------
// Schemas of the wire format. `z.object` drops unknown keys, which is the forward
// compatibility the contract asks for.

const timestamp = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'must be an ISO 8601 timestamp')
const count = z.int().nonnegative()

const jobStatus = z.enum(JOB_STATUSES, {
  error: (issue) => `unknown job status ${JSON.stringify(issue.input)} (expected one of ${JOB_STATUSES.join(', ')})`,
})

export const viewportSchema = z.object({
  width: z.int().min(VIEWPORT_LIMITS.minWidth).max(VIEWPORT_LIMITS.maxWidth),
  height: z.int().min(VIEWPORT_LIMITS.minHeight).max(VIEWPORT_LIMITS.maxHeight),
})

const jobErrorWire = z.object({ code: z.string(), message: z.string() })

const jobNetworkWire = z.object({
  skipped_hosts: z.array(z.object({ host: z.string(), reason: z.string() })),
  unread_stylesheets: z.array(z.string()),
})

/** `first_screen` on the wire: the same names as {@link FirstScreenDifference}, so what keeps one (a cache) checks it with this too. */
export const firstScreenWire = z.array(
  z.object({
    viewport: z.object({ width: z.int().positive(), height: z.int().positive() }),
    state: z.string().optional(),
    share: z.number().min(0).max(1),
    elements: z.array(z.string()),
  }),
)

const jobWireShape = {
  id: z.string().regex(JOB_ID_PATTERN, 'must match [A-Za-z0-9_-]{1,64}'),
  url: z.string(),
  status: jobStatus,
  css_available: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
  error: jobErrorWire.nullable(),
}

const jobWire = z.object(jobWireShape)

const jobDataWire = z
  .object({
    ...jobWireShape,
    css: z.string().nullable(),
    css_bytes: count.nullable(),
    // Viewports a job was rendered at were validated when it was created; only the shape matters here.
    viewports: z.array(z.object({ width: z.int().positive(), height: z.int().positive() })),
    duration_ms: count.nullable(),
    // Extensions, absent from a service that does not know them. A policy this client does
    // not know (a newer service's) is read as unknown rather than failing the job: the CSS
    // does not depend on it. A malformed `network` does fail: a client keeps the links of
    // the stylesheets it names, so a wrong one would break the page.
    third_party: z.string().optional(),
    network: jobNetworkWire.nullable().optional(),
    // Only said to the user, never acted on: a malformed one is read as not said.
    first_screen: firstScreenWire.nullable().optional().catch(null),
    engine: z.string().max(64).nullable().optional().catch(null),
  })
  .superRefine((data, ctx) => {
    if (data.status === 'done' && typeof data.css !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['css'], message: 'must be a string when status is "done"' })
    }
  })

const usageWire = z.object({
  plan: z.enum(PLANS, { error: (issue) => `unknown plan ${JSON.stringify(issue.input)} (expected one of ${PLANS.join(', ')})` }),
  subscription: z.object({ status: z.string(), expires_at: timestamp.nullable() }),
  rate_limit: z.object({
    requests_per_minute: count.nullable(),
    remaining: count.nullable(),
    reset_seconds: count.nullable(),
  }),
  quota: z.object({
    period: z.string(),
    generations_limit: count.nullable(),
    generations_used: count,
    resets_at: timestamp,
  }),
  stats: z.object({
    jobs_total: count,
    jobs_queued: count,
    jobs_processing: count,
    jobs_done: count,
    jobs_failed: count,
    css_bytes_total: count,
  }),
})

/** Entries are parsed one by one (see parseJobsListEntries). */
const jobsListWire = z.object({ jobs: z.array(z.unknown()) })

const errorBodyWire = z.object({ error: z.object({ code: z.string(), message: z.string() }) })

type JobWire = z.infer<typeof jobWire>
type JobDataWire = z.infer<typeof jobDataWire>
type JobNetworkWire = z.infer<typeof jobNetworkWire>
type UsageWire = z.infer<typeof usageWire>

// ---------------------------------------------------------------------------------------
// Parsing: wire JSON → TypeScript objects.

/** A body that does not follow the contract; `field` is the dotted path of the first problem. */
export class ContractViolation extends Error {
  override name = 'ContractViolation'
  constructor(
    readonly what: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(field ? `${what}: field "${field}" ${problem}` : `${what}: ${problem}`)
  }
}

function pathToString(path: readonly PropertyKey[]): string {
  let out = ''
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`
    else out += out ? `.${String(key)}` : String(key)
  }
  return out
}

function isMissing(root: unknown, path: readonly PropertyKey[]): boolean {
  let value: unknown = root
  for (const key of path) {
    if (value === null || typeof value !== 'object') return true
    value = (value as Record<PropertyKey, unknown>)[key]
    if (value === undefined) return true
  }
  return false
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const result = schema.safeParse(input)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  if (!issue) throw new ContractViolation(what, '', 'is not valid')
  const field = pathToString(issue.path)
  if (issue.path.length > 0 && isMissing(input, issue.path)) throw new ContractViolation(what, field, 'is missing')
  if (issue.path.length === 0 && (input === null || typeof input !== 'object')) {
    throw new ContractViolation(what, '', `expected a JSON object, got ${input === null ? 'null' : typeof input}`)
  }
  throw new ContractViolation(what, field, issue.message.startsWith('unknown job status') ? `has an ${issue.message}` : issue.message)
}

function jobFromWire(wire: JobWire): Job {
  return {
    id: wire.id,
    url: wire.url,
    status: wire.status,
    cssAvailable: wire.css_available,
    createdAt: wire.created_at,
    updatedAt: wire.updated_at,
    error: wire.error ? { code: wire.error.code, message: wire.error.message } : null,
  }
}

function isThirdPartyPolicy(value: unknown): value is ThirdPartyPolicy {
  return (THIRD_PARTY_POLICIES as readonly unknown[]).includes(value)
}

function jobNetworkFromWire(wire: JobNetworkWire): JobNetwork {
  return {
    skippedHosts: wire.skipped_hosts.map(({ host, reason }) => ({ host, reason })),
    unreadStylesheets: [...wire.unread_stylesheets],
  }
}

/** A copy, in either direction: the wire's names are the type's. */
function copyFirstScreen(wire: readonly FirstScreenDifference[]): FirstScreenDifference[] {
  return wire.map(({ viewport, state, share, elements }) => ({ viewport: { width: viewport.width, height: viewport.height }, ...(state === undefined ? {} : { state }), share, elements: [...elements] }))
}

function jobDataFromWire(wire: JobDataWire): JobData {
  const data: JobData = {
    ...jobFromWire(wire),
    css: wire.css,
    cssBytes: wire.css_bytes,
    viewports: wire.viewports.map(({ width, height }) => ({ width, height })),
    durationMs: wire.duration_ms,
    network: wire.network ? jobNetworkFromWire(wire.network) : null,
    firstScreen: wire.first_screen ? copyFirstScreen(wire.first_screen) : null,
    engine: wire.engine ?? null,
  }
  if (isThirdPartyPolicy(wire.third_party)) data.thirdParty = wire.third_party
  return data
}

function usageFromWire(wire: UsageWire): Usage {
  return {
    plan: wire.plan,
    subscription: { status: wire.subscription.status, expiresAt: wire.subscription.expires_at },
    rateLimit: {
      requestsPerMinute: wire.rate_limit.requests_per_minute,
      remaining: wire.rate_limit.remaining,
      resetSeconds: wire.rate_limit.reset_seconds,
    },
    quota: {
      period: wire.quota.period,
      generationsLimit: wire.quota.generations_limit,
      generationsUsed: wire.quota.generations_used,
      resetsAt: wire.quota.resets_at,
    },
    stats: {
      jobsTotal: wire.stats.jobs_total,
      jobsQueued: wire.stats.jobs_queued,
      jobsProcessing: wire.stats.jobs_processing,
      jobsDone: wire.stats.jobs_done,
      jobsFailed: wire.stats.jobs_failed,
      cssBytesTotal: wire.stats.css_bytes_total,
    },
  }
}

export const parseJob = (input: unknown): Job => jobFromWire(parseWith(jobWire, input, 'job'))
export const parseJobData = (input: unknown): JobData => jobDataFromWire(parseWith(jobDataWire, input, 'job data'))
export const parseUsage = (input: unknown): Usage => usageFromWire(parseWith(usageWire, input, 'usage'))
/** A job list; the first entry that breaks the contract fails all of it. */
export function parseJobsList(input: unknown): Job[] {
  const { jobs, invalid } = parseJobsListEntries(input)
  if (invalid[0]) throw invalid[0].violation
  return jobs
}

export interface JobsListEntries {
  jobs: Job[]
  /** Entries that break the contract, with their id when it could be read. */
  invalid: { id: string | null; violation: ContractViolation }[]
}

/**
 * A job list read entry by entry: one job with an unknown status must fail that job's
 * wait, not every wait whose state came in the same answer.
 */
export function parseJobsListEntries(input: unknown): JobsListEntries {
  const list = parseWith(jobsListWire, input, 'job list')
  const result: JobsListEntries = { jobs: [], invalid: [] }
  list.jobs.forEach((entry, index) => {
    try {
      result.jobs.push(parseJob(entry))
    } catch (error) {
      if (!(error instanceof ContractViolation)) throw error
      const id = entry !== null && typeof entry === 'object' && typeof (entry as { id?: unknown }).id === 'string' ? (entry as { id: string }).id : null
      const field = error.field ? `jobs[${index}].${error.field}` : `jobs[${index}]`
      result.invalid.push({ id, violation: new ContractViolation('job list', field, error.problem) })
    }
  })
  return result
}
/** The `{ error: { code, message } }` body of an error answer, or null when the body is not one. */
export function parseErrorBody(input: unknown): ErrorBody | null {
  const result = errorBodyWire.safeParse(input)
  return result.success ? { code: result.data.error.code, message: result.data.error.message } : null
}

// ---------------------------------------------------------------------------------------
// Requests: validation shared by the client (fail before sending) and the service (400).

/** Why `url` cannot be sent to generate, or null when it can. */
export function checkPageUrl(url: unknown): string | null {
  if (typeof url !== 'string' || url.length === 0) return 'url is required'
  if (url.length > MAX_URL_LENGTH) return `url is longer than ${MAX_URL_LENGTH} characters`
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `url ${JSON.stringify(truncate(url))} is not an absolute URL`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `url ${JSON.stringify(truncate(url))} is not an http(s) URL`
  }
  return null
}

/** Why `viewports` cannot be sent to generate, or null when they can (undefined is allowed). */
export function checkViewports(viewports: unknown): string | null {
  if (viewports === undefined) return null
  if (!Array.isArray(viewports)) return 'viewports must be an array'
  const { minCount, maxCount, minWidth, maxWidth, minHeight, maxHeight } = VIEWPORT_LIMITS
  if (viewports.length < minCount || viewports.length > maxCount) {
    return `viewports must have ${minCount} to ${maxCount} entries, got ${viewports.length}`
  }
  for (const [index, viewport] of viewports.entries()) {
    if (!viewportSchema.safeParse(viewport).success) {
      return `viewports[${index}] must be { width: ${minWidth}–${maxWidth}, height: ${minHeight}–${maxHeight} } in whole pixels`
    }
  }
  return null
}

/** Why `third_party` cannot be sent to generate, or null when it can (undefined is allowed). */
export function checkThirdParty(thirdParty: unknown): string | null {
  if (thirdParty === undefined || isThirdPartyPolicy(thirdParty)) return null
  const got = typeof thirdParty === 'string' ? JSON.stringify(truncate(thirdParty)) : thirdParty === null ? 'null' : typeof thirdParty
  return `third_party must be one of ${THIRD_PARTY_POLICIES.join(', ')}, got ${got}`
}

/** The selection's fields as the wire names them: checks speak of these, and the client renames them to its own. */
export const SELECTION_WIRE_NAMES = { keep: 'keep', drop: 'drop', states: 'states', fontFaces: 'font_faces', keyframes: 'keyframes' } as const satisfies Record<keyof Selection, string>

function described(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(truncate(value)) : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value
}

function checkSelectors(name: string, list: unknown): string | null {
  if (list === undefined) return null
  const { maxSelectors, minSelectorChars, maxSelectorChars } = SELECTION_LIMITS
  if (!Array.isArray(list)) return `${name} must be an array of selectors, got ${described(list)}`
  if (list.length > maxSelectors) return `${name} must have at most ${maxSelectors} entries, got ${list.length}`
  for (const [index, entry] of list.entries()) {
    if (typeof entry !== 'string') return `${name}[${index}] must be a string (a selector), got ${described(entry)}`
    if (entry.length < minSelectorChars || entry.length > maxSelectorChars || entry.trim() === '') return `${name}[${index}] must be a selector of ${minSelectorChars}–${maxSelectorChars} characters, got ${entry.length}`
  }
  return null
}

function checkStates(name: string, list: unknown): string | null {
  if (list === undefined) return null
  if (!Array.isArray(list)) return `${name} must be an array of states, got ${described(list)}`
  if (list.length > SELECTION_LIMITS.maxStates) return `${name} must have at most ${SELECTION_LIMITS.maxStates} entries, got ${list.length}`
  for (const [index, entry] of list.entries()) {
    if (typeof entry !== 'string' || !STATE_PATTERN.test(entry)) return `${name}[${index}] ${STATE_RULE}, got ${described(entry)}`
  }
  return null
}

function checkSwitch(name: string, value: unknown): string | null {
  return value === undefined || typeof value === 'boolean' ? null : `${name} must be false (or true, the default), got ${described(value)}`
}

/**
 * Why a selection cannot be sent to generate, or null when it can (absent fields are allowed).
 * `fields` holds the values under the wire's names; `names` says them as the caller's surface
 * does (the client's camelCase), so the message names what the user wrote.
 */
export function checkSelection(fields: Record<keyof Selection, unknown>, names: Record<keyof Selection, string> = SELECTION_WIRE_NAMES): string | null {
  return (
    checkSelectors(names.keep, fields.keep) ??
    checkSelectors(names.drop, fields.drop) ??
    checkStates(names.states, fields.states) ??
    checkSwitch(names.fontFaces, fields.fontFaces) ??
    checkSwitch(names.keyframes, fields.keyframes)
  )
}

/** Parses a generate request body the way the service must; throws ContractViolation on a bad one. */
export function parseGenerateRequest(input: unknown): GenerateRequest {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ContractViolation('generate request', '', 'body must be a JSON object')
  }
  const body = input as Record<string, unknown>
  const urlProblem = checkPageUrl(body.url)
  if (urlProblem) throw new ContractViolation('generate request', 'url', urlProblem.replace(/^url /, ''))
  const viewportProblem = checkViewports(body.viewports)
  if (viewportProblem) throw new ContractViolation('generate request', 'viewports', viewportProblem.replace(/^viewports /, ''))
  const thirdPartyProblem = checkThirdParty(body.third_party)
  if (thirdPartyProblem) throw new ContractViolation('generate request', 'third_party', thirdPartyProblem.replace(/^third_party /, ''))
  const fields = { keep: body.keep, drop: body.drop, states: body.states, fontFaces: body.font_faces, keyframes: body.keyframes }
  const selectionProblem = checkSelection(fields)
  if (selectionProblem) {
    const [, field = '', problem = selectionProblem] = /^(\S+) (.*)$/s.exec(selectionProblem) ?? []
    throw new ContractViolation('generate request', field, problem)
  }
  const request: GenerateRequest = { url: body.url as string }
  if (body.viewports !== undefined) {
    request.viewports = (body.viewports as Viewport[]).map(({ width, height }) => ({ width, height }))
  }
  if (body.third_party !== undefined) request.thirdParty = body.third_party as ThirdPartyPolicy
  const selection = normalizeSelection(fields as Selection)
  if (selection) request.selection = selection
  return request
}

function truncate(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

// ---------------------------------------------------------------------------------------
// Serialising: TypeScript objects → wire JSON (the service answers with these; the client
// sends generate bodies made by generateRequestToWire).

/** A generate request body as the wire has it. */
export interface GenerateRequestWire {
  url: string
  viewports?: Viewport[]
  third_party?: ThirdPartyPolicy
  keep?: string[]
  drop?: string[]
  states?: string[]
  font_faces?: false
  keyframes?: false
}

/** The body of a generate: optional fields only when given, so a request without them is the contract's plain one. */
export function generateRequestToWire(request: GenerateRequest): GenerateRequestWire {
  const wire: GenerateRequestWire = { url: request.url }
  if (request.viewports !== undefined) wire.viewports = request.viewports.map(({ width, height }) => ({ width, height }))
  if (request.thirdParty !== undefined) wire.third_party = request.thirdParty
  // Only what differs from the default is sent: a request without a say is byte for byte the one before the extension.
  const selection = normalizeSelection(request.selection)
  if (selection?.keep) wire.keep = selection.keep
  if (selection?.drop) wire.drop = selection.drop
  if (selection?.states) wire.states = selection.states
  if (selection?.fontFaces === false) wire.font_faces = false
  if (selection?.keyframes === false) wire.keyframes = false
  return wire
}

export function jobToWire(job: Job): JobWire {
  return {
    id: job.id,
    url: job.url,
    status: job.status,
    css_available: job.cssAvailable,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    error: job.error ? { code: job.error.code, message: job.error.message } : null,
  }
}

export function jobDataToWire(data: JobData): JobDataWire {
  const wire: JobDataWire = {
    ...jobToWire(data),
    css: data.css,
    css_bytes: data.cssBytes,
    viewports: data.viewports.map(({ width, height }) => ({ width, height })),
    duration_ms: data.durationMs,
    network: data.network
      ? {
          skipped_hosts: data.network.skippedHosts.map(({ host, reason }) => ({ host, reason })),
          unread_stylesheets: [...data.network.unreadStylesheets],
        }
      : null,
    first_screen: data.firstScreen ? copyFirstScreen(data.firstScreen) : null,
    engine: data.engine ?? null,
  }
  // A job kept from before the field existed does not know its policy: it says nothing rather than guess.
  if (data.thirdParty !== undefined) wire.third_party = data.thirdParty
  return wire
}

export function usageToWire(usage: Usage): UsageWire {
  return {
    plan: usage.plan,
    subscription: { status: usage.subscription.status, expires_at: usage.subscription.expiresAt },
    rate_limit: {
      requests_per_minute: usage.rateLimit.requestsPerMinute,
      remaining: usage.rateLimit.remaining,
      reset_seconds: usage.rateLimit.resetSeconds,
    },
    quota: {
      period: usage.quota.period,
      generations_limit: usage.quota.generationsLimit,
      generations_used: usage.quota.generationsUsed,
      resets_at: usage.quota.resetsAt,
    },
    stats: {
      jobs_total: usage.stats.jobsTotal,
      jobs_queued: usage.stats.jobsQueued,
      jobs_processing: usage.stats.jobsProcessing,
      jobs_done: usage.stats.jobsDone,
      jobs_failed: usage.stats.jobsFailed,
      css_bytes_total: usage.stats.cssBytesTotal,
    },
  }
}

export function errorBodyToWire(error: ErrorBody): { error: ErrorBody } {
  return { error: { code: error.code, message: error.message } }
}
