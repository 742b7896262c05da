/**
 * The reference service through HTTP, with raw requests and with the project's own
 * client: the contract's error table, rate limits per plan on a short window, quota and
 * expiry, token isolation, idempotency, the network policy, the queue and shutdown.
 */
import { createServer, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client.ts'
import { parseJobData } from '../../src/contract/api-contract.ts'
import { createNetworkPolicy } from '../../src/service/network.ts'
import { startService, type ServiceOptions, type RunningService } from '../../src/service/server.ts'
import { createStubEngine, stubCss, type StubBehaviour, type StubEngine } from '../fixtures/stub-engine.ts'

const FREE = 'tok_service_free_0123456789'
const PRO = 'tok_service_pro_0123456789a'
const ENT = 'tok_service_ent_0123456789a'
const OTHER = 'tok_service_other_012345678'
const PAGE = 'https://example.com/pricing'
const GENERATE = '/api/critical-css/generate'

const running: RunningService[] = []
afterEach(async () => {
  for (const service of running.splice(0)) await service.close()
})

interface Setup {
  service: RunningService
  engine: StubEngine
  lines: Record<string, unknown>[]
}

async function setup(options: Partial<ServiceOptions> = {}, behaviour?: (url: string) => StubBehaviour): Promise<Setup> {
  const engine = createStubEngine(behaviour)
  const lines: Record<string, unknown>[] = []
  const service = await startService({
    tokens: [
      { token: FREE, plan: 'free' },
      { token: PRO, plan: 'pro' },
      { token: ENT, plan: 'ent' },
      { token: OTHER, plan: 'ent' },
    ],
    engine,
    resolve: async () => ['93.184.216.34'],
    log: (line) => lines.push(line),
    // Jobs left running at the end of a test go back to the queue quickly.
    shutdownGraceMs: 500,
    // service-on-redis.test.ts runs this suite again with the state on Redis.
    ...(process.env.UCC_TEST_REDIS_URL ? { redisUrl: process.env.UCC_TEST_REDIS_URL } : {}),
    ...options,
  })
  running.push(service)
  return { service, engine, lines }
}

async function call(service: RunningService, path: string, init: { method?: string; token?: string | null; body?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers }
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? ENT}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(service.url + path, { method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'), headers, body: init.body })
  const text = await response.text()
  let json: unknown = null
  try {
    json = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, json: json as Record<string, any>, text }
}

const generateBody = (url = PAGE, extra: Record<string, unknown> = {}) => JSON.stringify({ url, ...extra })

describe('the error table', () => {
  it('answers every error with the contract body', async () => {
    const { service } = await setup()
    const cases: [Promise<{ status: number; json: Record<string, any>; headers: Headers }>, number, string][] = [
      [call(service, GENERATE, { body: '{not json' }), 400, 'invalid_request'],
      [call(service, GENERATE, { body: generateBody('ftp://example.com/') }), 400, 'invalid_request'],
      [call(service, GENERATE, { body: generateBody(PAGE, { viewports: [{ width: 10, height: 10 }] }) }), 400, 'invalid_request'],
      [call(service, '/api/critical-css/jobs?limit=0'), 400, 'invalid_request'],
      [call(service, '/api/critical-css/jobs?status=running'), 400, 'invalid_request'],
      [call(service, '/api/critical-css/usage', { token: null }), 401, 'unauthorized'],
      [call(service, '/api/critical-css/usage', { token: 'tok_unknown_000000000000' }), 401, 'unauthorized'],
      [call(service, '/api/critical-css/usage', { headers: { authorization: 'Basic abc' }, token: null }), 401, 'unauthorized'],
      [call(service, '/api/critical-css/job/j_nope/data'), 404, 'not_found'],
      [call(service, '/api/critical-css/job/..%2F..%2Fetc/data'), 404, 'not_found'],
      [call(service, '/nowhere'), 404, 'not_found'],
      [call(service, GENERATE, { method: 'GET' }), 405, 'method_not_allowed'],
      [call(service, GENERATE, { body: JSON.stringify({ url: PAGE, pad: 'x'.repeat(17 * 1024) }) }), 413, 'payload_too_large'],
    ]
    for (const [answer, status, code] of cases) {
      const { status: got, json } = await answer
      expect([got, json?.error?.code], code).toEqual([status, code])
      expect(typeof json.error.message).toBe('string')
    }
    expect((await call(service, GENERATE, { method: 'GET' })).headers.get('allow')).toBe('POST')
    expect((await call(service, '/api/critical-css/usage', { method: 'POST', body: '{}' })).headers.get('allow')).toBe('GET')
  })

  it('500: a fault while answering says nothing internal, and the service keeps serving', async () => {
    let broken = false
    const { service, lines } = await setup({
      now: () => {
        if (broken) throw new Error('clock failed reading /secret/internal/path')
        return Date.now()
      },
    })
    broken = true
    const fault = await call(service, '/api/critical-css/usage')
    expect([fault.status, fault.json.error.code]).toEqual([500, 'internal'])
    expect(fault.text).not.toContain('/secret/internal/path')
    expect(lines.some((line) => line.event === 'fault')).toBe(true)
    broken = false
    expect((await call(service, '/api/critical-css/usage')).status).toBe(200)
  })

  it('402: quota per month and expiry, on generate only; usage still answers', async () => {
    const { service } = await setup({
      tokens: [
        { token: FREE, plan: 'free', quota: 1 },
        { token: PRO, plan: 'pro', expiresAt: '2020-01-01T00:00:00.000Z' },
      ],
    })
    expect((await call(service, GENERATE, { token: FREE, body: generateBody() })).status).toBe(202)
    const over = await call(service, GENERATE, { token: FREE, body: generateBody() })
    expect([over.status, over.json.error.code]).toEqual([402, 'plan_limit_reached'])
    const expired = await call(service, GENERATE, { token: PRO, body: generateBody() })
    expect([expired.status, expired.json.error.code]).toEqual([402, 'subscription_expired'])
    const usage = await call(service, '/api/critical-css/usage', { token: PRO })
    expect(usage.status).toBe(200)
    expect(usage.json.subscription).toEqual({ status: 'expired', expires_at: '2020-01-01T00:00:00.000Z' })
    const freeUsage = await call(service, '/api/critical-css/usage', { token: FREE })
    expect(freeUsage.json.quota).toMatchObject({ period: 'month', generations_limit: 1, generations_used: 1 })
  })
})

describe('health (a service extra beside the contract)', () => {
  it('GET and HEAD /health answer 200 without a token, with no data of any token, and are not logged', async () => {
    const { service, lines } = await setup()
    const health = await call(service, '/health', { token: null })
    expect({ status: health.status, json: health.json, cache: health.headers.get('cache-control') }).toEqual({ status: 200, json: { status: 'ok' }, cache: 'no-store' })
    expect((await call(service, '/health', { token: null, method: 'HEAD' })).status).toBe(200)
    // Other methods are not the probe's: the API's 404 for a path it does not have.
    expect((await call(service, '/health', { token: null, method: 'POST', body: '{}' })).status).toBe(404)
    expect(lines.filter((line) => line.event === 'request' && line.path === '/health' && line.method !== 'POST')).toEqual([])
  })

  it('answers 503 once the service is stopping, so a load balancer takes it out', async () => {
    const { service } = await setup({ shutdownGraceMs: 2000 }, () => ({ delayMs: 1500 }))
    const started = await call(service, '/api/critical-css/generate', { body: generateBody() })
    expect(started.status).toBe(202)
    // A job in flight keeps the service draining for a moment.
    for (let i = 0; i < 100 && (await call(service, `/api/critical-css/job/${started.json.id}/data`)).json.status !== 'processing'; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const closing = service.close()
    const health = await call(service, '/health', { token: null })
    expect({ status: health.status, json: health.json }).toEqual({ status: 503, json: { status: 'stopping' } })
    await closing
  })
})

describe('rate limits', () => {
  it.each([
    ['free', FREE, 5],
    ['pro', PRO, 60],
  ])('%s: exactly %#… requests per window, 429 not counted, Retry-After true', async (_plan, token, limit) => {
    const { service } = await setup({ rateWindowMs: 3000 })
    const answers = []
    for (let i = 0; i < limit; i++) answers.push(await call(service, '/api/critical-css/usage', { token }))
    expect(answers.every((a) => a.status === 200)).toBe(true)
    expect(answers.at(-1)!.headers.get('ratelimit-remaining')).toBe('0')
    expect(answers[0]!.headers.get('ratelimit-limit')).toBe(String(limit))
    const refused = await call(service, '/api/critical-css/usage', { token })
    // Retry-After counts from the answer: 60 requests on Redis under load take a second or more, so not from the first request.
    const refusedAt = Date.now()
    expect(refused.status).toBe(429)
    expect(refused.json.error.code).toBe('rate_limited')
    const retry = Number(refused.headers.get('retry-after'))
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get('ratelimit-limit')).toBeNull()
    // Waiting what Retry-After says is enough, whatever the 429s in between.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedAt + retry * 1000 - Date.now()) + 20))
    expect((await call(service, '/api/critical-css/usage', { token })).status).toBe(200)
  }, 20_000)

  it('ent: unlimited and without RateLimit headers; one token does not spend another\'s', async () => {
    const { service } = await setup({ rateWindowMs: 60_000 })
    for (let i = 0; i < 5; i++) await call(service, '/api/critical-css/usage', { token: FREE })
    expect((await call(service, '/api/critical-css/usage', { token: FREE })).status).toBe(429)
    const ent = await Promise.all(Array.from({ length: 100 }, () => call(service, '/api/critical-css/usage', { token: ENT })))
    expect(ent.every((a) => a.status === 200 && a.headers.get('ratelimit-limit') === null)).toBe(true)
    expect((await call(service, '/api/critical-css/usage', { token: PRO })).status).toBe(200)
  })
})

describe('jobs', () => {
  it('generate → queued → done through the project client, with the engine\'s CSS', async () => {
    const { service, engine } = await setup({}, () => ({ delayMs: 50 }))
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const job = await client.generate(PAGE, { viewports: [{ width: 800, height: 600 }] })
      const data = await client.waitForCss(job, { deadline: Date.now() + 10_000 })
      expect(data).toMatchObject({ status: 'done', cssAvailable: true, url: PAGE, viewports: [{ width: 800, height: 600 }] })
      expect(data.css).toBe(stubCss({ url: PAGE, viewports: [{ width: 800, height: 600 }] }))
      expect(data.cssBytes).toBe(Buffer.byteLength(data.css!))
      expect(engine.calls).toHaveLength(1)
      const usage = await client.usage()
      expect(usage.stats).toMatchObject({ jobsTotal: 1, jobsDone: 1, cssBytesTotal: data.cssBytes })
    } finally {
      await client.close()
    }
  })

  it('202 carries Location; list is newest first and token-scoped; another token\'s job is a 404', async () => {
    const { service } = await setup({}, () => ({ delayMs: 10_000 }))
    const a = await call(service, GENERATE, { body: generateBody(`${PAGE}/a`) })
    const b = await call(service, GENERATE, { body: generateBody(`${PAGE}/b`) })
    expect(a.status).toBe(202)
    expect(a.headers.get('location')).toBe(`/api/critical-css/job/${a.json.id}/data`)
    const list = await call(service, '/api/critical-css/jobs')
    expect(list.json.jobs.map((job: { id: string }) => job.id)).toEqual([b.json.id, a.json.id])
    expect(list.json.jobs[0]).not.toHaveProperty('css')
    expect((await call(service, '/api/critical-css/jobs', { token: OTHER })).json.jobs).toEqual([])
    const theirs = await call(service, `/api/critical-css/job/${a.json.id}/data`, { token: OTHER })
    const unknown = await call(service, '/api/critical-css/job/j_unknown/data', { token: OTHER })
    expect([theirs.status, theirs.text]).toEqual([unknown.status, unknown.text])
  })

  it('idempotency: the same key and token give the same job, counted once', async () => {
    const { service } = await setup({ tokens: [{ token: FREE, plan: 'free', quota: 1 }, { token: OTHER, plan: 'ent' }] })
    const headers = { 'idempotency-key': 'build-42-page-1' }
    const first = await call(service, GENERATE, { token: FREE, body: generateBody(), headers })
    const again = await call(service, GENERATE, { token: FREE, body: generateBody(), headers })
    expect(again.json.id).toBe(first.json.id)
    const usage = await call(service, '/api/critical-css/usage', { token: FREE })
    expect(usage.json.quota.generations_used).toBe(1)
    // Another token with the same key gets its own job.
    const other = await call(service, GENERATE, { token: OTHER, body: generateBody(), headers })
    expect(other.json.id).not.toBe(first.json.id)
  })

  it('a failed engine, a crash and a deadline become failed jobs with contract codes', async () => {
    const { service } = await setup({ jobTimeoutMs: 300 }, (url) =>
      url.endsWith('/fail') ? { fail: { code: 'fetch_failed', message: 'HTTP 500 from the page' } } : url.endsWith('/crash') ? { crash: true } : url.endsWith('/slow') ? { delayMs: 5000, ignoreAbort: true } : {},
    )
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const outcomes: Record<string, unknown> = {}
      for (const name of ['fail', 'crash', 'slow']) {
        const job = await client.generate(`${PAGE}/${name}`)
        outcomes[name] = await client.waitForCss(job, { deadline: Date.now() + 10_000 }).then(
          () => 'done',
          (error: { code: string; message: string }) => [error.code, error.message],
        )
      }
      expect((outcomes.fail as string[])[0]).toBe('fetch_failed')
      expect((outcomes.crash as string[])[0]).toBe('internal')
      expect((outcomes.crash as string[])[1]).not.toContain('/secret/internal/path')
      expect((outcomes.slow as string[])[0]).toBe('timeout')
    } finally {
      await client.close()
    }
  })

  it('round-robin between tokens: one token\'s 20 jobs do not starve another\'s one', async () => {
    // No DNS check before each job: a job's engine call then starts as it leaves the queue.
    const { service, engine } = await setup({ workers: 1, allowPrivateNetworks: true }, () => ({ delayMs: 20 }))
    for (let i = 0; i < 20; i++) await call(service, GENERATE, { token: ENT, body: generateBody(`${PAGE}/many-${i}`) })
    await call(service, GENERATE, { token: OTHER, body: generateBody(`${PAGE}/one`) })
    // Jobs started before the other token's one arrived. The first token's turn was already
    // in line, so the other's job is at most the second to start after that.
    const startedBefore = engine.calls.length
    const client = createClient({ baseUrl: service.url, token: OTHER })
    try {
      const [job] = await client.jobs()
      await client.waitForCss(job!, { deadline: Date.now() + 10_000 })
    } finally {
      await client.close()
    }
    expect(startedBefore).toBeLessThan(20)
    expect(engine.calls.findIndex((input) => input.url.endsWith('/one'))).toBeLessThanOrEqual(startedBefore + 1)
    expect(engine.maxConcurrent).toBe(1)
  })
})

