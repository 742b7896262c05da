import { describe, expect, it } from 'vitest'
import {
  ContractViolation,
  DEFAULT_THIRD_PARTY,
  THIRD_PARTY_POLICIES,
  checkPageUrl,
  checkThirdParty,
  checkViewports,
  parseState,
  generateRequestToWire,
  jobDataToWire,
  parseErrorBody,
  parseGenerateRequest,
  parseJob,
  parseJobData,
  parseJobsList,
  parseUsage,
  usageToWire,
} from '../../src/contract/api-contract.ts'

const job = {
  id: 'j_7fK2c9QpZx',
  url: 'https://example.com/pricing',
  status: 'queued',
  css_available: false,
  created_at: '2026-11-21T10:00:00.000Z',
  updated_at: '2026-11-21T10:00:00.000Z',
  error: null,
}
const jobData = {
  ...job,
  status: 'done',
  css_available: true,
  css: 'body{margin:0}',
  css_bytes: 14,
  viewports: [{ width: 1300, height: 900 }],
  duration_ms: 812,
}
const usage = {
  plan: 'free',
  subscription: { status: 'active', expires_at: '2027-01-01T00:00:00.000Z' },
  rate_limit: { requests_per_minute: 5, remaining: 3, reset_seconds: 41 },
  quota: { period: 'month', generations_limit: 100, generations_used: 12, resets_at: '2026-12-01T00:00:00.000Z' },
  stats: { jobs_total: 12, jobs_queued: 0, jobs_processing: 1, jobs_done: 10, jobs_failed: 1, css_bytes_total: 183204 },
}

function violation(run: () => unknown): ContractViolation {
  try {
    run()
  } catch (error) {
    if (error instanceof ContractViolation) return error
    throw error
  }
  throw new Error('expected a ContractViolation')
}

describe('parsing answers', () => {
  it('maps a job from snake_case to camelCase', () => {
    expect(parseJob(job)).toEqual({
      id: 'j_7fK2c9QpZx',
      url: 'https://example.com/pricing',
      status: 'queued',
      cssAvailable: false,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
      error: null,
    })
  })

  it('maps job data, including an empty css for a page without styles above the fold', () => {
    const parsed = parseJobData({ ...jobData, css: '', css_bytes: 0 })
    expect(parsed).toMatchObject({ status: 'done', cssAvailable: true, css: '', cssBytes: 0, durationMs: 812, viewports: [{ width: 1300, height: 900 }] })
  })

  it('ignores fields it does not know, at every level', () => {
    const parsed = parseJobData({ ...jobData, priority: 3, viewports: [{ width: 1300, height: 900, dpr: 2 }], error: null })
    expect(parsed).not.toHaveProperty('priority')
    expect(parsed.viewports).toEqual([{ width: 1300, height: 900 }])
    expect(parseUsage({ ...usage, region: 'eu', stats: { ...usage.stats, p95_ms: 900 } }).stats).not.toHaveProperty('p95Ms')
  })

  it.each([
    ['css_available', parseJob, job],
    ['created_at', parseJob, job],
    ['css', parseJobData, jobData],
    ['duration_ms', parseJobData, jobData],
  ] as const)('names the missing field %s', (field, parse, input) => {
    const { [field]: _dropped, ...rest } = input as Record<string, unknown>
    const error = violation(() => parse(rest))
    expect(error.field).toBe(field)
    expect(error.message).toContain(`"${field}" is missing`)
  })

  it('names a missing nested field with its path', () => {
    const error = violation(() => parseUsage({ ...usage, quota: { ...usage.quota, resets_at: undefined } }))
    expect(error.message).toContain('"quota.resets_at" is missing')
    const inList = violation(() => parseJobsList({ jobs: [job, { ...job, id: undefined }] }))
    expect(inList.message).toContain('"jobs[1].id" is missing')
  })

  it('treats an unknown status as an error that names the value', () => {
    const error = violation(() => parseJob({ ...job, status: 'paused' }))
    expect(error.field).toBe('status')
    expect(error.message).toContain('"paused"')
  })

  it('rejects done job data without css', () => {
    expect(violation(() => parseJobData({ ...jobData, css: null })).field).toBe('css')
  })

  it('rejects a field of the wrong type and a body that is not an object', () => {
    expect(violation(() => parseJob({ ...job, css_available: 'yes' })).field).toBe('css_available')
    expect(violation(() => parseJob('nope')).message).toContain('expected a JSON object')
    expect(violation(() => parseJob({ ...job, created_at: 'yesterday' })).field).toBe('created_at')
  })

  it('reads usage of the unlimited plan with its nulls', () => {
    const ent = parseUsage({
      ...usage,
      plan: 'ent',
      subscription: { status: 'active', expires_at: null },
      rate_limit: { requests_per_minute: null, remaining: null, reset_seconds: null },
      quota: { ...usage.quota, generations_limit: null },
    })
    expect(ent.rateLimit).toEqual({ requestsPerMinute: null, remaining: null, resetSeconds: null })
    expect(ent.quota.generationsLimit).toBeNull()
    expect(ent.subscription.expiresAt).toBeNull()
  })

  it('reads error bodies, and nothing else as one', () => {
    expect(parseErrorBody({ error: { code: 'rate_limited', message: 'slow down' } })).toEqual({ code: 'rate_limited', message: 'slow down' })
    expect(parseErrorBody({ message: 'nope' })).toBeNull()
    expect(parseErrorBody('<html>')).toBeNull()
  })

  it('writes back exactly what it read', () => {
    expect(jobDataToWire(parseJobData(jobData))).toEqual({ ...jobData, network: null, first_screen: null, engine: null })
    expect(usageToWire(parseUsage(usage))).toEqual(usage)
  })
})

