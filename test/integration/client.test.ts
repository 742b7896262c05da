import { readFile, readdir } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inspect } from 'node:util'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  BadRequestError,
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
  createClient,
  isJobData,
  type ClientEvent,
  type CreateClientOptions,
  type CriticalCssClient,
} from '../../src/client.ts'
import { ioClock, type IoClock } from '../fixtures/clock.ts'
import { startFakeService, type FakeService, type FakeServiceOptions, type FakeToken } from '../fixtures/fake-service.ts'

const TOKEN = 'tok_test_9f8e7d6c5b4a3210'
const PAGE = 'https://example.com/pricing'

/** Every error any test saw; the last test checks none of them carries the token. */
const seenErrors: unknown[] = []
const cleanups: (() => Promise<void>)[] = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

interface Setup {
  fake: FakeService
  client: CriticalCssClient
  clock: IoClock
  events: ClientEvent[]
}

async function setup(
  options: { token?: Partial<FakeToken>; fake?: Partial<FakeServiceOptions>; client?: Partial<CreateClientOptions> } = {},
): Promise<Setup> {
  const clock = ioClock()
  const fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent', ...options.token } }, now: clock.now, ...options.fake })
  const events: ClientEvent[] = []
  const client = createClient({
    baseUrl: fake.url,
    token: TOKEN,
    now: clock.now,
    sleep: clock.sleep,
    dispatcher: clock.dispatcher,
    onEvent: (event) => events.push(event),
    ...options.client,
  })
  cleanups.push(async () => {
    await client.close()
    await fake.close()
    await clock.close()
  })
  return { fake, client, clock, events }
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    seenErrors.push(error)
    return error as Error
  }
  throw new Error('expected the call to fail')
}

async function generateAndWait(client: CriticalCssClient, url = PAGE, deadline?: number) {
  const job = await client.generate(url, deadline === undefined ? {} : { deadline })
  return client.waitForCss(job, deadline === undefined ? {} : { deadline })
}