describe('third-party policy and network notes (extensions of generate and job data)', () => {
  /** Job data once the job has ended. */
  async function settled(service: RunningService, id: string): Promise<Record<string, any>> {
    for (;;) {
      const answer = await call(service, `/api/critical-css/job/${id}/data`)
      if (answer.json.status === 'done' || answer.json.status === 'failed') return answer.json
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  it('third_party reaches the engine and the job data says it; without one, the default (cut)', async () => {
    const { service, engine } = await setup()
    const blocked = await call(service, GENERATE, { body: generateBody(`${PAGE}/block`, { third_party: 'block' }) })
    expect(blocked.status).toBe(202)
    // The job object, like the list, leaves the job data's extras out (as it does css).
    expect(blocked.json).not.toHaveProperty('third_party')
    expect(blocked.json).not.toHaveProperty('network')
    const plain = await call(service, GENERATE, { body: generateBody(`${PAGE}/plain`) })
    expect(await settled(service, blocked.json.id)).toMatchObject({ status: 'done', third_party: 'block', network: null })
    expect(await settled(service, plain.json.id)).toMatchObject({ status: 'done', third_party: 'cut', network: null })
    expect(engine.calls.map((input) => [input.url, input.thirdParty])).toEqual([
      [`${PAGE}/block`, 'block'],
      [`${PAGE}/plain`, 'cut'],
    ])
    const list = await call(service, '/api/critical-css/jobs')
    for (const job of list.json.jobs) {
      expect(job).not.toHaveProperty('third_party')
      expect(job).not.toHaveProperty('network')
    }
  })

  it.each([['fast'], ['BLOCK'], [1], [null], [['block']]])('third_party %j is a 400 that names the field and the values it may take', async (value) => {
    const { service, engine } = await setup()
    const answer = await call(service, GENERATE, { body: generateBody(PAGE, { third_party: value }) })
    expect([answer.status, answer.json.error.code]).toEqual([400, 'invalid_request'])
    expect(answer.json.error.message).toContain('"third_party"')
    expect(answer.json.error.message).toContain('cut, wait, block')
    expect(engine.calls).toEqual([])
    expect((await call(service, '/api/critical-css/usage')).json.stats.jobs_total).toBe(0)
  })

  it("the engine's network notes come back in the job data, snake_case, once the job is done", async () => {
    const network = {
      skippedHosts: [{ host: 'fonts.example.net', reason: 'cut: still loading 1.5 s after the page' }],
      unreadStylesheets: ['https://fonts.example.net/css2?family=Inter'],
    }
    const { service } = await setup({}, () => ({ delayMs: 300, network }))
    const accepted = await call(service, GENERATE, { body: generateBody(PAGE, { third_party: 'wait' }) })
    // Before the render ends there is nothing to say yet.
    const pending = await call(service, `/api/critical-css/job/${accepted.json.id}/data`)
    expect(pending.json).toMatchObject({ status: expect.stringMatching(/^(queued|processing)$/), third_party: 'wait', network: null })
    const done = await settled(service, accepted.json.id)
    expect(done).toMatchObject({
      status: 'done',
      third_party: 'wait',
      network: {
        skipped_hosts: [{ host: 'fonts.example.net', reason: 'cut: still loading 1.5 s after the page' }],
        unread_stylesheets: ['https://fonts.example.net/css2?family=Inter'],
      },
    })
    // And the contract's parser reads them back as the engine gave them.
    expect(parseJobData(done)).toMatchObject({ thirdParty: 'wait', network })
  })

  it('an Idempotency-Key names one job, whatever the body asks (the contract): a repeat with another policy gets the first job, rendered as the first asked', async () => {
    const { service } = await setup({}, () => ({ delayMs: 50 }))
    const headers = { 'idempotency-key': 'build-7-page-3' }
    const send = async (extra: Record<string, unknown>) => (await call(service, GENERATE, { body: generateBody(PAGE, extra), headers })).json.id as string
    const block = await send({ third_party: 'block' })
    const again = await send({ third_party: 'wait' })
    expect(again).toBe(block)
    expect((await call(service, '/api/critical-css/usage')).json.stats.jobs_total).toBe(1)
    // Ended before the service closes: a render still running then would write to a closed store.
    expect((await settled(service, block)).third_party).toBe('block')
  })
})

describe('pending-job hint', () => {
  it('answers a pending job with Retry-After from recent render times (a queued one a render later), and a finished one without', async () => {
    // The service's clock moves only when a render says: every render of /fast takes 3 s of it.
    let clock = Date.now()
    const releases: (() => void)[] = []
    const engine = {
      async generate(input: { url: string }) {
        if (input.url.includes('slow')) await new Promise<void>((resolve) => releases.push(resolve))
        else clock += 3000
        return { css: 'p{margin:0}' }
      },
    }
    const service = await startService({ tokens: [{ token: ENT, plan: 'ent' }], engine, workers: 1, now: () => clock, resolve: async () => ['93.184.216.34'], shutdownGraceMs: 500 })
    running.push(service)
    const until = async (id: string, status: string) => {
      for (;;) {
        const answer = await call(service, `/api/critical-css/job/${id}/data`)
        if (answer.json.status === status) return answer
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
    // No render time yet: no hint.
    const first = await call(service, GENERATE, { body: generateBody(`${PAGE}?fast`) })
    expect(first.headers.get('retry-after')).toBeNull()
    expect((await until(first.json.id, 'done')).headers.get('retry-after')).toBeNull()

    const slow = await call(service, GENERATE, { body: generateBody(`${PAGE}?slow`) })
    expect(slow.status).toBe(202)
    await until(slow.json.id, 'processing')
    const behind = await call(service, GENERATE, { body: generateBody(`${PAGE}?slow-too`) })
    expect(behind.headers.get('retry-after')).toBe('6')
    expect((await call(service, `/api/critical-css/job/${slow.json.id}/data`)).headers.get('retry-after')).toBe('3')
    expect((await call(service, '/api/critical-css/jobs')).headers.get('retry-after')).toBe('3')
    clock += 1000
    // Due in 2 s: whole seconds rounded up would hold the client a share of it; no hint, for it and for a list that holds it.
    expect((await call(service, `/api/critical-css/job/${slow.json.id}/data`)).headers.get('retry-after')).toBeNull()
    expect((await call(service, '/api/critical-css/jobs')).headers.get('retry-after')).toBeNull()
    clock += 1500
    // Due within a second: no hint either.
    expect((await call(service, `/api/critical-css/job/${slow.json.id}/data`)).headers.get('retry-after')).toBeNull()
    expect((await call(service, '/api/critical-css/jobs')).headers.get('retry-after')).toBeNull()
    releases.shift()!()
    expect((await until(slow.json.id, 'done')).headers.get('retry-after')).toBeNull()
    while (releases.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    releases.shift()!()
  })
})

describe('network policy', () => {
  it.each(['http://127.0.0.1/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://localhost:8080/', 'http://localhost.:8080/', 'http://LocalHost./', 'http://x.localhost./', 'http://\u24dbocalhost/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/', 'http://[fd00:ec2::254]/', 'file:///etc/passwd'])(
    'refuses %s at generate',
    async (url) => {
      const { service, engine } = await setup()
      const answer = await call(service, GENERATE, { body: generateBody(url) })
      expect([answer.status, answer.json.error.code]).toEqual([400, 'invalid_request'])
      expect(engine.calls).toEqual([])
    },
  )

  it('fails a job blocked_url when its hostname resolves to loopback, without rendering it', async () => {
    const { service, engine } = await setup({ resolve: async (host) => (host === 'sneaky.example' ? ['127.0.0.1'] : ['93.184.216.34']) })
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const job = await client.generate('http://sneaky.example/')
      const error = await client.waitForCss(job, { deadline: Date.now() + 10_000 }).catch((caught: { code: string }) => caught)
      expect(error).toMatchObject({ code: 'blocked_url' })
      expect(engine.calls).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('fails a job blocked_url when its hostname does not resolve: the browser might resolve it elsewhere', async () => {
    const { service, engine } = await setup({
      resolve: async (host) => {
        if (host === 'nowhere.example') throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
        return ['93.184.216.34']
      },
    })
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const job = await client.generate('http://nowhere.example./')
      const error = await client.waitForCss(job, { deadline: Date.now() + 10_000 }).catch((caught: { code: string; message: string }) => caught)
      expect(error).toMatchObject({ code: 'blocked_url', message: expect.stringContaining('nowhere.example does not resolve') })
      expect(engine.calls).toEqual([])
    } finally {
      await client.close()
    }
  })

  it('the egress proxy admits a connection only to addresses it checked, its host read as the URL parser reads it', async () => {
    const answers: Record<string, string[]> = { 'public.example': ['93.184.216.34', '2606:2800:220:1::1'], 'mixed.example': ['93.184.216.34', '10.0.0.7'] }
    const policy = createNetworkPolicy({
      allowPrivateNetworks: false,
      allowOrigins: ['https://staging.internal:8443'],
      resolve: async (host) => answers[host] ?? (host === 'staging.internal' ? ['10.1.2.3'] : Promise.reject(new Error('ENOTFOUND'))),
    })
    expect(await policy.admit('PUBLIC.example.', 443, ['https:', 'http:'])).toEqual({ addresses: ['93.184.216.34', '2606:2800:220:1::1'] })
    expect(await policy.admit('mixed.example', 80, ['http:'])).toEqual({ refused: 'mixed.example is refused by the network policy' })
    expect(await policy.admit('\u24dbocalhost.', 80, ['http:'])).toEqual({ refused: 'localhost is a loopback name' })
    expect(await policy.admit('::1', 443, ['https:'])).toMatchObject({ refused: expect.stringContaining('::1') })
    expect(await policy.admit('gone.example', 80, ['http:'])).toEqual({ unresolved: 'gone.example does not resolve' })
    expect(await policy.admit('staging.internal', 8443, ['https:', 'http:'])).toEqual({ addresses: ['10.1.2.3'] })
    expect(await policy.admit('staging.internal', 8444, ['https:', 'http:'])).toEqual({ refused: 'staging.internal is refused by the network policy' })
    expect(await policy.admit('a b', 80, ['http:'])).toMatchObject({ refused: expect.stringContaining('not a host name') })
  })

  it('allowPrivateNetworks lets loopback through (the embedded mode)', async () => {
    const { service } = await setup({ allowPrivateNetworks: true, resolve: async () => ['127.0.0.1'] })
    expect((await call(service, GENERATE, { body: generateBody('http://127.0.0.1:5173/') })).status).toBe(202)
  })
})

/** A raw connection to the service: what it has answered so far, and whether it closed. */
async function rawConnection(service: RunningService): Promise<{ socket: Socket; answer: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(service.url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return { socket, answer: () => received, closed }
}

describe('bounded queue', () => {
  it('past the per-token bound, generate answers 503 with Retry-After and counts nothing; other tokens still get in', async () => {
    const { service } = await setup({ workers: 1, maxQueuedPerToken: 2, jobTimeoutMs: 20_000 }, () => ({ delayMs: 3000 }))
    const statuses: number[] = []
    // One running, two waiting: the bound.
    for (let i = 0; i < 3; i++) statuses.push((await call(service, GENERATE, { body: generateBody(`${PAGE}?${i}`) })).status)
    expect(statuses).toEqual([202, 202, 202])
    const refused = await call(service, GENERATE, { body: generateBody(`${PAGE}?4`) })
    expect([refused.status, refused.json.error.code, refused.headers.get('retry-after')]).toEqual([503, 'unavailable', '20'])
    expect(refused.json.error.message).toContain('2 jobs waiting')
    expect((await call(service, '/api/critical-css/usage')).json.quota.generations_used).toBe(3)
    expect((await call(service, GENERATE, { body: generateBody(), token: OTHER })).status).toBe(202)
  })

  it('past the global bound, every token gets 503', async () => {
    const { service } = await setup({ workers: 1, maxQueued: 1 }, () => ({ delayMs: 3000 }))
    expect((await call(service, GENERATE, { body: generateBody(`${PAGE}?a`) })).status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await call(service, GENERATE, { body: generateBody(`${PAGE}?b`) })).status).toBe(202)
    expect((await call(service, GENERATE, { body: generateBody(), token: OTHER })).status).toBe(503)
  })

  it('a job that waited past its deadline fails timeout without being rendered', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z')
    const { service, engine } = await setup({ workers: 1, jobTimeoutMs: 60_000, now: () => clock }, () => ({ delayMs: 300 }))
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const first = await client.generate(`${PAGE}?first`)
      const second = await client.generate(`${PAGE}?second`)
      // The second job is still waiting while a minute and more goes by.
      clock += 61_000
      expect((await client.waitForCss(first, { deadline: Date.now() + 10_000 })).css).toBeTruthy()
      const error = await client.waitForCss(second, { deadline: Date.now() + 10_000 }).catch((caught: { code: string; message: string }) => caught)
      expect(error).toMatchObject({ code: 'timeout', message: expect.stringContaining('in the queue') })
      expect(engine.calls.map((input) => input.url)).toEqual([`${PAGE}?first`])
    } finally {
      await client.close()
    }
  })
})

describe('HTTP edges', () => {
  it('an over-long chunked body without a token gets 413 at once, not after its end, and the connection closes', async () => {
    const { service } = await setup()
    const { socket, answer, closed } = await rawConnection(service)
    socket.write(`POST ${GENERATE} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`)
    const chunk = `${(8192).toString(16)}\r\n${'a'.repeat(8192)}\r\n`
    let sent = 0
    // Up to 8 MiB: a server that reads to the end answers only after the last chunk, which this never sends first.
    while (answer() === '' && sent < 8 * 1024 * 1024 && !socket.destroyed) {
      if (!socket.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 5))
      sent += 8192
      await new Promise((resolve) => setImmediate(resolve))
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(answer()).toMatch(/^HTTP\/1\.1 413 /)
    expect(answer()).toContain('payload_too_large')
    await closed
  })

  it('a client that never finishes its headers gets 408 and is let go', async () => {
    const { service } = await setup({ headersTimeoutMs: 500 })
    const { socket, answer, closed } = await rawConnection(service)
    socket.write(`POST ${GENERATE} HTTP/1.1\r\nhost: x\r\nx-slow: `)
    await closed
    expect(answer()).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer()).toContain('"code":"invalid_request"')
  })

  it('headers past the size limit get 431, not 400', async () => {
    const { service } = await setup()
    const { socket, answer, closed } = await rawConnection(service)
    socket.write(`GET /api/critical-css/usage HTTP/1.1\r\nhost: x\r\nx-big: ${'b'.repeat(32 * 1024)}\r\n\r\n`)
    await closed
    expect(answer()).toMatch(/^HTTP\/1\.1 431 /)
  })

  it('a request that is not HTTP still gets 400', async () => {
    const { service } = await setup()
    const { socket, answer, closed } = await rawConnection(service)
    socket.write('NOT HTTP AT ALL\r\n\r\n')
    await closed
    expect(answer()).toMatch(/^HTTP\/1\.1 400 /)
  })
})

describe('allowOrigins', () => {
  it('admits an internal origin it names, and nothing else internal', async () => {
    const { service } = await setup({ allowOrigins: ['http://127.0.0.1:5173/'] })
    expect((await call(service, GENERATE, { body: generateBody('http://127.0.0.1:5173/pricing') })).status).toBe(202)
    expect((await call(service, GENERATE, { body: generateBody('http://127.0.0.1:5174/') })).status).toBe(400)
    expect((await call(service, GENERATE, { body: generateBody('http://localhost:5173/') })).status).toBe(400)
    expect((await call(service, GENERATE, { body: generateBody('https://127.0.0.1:5173/') })).status).toBe(400)
  })

  it('an entry that is not an http(s) origin stops the start, naming the option', async () => {
    await expect(startService({ engine: createStubEngine(), allowOrigins: ['staging.internal'] })).rejects.toThrow(/allowOrigins: "staging.internal" is not an http\(s\) origin/)
  })

  it('in Chromium: the allowed site renders, and its stylesheet on another internal origin is never fetched', async () => {
    const canaryRequests: string[] = []
    const listen = async (handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> => {
      const server = createServer(handler)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }
    const canary = await listen((req, res) => {
      canaryRequests.push(req.url ?? '')
      res.writeHead(200, { 'content-type': 'text/css' }).end('h1{color:rgb(1, 2, 3)}')
    })
    const site = await listen((req, res) => {
      if (req.url === '/site.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end('h1{font-size:40px}')
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><head><link rel="stylesheet" href="/site.css"><link rel="stylesheet" href="${canary.origin}/canary.css"></head><body><h1>Staging</h1></body></html>`)
    })
    const service = await startService({ tokens: [{ token: ENT, plan: 'ent' }], allowOrigins: [site.origin], workers: 1 })
    running.push(service)
    const client = createClient({ baseUrl: service.url, token: ENT })
    try {
      const data = await client.waitForCss(await client.generate(`${site.origin}/`), { deadline: Date.now() + 30_000 })
      expect(data.css).toContain('font-size:40px')
      expect(data.css).not.toContain('rgb(1, 2, 3)')
      expect(canaryRequests).toEqual([])
    } finally {
      await client.close()
      for (const { server } of [canary, site]) {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    }
  }, 60_000)
})

describe('shutdown', () => {
  it('finishes jobs in flight, answers 503 with Retry-After meanwhile, closes the engine', async () => {
    const { service, engine } = await setup({}, () => ({ delayMs: 300 }))
    const started = await call(service, GENERATE, { body: generateBody() })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const closing = service.close()
    // The job in flight holds close() in its grace period: the server still answers, with 503.
    const during = await call(service, '/api/critical-css/usage')
    expect([during.status, during.json.error.code, during.headers.get('retry-after')]).toEqual([503, 'unavailable', '5'])
    await closing
    expect(engine.closed).toBe(true)
    expect(engine.calls).toHaveLength(1)
    expect(started.status).toBe(202)
  })

  it('a start that fails (its port taken) closes the engine it opened and rejects with the reason', async () => {
    const { service } = await setup()
    const engine = createStubEngine()
    await expect(startService({ engine, port: Number(new URL(service.url).port) })).rejects.toThrow(/EADDRINUSE/)
    expect(engine.closed).toBe(true)
  })

  it('logs structured lines and never a token', async () => {
    const { service, lines } = await setup()
    await call(service, GENERATE, { body: generateBody() })
    await call(service, '/api/critical-css/usage', { token: 'tok_wrong_token_0000000' })
    await service.close()
    const text = JSON.stringify(lines)
    expect(lines.some((line) => line.event === 'request' && line.status === 202)).toBe(true)
    for (const token of [ENT, 'tok_wrong_token_0000000']) expect(text).not.toContain(token)
  })
})