describe('third_party, network, first_screen and engine in job data (extensions)', () => {
  const network = {
    skipped_hosts: [{ host: 'fonts.example.net', reason: 'cut: still loading after the page' }],
    unread_stylesheets: ['https://fonts.example.net/css2?family=Inter'],
  }
  const firstScreen = [{ viewport: { width: 412, height: 915 }, share: 0.008, elements: ['table', 'footer.site'] }]
  const extended = { ...jobData, third_party: 'block', network, first_screen: firstScreen, engine: 'static' }

  it('maps them to camelCase and writes back exactly what it read', () => {
    const parsed = parseJobData(extended)
    expect(parsed.thirdParty).toBe('block')
    expect(parsed.network).toEqual({
      skippedHosts: [{ host: 'fonts.example.net', reason: 'cut: still loading after the page' }],
      unreadStylesheets: ['https://fonts.example.net/css2?family=Inter'],
    })
    expect(parsed.firstScreen).toEqual(firstScreen)
    expect(parsed.engine).toBe('static')
    expect(jobDataToWire(parsed)).toEqual(extended)
    const pending = { ...job, css: null, css_bytes: null, viewports: [{ width: 1300, height: 900 }], duration_ms: null, third_party: 'wait', network: null, first_screen: null, engine: null }
    expect(jobDataToWire(parseJobData(pending))).toEqual(pending)
  })

  it('reads the answer of a service that does not send them: no policy, network null', () => {
    const parsed = parseJobData(jobData)
    expect(parsed.thirdParty).toBeUndefined()
    expect(parsed.network).toBeNull()
    expect(parsed.firstScreen).toBeNull()
    expect(jobDataToWire(parsed)).not.toHaveProperty('third_party')
  })

  it("reads a policy it does not know as not known, rather than failing the job over it", () => {
    const parsed = parseJobData({ ...extended, third_party: 'defer' })
    expect(parsed.thirdParty).toBeUndefined()
    expect(parsed.css).toBe(jobData.css)
  })

  it('rejects a malformed network, naming the field: its stylesheets decide which links stay', () => {
    expect(violation(() => parseJobData({ ...extended, network: { skipped_hosts: [] } })).field).toBe('network.unread_stylesheets')
    expect(violation(() => parseJobData({ ...extended, network: { ...network, skipped_hosts: [{ host: 1, reason: 'x' }] } })).field).toBe('network.skipped_hosts[0].host')
    expect(violation(() => parseJobData({ ...extended, network: 'none' })).field).toBe('network')
  })

  it('reads a malformed first_screen as not said: it is only told to the user, and the CSS does not depend on it', () => {
    for (const broken of ['none', [{ viewport: { width: 412, height: 915 }, share: 2, elements: [] }], [{ share: 0.1 }]]) {
      const parsed = parseJobData({ ...extended, first_screen: broken })
      expect(parsed.firstScreen).toBeNull()
      expect(parsed.css).toBe(jobData.css)
    }
  })

  it('reads a malformed engine as not said: it is only reported', () => {
    for (const broken of [7, { name: 'static' }, 'x'.repeat(65)]) {
      const parsed = parseJobData({ ...extended, engine: broken })
      expect(parsed.engine).toBeNull()
      expect(parsed.css).toBe(jobData.css)
    }
  })

  it('leaves them out of the job object, as it leaves out css', () => {
    expect(parseJob(extended)).not.toHaveProperty('thirdParty')
    expect(parseJob(extended)).not.toHaveProperty('network')
    expect(parseJob(extended)).not.toHaveProperty('firstScreen')
    expect(parseJob(extended)).not.toHaveProperty('engine')
  })
})