describe('answers and errors', () => {
  it('sends the token, generates, waits and returns the CSS', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ statuses: ['queued', 'processing', 'done'], css: 'h1{color:red}' }) } })
    const data = await generateAndWait(client)
    expect(data).toMatchObject({ status: 'done', css: 'h1{color:red}', cssAvailable: true, url: PAGE })
    expect(fake.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true)
    const generate = fake.requests.find((r) => r.path === '/api/critical-css/generate')
    expect(JSON.parse(generate!.body)).toEqual({ url: PAGE })
    expect(generate!.idempotencyKey).toMatch(/^ucc_[0-9a-f-]{36}$/)
  })

  it('sends viewports when given', async () => {
    const { fake, client } = await setup()
    await client.generate(PAGE, { viewports: [{ width: 800, height: 600 }] })
    const generate = fake.requests.find((r) => r.path === '/api/critical-css/generate')
    expect(JSON.parse(generate!.body)).toEqual({ url: PAGE, viewports: [{ width: 800, height: 600 }] })
  })

  it('takes the finished data of a 200 generate without another request', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ instant: true, css: 'p{margin:0}' }) } })
    const result = await client.generate(PAGE)
    expect(isJobData(result)).toBe(true)
    const before = fake.requests.length
    expect((await client.waitForCss(result)).css).toBe('p{margin:0}')
    expect(fake.requests.length).toBe(before)
  })

  it('a usage read by the caller spares the read before the first generate', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ instant: true }) } })
    await client.usage()
    await client.generate(PAGE)
    await client.generate(`${PAGE}/2`)
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)
  })

  it('pace(): the plan usage states, read once for it and the first generate', async () => {
    const { fake, client } = await setup({ token: { plan: 'pro' }, fake: { behaviour: () => ({ instant: true }) } })
    expect(await client.pace()).toEqual({ requests: 60, windowMs: 60_000 })
    await client.generate(PAGE)
    expect(await client.pace()).toEqual({ requests: 60, windowMs: 60_000 })
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)
  })

  it('pace(): the rateLimit option, without a request', async () => {
    const { fake, client } = await setup({ client: { rateLimit: { requestsPerMinute: 7, windowMs: 30_000 } } })
    expect(await client.pace()).toEqual({ requests: 7, windowMs: 30_000 })
    expect(fake.requests.length).toBe(0)
  })

  it('pace(): unknown (null) from a service without the usage endpoint, which still generates', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ instant: true }) } })
    fake.fault({ path: '/api/critical-css/usage', status: 404, times: 10, body: { error: { code: 'not_found', message: 'no such path' } } })
    expect(await client.pace()).toBeNull()
    expect(isJobData(await client.generate(PAGE))).toBe(true)
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)
  })

  it('ignores fields the contract does not name', async () => {
    const { client } = await setup({ fake: { extraFields: true, behaviour: () => ({ statuses: ['processing', 'done'] }) } })
    const data = await generateAndWait(client)
    expect(data.status).toBe('done')
    expect(data).not.toHaveProperty('x_future_field')
    expect((await client.usage()).plan).toBe('ent')
    expect((await client.jobs()).length).toBe(1)
  })

  it('401: names the client’s `token` field, not how a plugin sets it, and does not retry', async () => {
    const { fake, client } = await setup({ client: { token: 'tok_wrong_0000000000000' } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(UnauthorizedError)
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' })
    expect(error.message).toMatch(/rejected the API token \(401 unauthorized\)\. Check that `token` is a valid API token for this service\.$/)
    expect(error.message).not.toContain('CRITICAL_CSS_')
    expect(error.message).not.toContain('tok_wrong_0000000000000')
    expect(fake.requests.length).toBe(1)
  })

  it('400 from the service: BadRequestError naming the page, not retried', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/generate', status: 400, body: { error: { code: 'invalid_request', message: 'url is not reachable' } } })
    const error = await failure(client.generate(PAGE))
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(error.message).toContain(PAGE)
    expect(error.message).toMatch(/url is not reachable\. Check the page URL given to generate\(\)\.$/)
    expect(error.message).not.toMatch(/CRITICAL_CSS_|siteUrl|`pages`/)
    expect(fake.count({ path: '/api/critical-css/generate' })).toBe(1)
  })

  it('400 on a generate with viewports: the hint names the viewports too', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/generate', status: 400, body: { error: { code: 'invalid_request', message: 'viewports not supported' } } })
    const error = await failure(client.generate(PAGE, { viewports: [{ width: 800, height: 600 }] }))
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' })
    expect(error.message).toMatch(/Check the page URL and the `viewports` given to generate\(\)\.$/)
  })

  it('400 on usage() or jobData(): no hint about a page URL the request never sent', async () => {
    const { fake, client } = await setup()
    fake.fault(
      { path: '/api/critical-css/usage', status: 400, body: { error: { code: 'invalid_request', message: 'bad request' } } },
      { path: /^\/api\/critical-css\/job\//, status: 400, body: { error: { code: 'invalid_request', message: 'bad request' } } },
    )
    for (const error of [await failure(client.usage()), await failure(client.jobData('j_000001'))]) {
      expect(error).toBeInstanceOf(BadRequestError)
      expect(error).toMatchObject({ status: 400, code: 'invalid_request' })
      expect(error.message).toMatch(/\(400 invalid_request\): bad request\.$/)
      expect(error.message).not.toMatch(/page URL|viewports|query/i)
    }
  })

  it('400 on jobs(): the hint is about the query it sent', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/jobs', status: 400, body: { error: { code: 'invalid_request', message: 'bad status' } } })
    const error = await failure(client.jobs({ limit: 5, status: 'done' }))
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error.message).toContain('Check the query sent (?limit=5&status=done): limit must be a whole number from 1 to 100')
    expect(error.message).not.toContain('page URL')
  })

  it('404 from a service that is not this API names `baseUrl`', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 404, body: { error: { code: 'not_found', message: 'no such path' } } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error.message).toMatch(/Check that `baseUrl` points at a Critical CSS Generation API\.$/)
    expect(error.message).not.toContain('CRITICAL_CSS_')
  })

  it('402 plan_limit_reached: explains the monthly limit and its reset', async () => {
    const { fake, client } = await setup({ token: { plan: 'free', quota: 100, used: 100 } })
    const error = await failure(client.generate(PAGE))
    expect(error).toBeInstanceOf(PaymentRequiredError)
    expect(error).toMatchObject({ status: 402, code: 'plan_limit_reached' })
    expect(error.message).toContain("plan's monthly limit of 100 generations is used up; it resets on 2026-12-01")
    expect(fake.count({ path: '/api/critical-css/generate' })).toBe(1)
  })

  it('402 subscription_expired: says when it ended', async () => {
    const { client } = await setup({ token: { plan: 'pro', expiresAt: '2026-11-01T00:00:00.000Z' } })
    const error = await failure(client.generate(PAGE))
    expect(error).toMatchObject({ status: 402, code: 'subscription_expired' })
    expect(error.message).toContain('expired on 2026-11-01')
  })

  it('404: an unknown job, not retried', async () => {
    const { fake, client } = await setup()
    const error = await failure(client.jobData('j_nope'))
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toMatchObject({ status: 404, code: 'not_found' })
    expect(fake.requests.length).toBe(1)
  })

  it.each([
    [405, 'method_not_allowed'],
    [413, 'payload_too_large'],
  ])('%i: UnexpectedStatusError with the code of the body', async (status, code) => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status, body: { error: { code, message: 'scripted' } } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(UnexpectedStatusError)
    expect(error).toMatchObject({ status, code })
  })

  it('500: ServerError, not retried', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 500, body: { error: { code: 'internal', message: 'oops' } } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 500, code: 'internal' })
    expect(fake.requests.length).toBe(1)
  })

  it('502, 503, 504: retried, then the answer', async () => {
    const { fake, client, events } = await setup()
    fake.fault(
      { path: '/api/critical-css/usage', status: 502, body: '<html>bad gateway</html>' },
      { path: '/api/critical-css/usage', status: 503, headers: { 'retry-after': '2' } },
      { path: '/api/critical-css/usage', status: 504 },
    )
    expect((await client.usage()).plan).toBe('ent')
    expect(fake.requests.map((r) => r.status)).toEqual([502, 503, 504, 200])
    expect(events.map((e) => e.error.status)).toEqual([502, 503, 504])
    expect(events[1]?.waitMs).toBe(2000)
  })

  it('a burst of 503s longer than the retries: ServerError with the last status', async () => {
    const { fake, client } = await setup({ client: { maxRetries: 3 } })
    fake.fault({ path: '/api/critical-css/usage', status: 503, times: 10 })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 503, code: 'http_503' })
    expect(fake.requests.length).toBe(4)
  })

  it('429 with Retry-After in seconds: waits exactly that', async () => {
    const { fake, client, events } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 429, headers: { 'retry-after': '3' }, body: { error: { code: 'rate_limited', message: 'slow down' } } })
    await client.usage()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ waitMs: 3000, error: { status: 429, code: 'rate_limited' } })
    const [first, second] = fake.requests
    expect(second!.at - first!.at).toBe(3000)
  })

  it('429 with Retry-After as an HTTP-date: waits until then', async () => {
    const { fake, client, clock, events } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 429, headers: { 'retry-after': new Date(clock.now() + 6000).toUTCString() } })
    await client.usage()
    // An HTTP-date has whole seconds; the wait is what is left of them.
    expect(events[0]!.waitMs).toBeGreaterThan(4000)
    expect(events[0]!.waitMs).toBeLessThanOrEqual(6000)
  })

  it('429 without Retry-After: exponential backoff with full jitter', async () => {
    const { fake, client, events } = await setup({ client: { random: () => 0.5 } })
    fake.fault({ path: '/api/critical-css/usage', status: 429, times: 3 })
    await client.usage()
    expect(events.map((e) => e.waitMs)).toEqual([500, 1000, 2000])
  })

  it('429s past the retries: RateLimitedError with the wait it was given', async () => {
    const { fake, client } = await setup({ client: { maxRetries: 1 } })
    fake.fault({ path: '/api/critical-css/usage', status: 429, headers: { 'retry-after': '1' }, times: 5, body: { error: { code: 'rate_limited', message: 'no' } } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(RateLimitedError)
    expect((error as RateLimitedError).retryAfterMs).toBe(1000)
  })

  it('a connection reset before the job was accepted: retried with the same key, one job', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/generate', reset: 'before' })
    const job = await client.generate(PAGE)
    const generates = fake.requests.filter((r) => r.path === '/api/critical-css/generate')
    expect(generates.map((r) => r.status)).toEqual(['reset', 202])
    expect(new Set(generates.map((r) => r.idempotencyKey)).size).toBe(1)
    expect(fake.jobs.size).toBe(1)
    expect(fake.jobs.has(job.id)).toBe(true)
  })

  it('a generate answered 503 then 429 is retried with the same key, one job', async () => {
    const { fake, client } = await setup()
    fake.fault(
      { path: '/api/critical-css/generate', status: 503, headers: { 'retry-after': '1' } },
      { path: '/api/critical-css/generate', status: 429, headers: { 'retry-after': '2' } },
    )
    const job = await client.generate(PAGE)
    const generates = fake.requests.filter((r) => r.path === '/api/critical-css/generate')
    expect(generates.map((r) => r.status)).toEqual([503, 429, 202])
    expect(new Set(generates.map((r) => r.idempotencyKey)).size).toBe(1)
    expect([...fake.jobs.keys()]).toEqual([job.id])
  })

  it('a socket that answers too slowly is retried (headers timeout)', async () => {
    const { fake, client } = await setup({ client: { requestTimeoutMs: 100 } })
    // undici checks header timeouts on a coarse (about 1 s) timer.
    fake.fault({ path: '/api/critical-css/usage', delayMs: 2500 })
    expect((await client.usage()).plan).toBe('ent')
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(2)
  })

  it('an abort during a backoff stops at once, with no further request', async () => {
    const { fake, client, clock } = await setup({ client: { random: () => 0.99 } })
    fake.fault({ path: '/api/critical-css/usage', status: 503, times: 10 })
    const controller = new AbortController()
    const call = client.usage({ signal: controller.signal })
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 1))
    controller.abort(new Error('stop now'))
    const error = await failure(call)
    expect(error.message).toBe('stop now')
    const sent = fake.requests.length
    await clock.sleep(10_000)
    expect(fake.requests.length).toBe(sent)
  })

  it('a deadline shorter than Retry-After fails at once instead of sleeping past it', async () => {
    const { fake, client, clock } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 429, headers: { 'retry-after': '30' } })
    const started = clock.now()
    const error = await failure(client.usage({ deadline: started + 10_000 }))
    expect(error).toBeInstanceOf(TimeoutError)
    expect(clock.now() - started).toBeLessThan(5000)
    // Other calls wait for the Retry-After too, and give up at their own deadline.
    const second = await failure(client.jobs({}, { deadline: clock.now() + 5000 }))
    expect(second).toBeInstanceOf(TimeoutError)
    expect(fake.count({ path: '/api/critical-css/jobs' })).toBe(0)
  })

  it('a Retry-After past maxWaitMs fails at once without a deadline, naming the option; raised, the wait is kept', async () => {
    const { fake, client, clock } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 429, headers: { 'retry-after': '100000' } })
    const started = clock.now()
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.message).toMatch(/asks to come back in 100000 s, longer than the client waits at once \(`maxWaitMs`, 300 s\)\. Raise `maxWaitMs`/)
    expect(clock.now() - started).toBeLessThan(1000)
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)

    const patient = await setup({ client: { maxWaitMs: 600_000 } })
    patient.fake.fault({ path: '/api/critical-css/usage', status: 503, headers: { 'retry-after': '400' } })
    const begun = patient.clock.now()
    expect((await patient.client.usage()).plan).toBe('ent')
    expect(patient.clock.now() - begun).toBeGreaterThanOrEqual(400_000)
    expect(patient.fake.count({ path: '/api/critical-css/usage' })).toBe(2)
    expect(() => createClient({ baseUrl: fake.url, token: TOKEN, maxWaitMs: -1 })).toThrow(/^`maxWaitMs` must be a positive number of milliseconds\.$/)
  })

  it('requestTimeoutMs bounds the whole body: an answer that drips a byte at a time fails, it does not hang', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const drip = setInterval(() => res.write(' '), 50)
      res.on('close', () => clearInterval(drip))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: TOKEN, requestTimeoutMs: 400, maxRetries: 0 })
    cleanups.push(async () => {
      await client.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.message).toMatch(/its answer took longer than `requestTimeoutMs` \(0\.4 s\)/)
  })

  it('holds the 32 MiB answer cap with a dispatcher of the caller’s', async () => {
    const { Agent } = await import('undici')
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(`{"plan":"${'x'.repeat(33 * 1024 * 1024)}"}`)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const dispatcher = new Agent()
    const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: TOKEN, dispatcher, maxRetries: 0 })
    cleanups.push(async () => {
      await client.close()
      await dispatcher.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toMatch(/with more than 32 MiB; the client reads no answer that large/)
  })

  it('jobs() sends its query and reads the list', async () => {
    const { fake, client } = await setup({ fake: { behaviour: (_u, i) => ({ statuses: [i === 0 ? 'done' : 'processing'] }) } })
    await client.generate(`${PAGE}?a`)
    await client.generate(`${PAGE}?b`)
    const done = await client.jobs({ status: 'done', limit: 5 })
    expect(fake.requests.at(-1)!.query).toBe('?limit=5&status=done')
    expect(done.map((j) => j.url)).toEqual([`${PAGE}?a`])
  })

  it('a connection reset after the job was accepted: the retry finds the same job, nothing is paid twice', async () => {
    const { fake, client } = await setup({ token: { plan: 'pro' } })
    fake.fault({ path: '/api/critical-css/generate', reset: 'after' })
    const job = await client.generate(PAGE)
    const generates = fake.requests.filter((r) => r.path === '/api/critical-css/generate')
    expect(generates.map((r) => r.status)).toEqual(['reset', 202])
    expect(generates[0]!.idempotencyKey).toBe(generates[1]!.idempotencyKey)
    expect(fake.jobs.size).toBe(1)
    expect([...fake.jobs.keys()]).toEqual([job.id])
    expect((await client.usage()).quota.generationsUsed).toBe(1)
  })

  it('connection refused: NetworkError after the retries, naming `baseUrl`', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const clock = ioClock()
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN, now: clock.now, sleep: clock.sleep, dispatcher: clock.dispatcher, maxRetries: 2 })
    cleanups.push(async () => {
      await client.close()
      await clock.close()
    })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).toMatchObject({ status: null, code: 'ECONNREFUSED' })
    expect(error.message).toMatch(/\(ECONNREFUSED\)\. Check that `baseUrl` is the service's address and that the service is running\.$/)
    expect(error.message).not.toContain('CRITICAL_CSS_')
  })

  it('a job that fails: JobFailedError with the job’s code', async () => {
    const { client } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'failed'], failure: { code: 'render_failed', message: 'page crashed' } }) } })
    const error = await failure(generateAndWait(client))
    expect(error).toBeInstanceOf(JobFailedError)
    expect(error).toMatchObject({ status: null, code: 'render_failed', url: PAGE })
    expect(error.message).toContain('page crashed')
  })

  it('an unknown status: an error that names the value, not an endless wait', async () => {
    const { client } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'paused'] }) } })
    const error = await failure(generateAndWait(client))
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toContain('"paused"')
  })

  it('usage() with a plan the contract does not name: an error that names the value, not a pace guessed for it', async () => {
    const { fake, client } = await setup()
    const usage = {
      plan: 'platinum',
      subscription: { status: 'active', expires_at: null },
      rate_limit: { requests_per_minute: null, remaining: null, reset_seconds: null },
      quota: { period: 'month', generations_limit: null, generations_used: 0, resets_at: '2026-12-01T00:00:00.000Z' },
      stats: { jobs_total: 0, jobs_queued: 0, jobs_processing: 0, jobs_done: 0, jobs_failed: 0, css_bytes_total: 0 },
    }
    fake.fault({ path: '/api/critical-css/usage', status: 200, body: usage })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toContain('"platinum"')
    fake.fault({ path: '/api/critical-css/usage', status: 200, body: { ...usage, plan: 'pro' } })
    expect((await client.usage()).plan).toBe('pro')
  })

  it('a missing field: an error that names it', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 200, body: { plan: 'ent', subscription: { status: 'active', expires_at: null } } })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toContain('"rate_limit" is missing')
  })

  it('a success answer that is not JSON: InvalidResponseError', async () => {
    const { fake, client } = await setup()
    fake.fault({ path: '/api/critical-css/usage', status: 200, body: '<html>captive portal</html>' })
    const error = await failure(client.usage())
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error).toMatchObject({ status: 200, code: 'invalid_response' })
  })

  it('a signal already aborted or a deadline already passed sends nothing', async () => {
    const { fake, client, clock } = await setup({ token: { plan: 'free' } })
    const aborted = AbortSignal.abort(new Error('cancelled before it began'))
    expect((await failure(client.generate(PAGE, { signal: aborted }))).message).toBe('cancelled before it began')
    expect(await failure(client.usage({ deadline: clock.now() - 1 }))).toBeInstanceOf(TimeoutError)
    expect(await failure(client.pace({ signal: aborted }))).toBeInstanceOf(Error)
    expect(await failure(client.waitForCss('j_000001', { deadline: clock.now() }))).toBeInstanceOf(TimeoutError)
    expect(fake.requests).toHaveLength(0)
  })

  it('a deadline a month away is a deadline, not an overflow', async () => {
    const { client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'done'] }) } })
    const month = clock.now() + 30 * 24 * 3600 * 1000
    expect((await client.usage({ deadline: month })).plan).toBe('ent')
    expect((await generateAndWait(client, PAGE, month)).status).toBe('done')
    expect((await client.usage({ deadline: Number.POSITIVE_INFINITY })).plan).toBe('ent')
  })

  it('close() stops calls in a retry and refuses new ones', async () => {
    const { fake, client, clock } = await setup({ client: { random: () => 0.99 } })
    fake.fault({ path: '/api/critical-css/usage', status: 503, times: 100 })
    const retrying = failure(client.usage())
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 1))
    await client.close()
    expect(await retrying).toMatchObject({ code: 'client_closed' })
    const sent = fake.requests.length
    expect(await failure(client.jobs())).toMatchObject({ code: 'client_closed' })
    await clock.sleep(60_000)
    expect(fake.requests.length).toBe(sent)
  })

  it('checks its input before sending anything', async () => {
    const { fake, client } = await setup()
    await expect(client.generate('/pricing')).rejects.toThrow(/absolute URL/)
    await expect(client.generate(PAGE, { viewports: [] })).rejects.toThrow(/viewports/)
    await expect(client.jobData('../usage')).rejects.toThrow(/job id/)
    await expect(client.jobs({ limit: 500 })).rejects.toThrow(/limit/)
    expect(fake.requests).toHaveLength(0)
    expect(() => createClient({ baseUrl: fake.url, token: '' })).toThrow(/^No API token: `token` is missing or empty\.$/)
    expect(() => createClient({ baseUrl: '', token: TOKEN })).toThrow(/^No critical CSS service address: `baseUrl` is missing or empty\.$/)
    expect(() => createClient({ baseUrl: 'not a url', token: TOKEN })).toThrow(/`baseUrl`\) is not an absolute URL\.$/)
    expect(() => createClient({ baseUrl: 'ftp://x', token: TOKEN })).toThrow(/`baseUrl`\) must be an http/)
    for (const options of [{ baseUrl: fake.url, token: '' }, { baseUrl: '', token: TOKEN }, { baseUrl: 'ftp://x', token: TOKEN }]) {
      expect(() => createClient(options)).not.toThrow(/CRITICAL_CSS_/)
    }
    expect(() => createClient({ baseUrl: fake.url, token: 'short secret' })).toThrow(/16–256/)
    expect(() => createClient({ baseUrl: fake.url, token: 'short secret' })).not.toThrow(/short secret/)
  })
})