describe('checking requests', () => {
  it.each([
    ['https://example.com/', null],
    ['http://127.0.0.1:8080/a?b=c', null],
    ['/pricing', 'is not an absolute URL'],
    ['ftp://example.com/', 'is not an http(s) URL'],
    ['javascript:alert(1)', 'is not an http(s) URL'],
    ['', 'url is required'],
  ])('url %s', (url, problem) => {
    const found = checkPageUrl(url)
    if (problem === null) expect(found).toBeNull()
    else expect(found).toContain(problem)
  })

  it('url longer than 2048 characters', () => {
    expect(checkPageUrl(`https://example.com/${'a'.repeat(2048)}`)).toContain('longer than 2048')
  })

  it.each([
    [undefined, null],
    [[{ width: 1300, height: 900 }], null],
    [[], '1 to 4 entries'],
    [new Array(5).fill({ width: 400, height: 400 }), '1 to 4 entries'],
    [[{ width: 239, height: 900 }], 'viewports[0]'],
    [[{ width: 400, height: 4321 }], 'viewports[0]'],
    [[{ width: 400.5, height: 900 }], 'viewports[0]'],
    ['wide', 'must be an array'],
  ])('viewports %j', (viewports, problem) => {
    const found = checkViewports(viewports)
    if (problem === null) expect(found).toBeNull()
    else expect(found).toContain(problem)
  })

  it('parses a generate body the way the service must', () => {
    expect(parseGenerateRequest({ url: 'https://example.com/', extra: 1 })).toEqual({ url: 'https://example.com/' })
    expect(violation(() => parseGenerateRequest({ viewports: [] })).field).toBe('url')
    expect(violation(() => parseGenerateRequest({ url: 'https://e.com/', viewports: [] })).field).toBe('viewports')
    expect(violation(() => parseGenerateRequest([1])).message).toContain('JSON object')
  })

  it.each([
    [undefined, null],
    ['cut', null],
    ['wait', null],
    ['block', null],
    ['fast', 'got "fast"'],
    ['Block', 'got "Block"'],
    [null, 'got null'],
    [2, 'got number'],
  ])('third_party %j', (thirdParty, problem) => {
    const found = checkThirdParty(thirdParty)
    if (problem === null) expect(found).toBeNull()
    else expect(found).toBe(`third_party must be one of cut, wait, block, ${problem}`)
  })

  it('parses third_party in a generate body, and names the field and the values when it is bad', () => {
    expect(THIRD_PARTY_POLICIES).toContain(DEFAULT_THIRD_PARTY)
    expect(parseGenerateRequest({ url: 'https://e.com/', third_party: 'block' })).toEqual({ url: 'https://e.com/', thirdParty: 'block' })
    // Absent stays absent: the default is the service's to apply.
    expect(parseGenerateRequest({ url: 'https://e.com/' })).not.toHaveProperty('thirdParty')
    const error = violation(() => parseGenerateRequest({ url: 'https://e.com/', third_party: 'fast' }))
    expect(error.field).toBe('third_party')
    expect(error.message).toBe('generate request: field "third_party" must be one of cut, wait, block, got "fast"')
  })

  it('writes a generate body with the optional fields only when given, and reads it back as sent', () => {
    expect(generateRequestToWire({ url: 'https://e.com/' })).toEqual({ url: 'https://e.com/' })
    const full = { url: 'https://e.com/', viewports: [{ width: 800, height: 600 }], thirdParty: 'wait' as const }
    const wire = generateRequestToWire(full)
    expect(wire).toEqual({ url: 'https://e.com/', viewports: [{ width: 800, height: 600 }], third_party: 'wait' })
    expect(parseGenerateRequest(JSON.parse(JSON.stringify(wire)))).toEqual(full)
  })
})

describe('keep, drop, states, font_faces and keyframes in a generate body (issue 49)', () => {
  it('reads them, leaves the defaults out, and writes back only what differs', () => {
    const body = { url: 'https://e.com/', keep: ['.menu.is-open'], drop: ['.cookie-banner'], states: ['[data-theme=dark]'], font_faces: false, keyframes: false }
    const parsed = parseGenerateRequest(body)
    expect(parsed).toEqual({ url: 'https://e.com/', selection: { keep: ['.menu.is-open'], drop: ['.cookie-banner'], states: ['[data-theme=dark]'], fontFaces: false, keyframes: false } })
    expect(generateRequestToWire(parsed)).toEqual(body)
    expect(parseGenerateRequest({ url: 'https://e.com/', keep: [], font_faces: true })).toEqual({ url: 'https://e.com/' })
    expect(generateRequestToWire({ url: 'https://e.com/', selection: { keep: [], keyframes: true } })).toEqual({ url: 'https://e.com/' })
  })

  it.each([
    ['keep', { keep: '.a' }, 'must be an array of selectors, got ".a"'],
    ['keep[1]', { keep: ['.a', 3] }, 'must be a string (a selector), got number'],
    ['drop[0]', { drop: [''] }, 'must be a selector of 1–300 characters, got 0'],
    ['drop', { drop: Array.from({ length: 201 }, () => '.a') }, 'must have at most 200 entries, got 201'],
    ['states', { states: ['.a', '.b', '.c', '.d', '.e'] }, 'must have at most 4 entries, got 5'],
    ['states[0]', { states: ['html[data-theme=dark]'] }, 'must be an attribute selector ([data-theme=dark], [data-theme="dark"], [data-dark]) or a class (.dark), got "html[data-theme=dark]"'],
    ['font_faces', { font_faces: 'no' }, 'must be false (or true, the default), got "no"'],
  ])('a bad %s is a violation naming the field', (field, fields, problem) => {
    const error = violation(() => parseGenerateRequest({ url: 'https://e.com/', ...fields }))
    expect(error.field).toBe(field)
    expect(error.message).toBe(`generate request: field "${field}" ${problem}`)
  })

  it('reads a state as the engine applies it', () => {
    expect(parseState('[data-theme=dark]')).toEqual({ kind: 'attribute', name: 'data-theme', value: 'dark' })
    expect(parseState('[data-theme="dark blue"]')).toEqual({ kind: 'attribute', name: 'data-theme', value: 'dark blue' })
    expect(parseState('[data-dark]')).toEqual({ kind: 'attribute', name: 'data-dark', value: null })
    expect(parseState('.dark')).toEqual({ kind: 'class', name: 'dark' })
    expect(parseState('[data-theme="a\\"]')).toBeNull()
  })
})