describe('speaks its own words', () => {
  it('no source of the client names the plugin’s env vars or options', async () => {
    const dir = new URL('../../src/client/', import.meta.url)
    const files = (await readdir(dir)).filter((file) => file.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(5)
    for (const file of files) {
      const text = await readFile(new URL(file, dir), 'utf8')
      expect(text, file).not.toMatch(/CRITICAL_CSS_|siteUrl|`pages`/)
    }
  })
})

describe('waiting', () => {
  it('a job that never finishes: TimeoutError at the deadline, and no request after it', async () => {
    const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    const deadline = clock.now() + 30_000
    const error = await failure(generateAndWait(client, PAGE, deadline))
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.message).toContain('processing')
    expect(clock.now()).toBe(deadline)
    expect(fake.requests.every((r) => r.at <= deadline)).toBe(true)
    // Checks at 2, 5, 9.5, 16.25 and 26.25 s; 36.25 s would be one past the deadline.
    expect(fake.count({ path: /\/data$/ })).toBe(5)
  })

  it('stops waiting, and asking, when the signal aborts', async () => {
    const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    const controller = new AbortController()
    const job = await client.generate(PAGE)
    const waiting = client.waitForCss(job, { signal: controller.signal })
    await clock.sleep(5000)
    controller.abort(new Error('build cancelled'))
    const error = await failure(waiting)
    expect(error.message).toBe('build cancelled')
    const count = fake.requests.length
    await clock.sleep(20_000)
    expect(fake.requests.length).toBe(count)
  })

  it('waits on one job from two callers, each with its own deadline and signal', async () => {
    const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    const job = await client.generate(PAGE)
    const short = failure(client.waitForCss(job, { deadline: clock.now() + 5000 }))
    const controller = new AbortController()
    const long = failure(client.waitForCss(job, { deadline: clock.now() + 60_000, signal: controller.signal }))
    const unbounded = client.waitForCss(job).catch((e: unknown) => e)
    expect(await short).toBeInstanceOf(TimeoutError)
    await clock.sleep(5000)
    controller.abort(new Error('second caller stops'))
    expect((await long).message).toBe('second caller stops')
    // The third wait, with neither, is untouched by the others and keeps the job checked.
    const checks = fake.requests.length
    await clock.sleep(25_000)
    expect(fake.requests.length).toBeGreaterThan(checks)
    await client.close()
    expect(((await unbounded) as Error).message).toContain('closed')
  })

  it('a check that runs out of one caller’s time does not end another caller’s wait', async () => {
    const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'processing', 'done'], css: 'b{c:d}' }) } })
    const job = await client.generate(PAGE)
    // The first check meets a 503 asking for 10 s: past the first caller's deadline.
    fake.fault({ path: /\/data$/, status: 503, headers: { 'retry-after': '10' } })
    const first = failure(client.waitForCss(job, { deadline: clock.now() + 5000 }))
    const second = client.waitForCss(job)
    expect(await first).toBeInstanceOf(TimeoutError)
    expect((await second).css).toBe('b{c:d}')
  })

  it('thirty calls and waits, with one signal or none, pile no listeners on any signal', async () => {
    const { client } = await setup({ token: { plan: 'free' }, fake: { behaviour: () => ({ statuses: ['processing', 'done'] }) } })
    const warnings: string[] = []
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name)
    }
    process.on('warning', onWarning)
    try {
      const build = new AbortController()
      // On the free plan most of these queue in the pacer at once.
      const jobs = await Promise.all(Array.from({ length: 30 }, (_, i) => client.generate(`${PAGE}?p=${i}`, i % 2 ? { signal: build.signal } : {})))
      await Promise.all(jobs.map((job, i) => client.waitForCss(job, i % 2 ? { signal: build.signal } : {})))
      await new Promise((r) => setImmediate(r))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).toEqual([])
  })

  it('a deadline cuts off an answer that does not come (real clock)', async () => {
    const fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } } })
    const client = createClient({ baseUrl: fake.url, token: TOKEN })
    cleanups.push(async () => {
      await client.close()
      await fake.close()
    })
    fake.fault({ path: '/api/critical-css/usage', delayMs: 5000 })
    const error = await failure(client.usage({ deadline: Date.now() + 100 }))
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.message).toContain('deadline')
  })

  it('close() ends pending waits', async () => {
    const { client } = await setup({ fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    const waiting = failure(generateAndWait(client))
    await new Promise((r) => setTimeout(r, 50))
    await client.close()
    expect((await waiting).message).toContain('closed')
  })

  it('with nothing to go by, checks at 2 s, then ×1.5, at most every 10 s, however long a job runs', async () => {
    const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    const started = clock.now()
    await failure(generateAndWait(client, PAGE, started + 100_000))
    const checks = fake.requests.filter((r) => r.path.endsWith('/data')).map((r) => r.at - started)
    expect(checks[0]).toBe(2000)
    const gaps = checks.slice(1).map((t, i) => t - checks[i]!)
    expect(gaps).toEqual([3000, 4500, 6750, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000])
  })

  it('checks when the service’s Retry-After says to', async () => {
    const { fake, client, clock } = await setup({ fake: { pendingRetryAfter: 7, behaviour: () => ({ statuses: ['processing'] }) } })
    await failure(generateAndWait(client, PAGE, clock.now() + 40_000))
    const generated = fake.requests.find((r) => r.path === '/api/critical-css/generate')!.at
    const checks = fake.requests.filter((r) => r.path.endsWith('/data')).map((r) => r.at)
    // The 202 says it first: no check a second after the generate.
    const gaps = [generated, ...checks].slice(1).map((t, i) => t - [generated, ...checks][i]!)
    expect(gaps).toEqual([7000, 7000, 7000, 7000, 7000])
  })

  it('checkNow(): a job its caller heard has ended is checked at once, not at its next planned check', async () => {
    for (const when of ['waiting', 'before the wait'] as const) {
      // Queued at its first check, done at the next: when the first check comes is the caller's doing.
      const { fake, client } = await setup({ fake: { behaviour: () => ({ statuses: ['queued', 'done'] }) } })
      const job = await client.generate(PAGE)
      if (when === 'before the wait') client.checkNow(job.id)
      const waiting = client.waitForCss(job)
      if (when === 'waiting') client.checkNow(job.id)
      expect((await waiting).css).toBeTypeOf('string')
      const generated = fake.requests.find((r) => r.path === '/api/critical-css/generate')!.at
      // Without it, the first check is 2 s after the generate (the test above), then 3 s later.
      expect(fake.requests.filter((r) => r.path.endsWith('/data')).map((r) => r.at - generated)).toEqual([0, 3000])
    }
  })

  it('checkNow() of a job no one waits for sends nothing', async () => {
    const { fake, client } = await setup()
    client.checkNow('job_unknown')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(fake.requests).toEqual([])
  })

  it('a failed job waited for by its bare id names its page', async () => {
    const { client } = await setup({ fake: { behaviour: () => ({ statuses: ['failed'], failure: { code: 'fetch_failed', message: '404' } }) } })
    const job = await client.generate(PAGE)
    const error = await failure(client.waitForCss(job.id))
    expect(error).toMatchObject({ code: 'fetch_failed', url: PAGE })
  })

  it('one job with an unknown status in a list fails that wait only', async () => {
    const { client } = await setup({
      fake: { behaviour: (_u, i) => ({ statuses: i === 1 ? ['processing', 'paused'] : ['processing', 'processing', 'done'] }) },
    })
    const outcomes = await Promise.allSettled([0, 1, 2].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const rejected = outcomes[1] as PromiseRejectedResult
    seenErrors.push(rejected.reason)
    expect(rejected.reason).toBeInstanceOf(InvalidResponseError)
    expect((rejected.reason as Error).message).toContain('"paused"')
  })

  it('a service without the list endpoint: jobs are checked one by one', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'processing', 'done'] }) } })
    fake.fault({ path: '/api/critical-css/jobs', status: 404, times: 100 })
    const results = await Promise.all([0, 1, 2].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
    expect(results.every((r) => r.status === 'done')).toBe(true)
    expect(fake.count({ path: '/api/critical-css/jobs' })).toBe(1)
  })

  it('a failing list call stops once no one waits for its jobs', async () => {
    // Backoffs near their ceiling (1, 2, 4, 8 … s): a list call left retrying would show.
    const { fake, client, clock } = await setup({ client: { random: () => 0.99 }, fake: { behaviour: () => ({ statuses: ['processing'] }) } })
    fake.fault({ path: '/api/critical-css/jobs', status: 503, times: 1000 })
    const deadline = clock.now() + 5000
    const errors = await Promise.all([0, 1].map((i) => failure(generateAndWait(client, `${PAGE}?p=${i}`, deadline))))
    expect(errors.every((e) => e instanceof TimeoutError)).toBe(true)
    await clock.sleep(60_000)
    expect(fake.requests.filter((r) => r.at > deadline)).toHaveLength(0)
  })

  it('waits for a bare job id', async () => {
    const { client } = await setup({ fake: { behaviour: () => ({ statuses: ['processing', 'done'], css: 'a{b:c}' }) } })
    const job = await client.generate(PAGE)
    expect((await client.waitForCss(job.id)).css).toBe('a{b:c}')
  })

  it('several pending jobs: one list call reports them, only finished ones are fetched', async () => {
    const durations = [1500, 2500, 4000, 4000, 6000, 9000, 12_000, 12_000]
    const { fake, client } = await setup({ fake: { behaviour: (_url, i) => ({ durationMs: durations[i] ?? 1000 }) } })
    const results = await Promise.all(durations.map((_, i) => generateAndWait(client, `${PAGE}?p=${i}`)))
    expect(results.every((r) => r.status === 'done' && typeof r.css === 'string')).toBe(true)
    const lists = fake.count({ path: '/api/critical-css/jobs' })
    const data = fake.requests.filter((r) => r.path.endsWith('/data'))
    expect(lists).toBeGreaterThan(0)
    // Each job's data is read about once: only when it is done, except when it was the last one pending.
    expect(data.length).toBeLessThanOrEqual(durations.length + 2)
    // Rounds at 2 s and then when the jobs seen so far say the rest should be done.
    expect(lists).toBeLessThanOrEqual(5)
  })

  describe('checks timed by how long jobs take', () => {
    const LISTS = { path: '/api/critical-css/jobs' }

    it('a build of 2 s jobs is looked at once, when they are done: one list call, each job’s data once', async () => {
      const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ durationMs: 2000, css: 'a{b:c}' }) } })
      const started = clock.now()
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      expect(results.every((r) => r.css === 'a{b:c}')).toBe(true)
      expect(fake.count(LISTS)).toBe(1)
      expect(fake.count({ path: /\/data$/ })).toBe(50)
      expect(clock.now() - started).toBeLessThanOrEqual(2100)
    })

    it('jobs of 1–8 s: after the first look, the rest are looked at when the pace they finish at says they are done', async () => {
      // The seeded job times of bench:requests.
      const durations = [1082, 1434, 2092, 2380, 2679, 2805, 3053, 3074, 3576, 3839, 4264, 4629, 4650, 4743, 4873, 5893, 6109, 6349, 7838, 7846]
      const { fake, client, clock } = await setup({
        token: { plan: 'pro' },
        fake: { behaviour: (_url, i) => ({ durationMs: durations[i] ?? 1000 }) },
        // As bench:requests runs it: the pace is stated, so no usage read.
        client: { rateLimit: { requestsPerMinute: 60 } },
      })
      const started = clock.now()
      await Promise.all(durations.map((_, i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      // Before: a list at 1, 2.5, 4.75 and 8.1 s, 2.25 requests a page with the usage read.
      expect(fake.count(LISTS)).toBe(2)
      expect(fake.requests.length).toBeLessThanOrEqual(2.1 * durations.length)
      expect(clock.now() - started).toBeLessThan(11_000)
    })

    it('a job is first looked at when the jobs seen before it had finished', async () => {
      const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ durationMs: 3000 }) } })
      await Promise.all([0, 1].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      const before = fake.requests.length
      const accepted = clock.now()
      await generateAndWait(client, `${PAGE}?p=2`)
      const checks = fake.requests.slice(before).filter((r) => r.path.endsWith('/data'))
      // One look, just after 3 s (not at 2 s, and not again at 5 s).
      expect(checks).toHaveLength(1)
      expect(checks[0]!.at - accepted).toBeGreaterThanOrEqual(3000)
      expect(checks[0]!.at - accepted).toBeLessThan(3200)
    })

    it('jobTimes: what one client learnt times the first look of the next one’s jobs', async () => {
      const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ durationMs: 700 }) } })
      await Promise.all([0, 1].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      expect(client.jobTimes).toEqual([700, 700])
      const next = createClient({ baseUrl: fake.url, token: TOKEN, now: clock.now, sleep: clock.sleep, dispatcher: clock.dispatcher, jobTimes: client.jobTimes })
      cleanups.push(() => next.close())
      const before = fake.requests.length
      const accepted = clock.now()
      await generateAndWait(next, `${PAGE}?p=2`)
      const checks = fake.requests.slice(before).filter((r) => r.path.endsWith('/data'))
      // Once, just after 0.7 s, not at the 2 s a client that knows nothing waits.
      expect(checks.map((r) => r.at - accepted)).toEqual([725])
      expect(() => createClient({ baseUrl: fake.url, token: TOKEN, jobTimes: [1, -1] })).toThrow(/`jobTimes`/)
    })

    it('the token’s earlier jobs in a list count: pending at the first look, the jobs are looked at again when those took', async () => {
      const { fake, client, clock } = await setup({ fake: { behaviour: () => ({ durationMs: 2600 }) } })
      // Another build on the same token finished three such jobs before.
      const other = createClient({ baseUrl: fake.url, token: TOKEN, now: clock.now, sleep: clock.sleep, dispatcher: clock.dispatcher })
      cleanups.push(() => other.close())
      await Promise.all([0, 1, 2].map((i) => generateAndWait(other, `${PAGE}?earlier=${i}`)))
      const before = fake.requests.length
      const started = clock.now()
      await Promise.all([0, 1].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      const lists = fake.requests.slice(before).filter((r) => r.path === LISTS.path)
      // At 2 s (pending), then at 2.6 s: not 5 s, the next step of the interval.
      expect(lists.map((r) => r.at - started)).toEqual([2000, expect.any(Number)])
      expect(lists[1]!.at - started).toBeGreaterThanOrEqual(2600)
      expect(lists[1]!.at - started).toBeLessThan(2800)
    })
  })
})

describe('pacing', () => {
  it('free plan: reads usage first, never exceeds 5 requests per window, and gets no 429', async () => {
    const { fake, client } = await setup({ token: { plan: 'free' }, fake: { behaviour: (_u, i) => ({ durationMs: 1000 + (i % 4) * 1500 }) } })
    const pages = 7
    const results = await Promise.all(Array.from({ length: pages }, (_, i) => generateAndWait(client, `${PAGE}?p=${i}`)))
    expect(results).toHaveLength(pages)
    expect(fake.count({ status: 429 })).toBe(0)
    expect(fake.requests[0]!.path).toBe('/api/critical-css/usage')
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)
    const times = fake.requests.map((r) => r.at)
    const worst = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 60_000).length))
    expect(worst).toBeLessThanOrEqual(5)
    expect(fake.requests.length).toBeLessThanOrEqual(2 * pages + 1 + 3)
  })

  it('makes room for requests another build sent on the same token', async () => {
    const { fake, client, clock } = await setup({ token: { plan: 'free' }, fake: { behaviour: () => ({ durationMs: 500 }) } })
    // Another build spends 3 of the 5 requests of this minute.
    const other = createClient({ baseUrl: fake.url, token: TOKEN, now: clock.now, sleep: clock.sleep, dispatcher: clock.dispatcher })
    cleanups.push(() => other.close())
    await Promise.all([other.jobs(), other.jobs(), other.jobs()])
    const results = await Promise.all([0, 1, 2].map((i) => generateAndWait(client, `${PAGE}?p=${i}`)))
    expect(results).toHaveLength(3)
    expect(fake.count({ status: 429 })).toBe(0)
  })

  describe('the service’s word beats the model', () => {
    const afterOne429 = async (headers: (now: number) => Record<string, string>) => {
      const { fake, client, clock } = await setup({ token: { plan: 'free' }, fake: { rateLimitHeaders: false, behaviour: () => ({ durationMs: 1000 }) } })
      fake.fault({ path: '/api/critical-css/generate', status: 429, headers: headers(clock.now()) })
      const started = clock.now()
      const data = await generateAndWait(client)
      expect(data.status).toBe('done')
      return { elapsed: clock.now() - started, fake }
    }

    it('after one 429 with Retry-After: 2 from a service without RateLimit headers, the job is read within seconds, not a window later', async () => {
      const { elapsed, fake } = await afterOne429(() => ({ 'retry-after': '2' }))
      expect(elapsed).toBeGreaterThanOrEqual(2000)
      expect(elapsed).toBeLessThan(10_000)
      expect(fake.count({ status: 429 })).toBe(1)
    })

    it('the same with an HTTP-date Retry-After', async () => {
      const { elapsed } = await afterOne429((now) => ({ 'retry-after': new Date(now + 2000).toUTCString() }))
      expect(elapsed).toBeLessThan(10_000)
    })

    it('the same with a 429 that gives no Retry-After', async () => {
      const { elapsed } = await afterOne429(() => ({}))
      expect(elapsed).toBeLessThan(10_000)
    })

    it('learns a 3-second window from RateLimit-Reset: six pages on 5 requests per window are done in seconds', async () => {
      const { fake, client, clock } = await setup({ token: { plan: 'free' }, fake: { windowMs: 3000, behaviour: () => ({ durationMs: 500 }) } })
      const started = clock.now()
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => generateAndWait(client, `${PAGE}?p=${i}`)))
      expect(results.every((data) => data.status === 'done')).toBe(true)
      expect(clock.now() - started).toBeLessThan(20_000)
      expect(fake.count({ status: 429 })).toBe(0)
    })
  })

  it('checks a new job first when the 202’s pending-job hint says, not a second after it', async () => {
    const { fake, client } = await setup({ token: { plan: 'pro' }, fake: { pendingRetryAfter: 5, behaviour: () => ({ durationMs: 4800 }) } })
    expect((await generateAndWait(client)).status).toBe('done')
    const generated = fake.requests.find((r) => r.path === '/api/critical-css/generate')!
    const checks = fake.requests.filter((r) => r.path.startsWith('/api/critical-css/job/'))
    expect(checks).toHaveLength(1)
    expect(checks[0]!.at - generated.at).toBeGreaterThanOrEqual(5000)
  })

  it('a list call for jobs due together does not put off a job its own hint names a little later', async () => {
    const { fake, client, clock } = await setup({ fake: { pendingRetryAfter: 'estimate', behaviour: () => ({ durationMs: 2000 }) } })
    const first = await Promise.all([client.generate(`${PAGE}?a`), client.generate(`${PAGE}?b`)])
    await clock.sleep(300)
    const late = await client.generate(`${PAGE}?c`)
    const lateAt = clock.now()
    await Promise.all([...first, late].map((job) => client.waitForCss(job)))
    const lateChecks = fake.requests.filter((r) => r.path === `/api/critical-css/job/${late.id}/data`)
    expect(lateChecks).toHaveLength(1)
    expect(lateChecks[0]!.at - lateAt).toBeLessThan(2600)
  })

  it('ent plan: no pacing, all generates at once', async () => {
    const { fake, client } = await setup({ token: { plan: 'ent' }, fake: { answerDelayMs: 30, behaviour: () => ({ instant: true }) } })
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => client.generate(`${PAGE}?p=${i}`)))
    expect(results.every(isJobData)).toBe(true)
    expect(fake.requests).toHaveLength(13)
    expect(fake.maxInFlight).toBe(12)
  })

  it('a plan with a limit but no RateLimit headers: paced from usage alone', async () => {
    const { fake, client } = await setup({ token: { plan: 'free' }, fake: { rateLimitHeaders: false, behaviour: () => ({ instant: true }) } })
    await Promise.all(Array.from({ length: 7 }, (_, i) => client.generate(`${PAGE}?p=${i}`)))
    expect(fake.count({ status: 429 })).toBe(0)
  })

  it('a service without the usage endpoint: usage is asked once, not before every generate', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ instant: true }) } })
    fake.fault({ path: '/api/critical-css/usage', status: 404, times: 100 })
    await Promise.all([0, 1, 2].map((i) => client.generate(`${PAGE}?p=${i}`)))
    await client.generate(`${PAGE}?p=3`)
    expect(fake.count({ path: '/api/critical-css/usage' })).toBe(1)
    expect(fake.count({ path: '/api/critical-css/generate' })).toBe(4)
  })

  it('ent plan without a usage read: one probe, then no pacing', async () => {
    const { fake, client } = await setup({ token: { plan: 'ent' }, fake: { answerDelayMs: 30, behaviour: () => ({ statuses: ['processing'] }) } })
    await client.jobs()
    await Promise.all(Array.from({ length: 6 }, () => client.jobs()))
    expect(fake.maxInFlight).toBe(6)
  })

  it('concurrent generates: aborting one does not abort the others', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ instant: true }) } })
    fake.fault({ path: '/api/critical-css/usage', delayMs: 100 })
    const controller = new AbortController()
    const first = failure(client.generate(`${PAGE}?a`, { signal: controller.signal }))
    const second = client.generate(`${PAGE}?b`)
    controller.abort(new Error('first build cancelled'))
    expect((await first).message).toBe('first build cancelled')
    expect((await second).url).toBe(`${PAGE}?b`)
  })

  it('rateLimit option: keeps a self-hosted service’s own pace', async () => {
    const { fake, client } = await setup({
      token: { plan: 'ent', requestsPerWindow: 3 },
      fake: { windowMs: 10_000, rateLimitHeaders: false, behaviour: () => ({ instant: true }) },
      client: { rateLimit: { requestsPerMinute: 3, windowMs: 10_000 } },
    })
    await Promise.all(Array.from({ length: 7 }, (_, i) => client.generate(`${PAGE}?p=${i}`)))
    expect(fake.count({ status: 429 })).toBe(0)
    // The option states the pace: no usage read before the first generate.
    expect(fake.count()).toBe(7)
  })
})

describe('secrecy', () => {
  it('redacts the token when a service echoes it back', async () => {
    const { fake, client } = await setup({ fake: { behaviour: () => ({ statuses: ['failed'], failure: { code: 'internal', message: `bad token ${TOKEN} here` } }) } })
    fake.fault({ path: '/api/critical-css/usage', status: 500, body: { error: { code: 'internal', message: `Authorization: Bearer ${TOKEN}` } } })
    const serverError = await failure(client.usage())
    expect(serverError.message).toContain('[redacted]')
    const jobError = await failure(generateAndWait(client))
    expect(jobError.message).toContain('[redacted]')
  })

  it('redacts the token upper-cased, without its prefix, and base64-encoded', async () => {
    const { fake, client } = await setup()
    const forms = [TOKEN.toUpperCase(), TOKEN.slice('tok_'.length), TOKEN.slice('tok_test_'.length), Buffer.from(TOKEN).toString('base64'), Buffer.from(TOKEN).toString('base64url')]
    fake.fault({ path: '/api/critical-css/usage', status: 500, body: { error: { code: 'internal', message: `seen: ${forms.join(' , ')}` } }, times: 10 })
    const error = await failure(client.usage())
    for (const form of forms) expect(error.message).not.toContain(form)
    expect(error.message).toContain('seen: [redacted] , [redacted] , [redacted] , [redacted] , [redacted]')
  })

  afterAll(() => {
    expect(seenErrors.length).toBeGreaterThan(15)
    for (const error of seenErrors) {
      const text = [String(error), (error as Error).stack, inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error)].join('\n')
      expect(text).not.toContain(TOKEN)
    }
  })
})
