/**
 * The reference service with its state on a real redis-server (127.0.0.1 only): several
 * service processes on one state keep the plan's limits, the quota, idempotency keys and
 * tokens exactly as one would, and ride out an outage of Redis.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { hashToken } from '../../src/service/auth.ts'
import { startService, tokenId, type RunningService, type ServiceOptions } from '../../src/service/server.ts'
import { openRedisState } from '../../src/service/store/redis.ts'
import type { StoredJob } from '../../src/service/store/types.ts'
import { startRedis, type TestRedis } from '../fixtures/redis.ts'
import { startRedisProxy } from '../fixtures/redis-proxy.ts'
import { createStubEngine } from '../fixtures/stub-engine.ts'

const FREE = 'tok_redis_free_0123456789ab'
const PRO = 'tok_redis_pro_0123456789abc'
const PAGE = 'https://example.com/pricing'
const GENERATE = '/api/critical-css/generate'
const CLI = fileURLToPath(new URL('../../src/service/cli.ts', import.meta.url))
const ENGINE = fileURLToPath(new URL('../fixtures/stub-engine-module.ts', import.meta.url))

let redis: TestRedis
const running: RunningService[] = []
/** What the services of the current test logged, for a failure to say what became of its job. */
const logged: Record<string, unknown>[] = []

beforeAll(async () => {
  redis = await startRedis({ appendOnly: true })
})
afterEach(async () => {
  logged.length = 0
  for (const service of running.splice(0)) await service.close()
  await redis.start().catch(() => {})
  const client = new Redis(redis.url)
  await client.flushall()
  client.disconnect()
})
afterAll(async () => {
  await redis.close()
})

async function node(options: Partial<ServiceOptions> = {}): Promise<RunningService> {
  const service = await startService({
    redisUrl: redis.url,
    tokens: [
      { token: FREE, plan: 'free' },
      { token: PRO, plan: 'pro', quota: 2 },
    ],
    engine: createStubEngine(() => ({ delayMs: 20 })),
    resolve: async () => ['93.184.216.34'],
    log: (line) => void logged.push({ at: new Date().toISOString().slice(11, 23), ...line }),
    ...options,
  })
  running.push(service)
  return service
}

async function call(service: RunningService, path: string, init: { token?: string; body?: unknown; key?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${init.token ?? FREE}` }
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  if (init.key !== undefined) headers['idempotency-key'] = init.key
  const response = await fetch(service.url + path, { method: init.body !== undefined ? 'POST' : 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) })
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> }
}

async function untilDoneWithin(service: RunningService, id: string, token: string, ms: number): Promise<Record<string, unknown>> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    const answer = await call(service, `/api/critical-css/job/${id}/data`, { token })
    if (answer.body.status === 'done' || answer.body.status === 'failed') return answer.body
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`job ${id} not finished within ${ms} ms: ${JSON.stringify((await call(service, `/api/critical-css/job/${id}/data`, { token })).body)}`)
}

/** A job's final data; 15 s allowed, since jobs held through a Redis outage finish one worker slot at a time on a loaded machine. */
async function untilDone(service: RunningService, id: string, token: string): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {}
  for (const end = Date.now() + 15_000; Date.now() < end; ) {
    last = (await call(service, `/api/critical-css/job/${id}/data`, { token })).body
    if (last.status === 'done' || last.status === 'failed') return last
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  // An intermittent failure in CI (the outage test): what the job said last and what the services logged of it.
  const lines = logged.filter((line) => line.job === id || (line.event !== 'request' && line.job === undefined)).slice(-20)
  throw new Error(`job ${id} not finished within 15 s: ${JSON.stringify(last)}; logged: ${JSON.stringify(lines)}`)
}

describe('service on Redis', () => {
  it('two nodes admit exactly the free plan’s 5 requests a minute between them; the rest get 429 with a true Retry-After', async () => {
    const [a, b] = [await node(), await node()]
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? a : b, GENERATE, { body: { url: `${PAGE}?p=${i}` } })))
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(5)
    const refused = answers.filter((answer) => answer.status === 429)
    expect(refused).toHaveLength(15)
    for (const answer of refused) {
      const seconds = Number(answer.headers.get('retry-after'))
      // The first counted request leaves the window a minute after it was sent.
      expect(seconds).toBeGreaterThanOrEqual(59)
      expect(seconds).toBeLessThanOrEqual(60)
    }
    // Both nodes see the window as it is: nothing left.
    for (const service of [a, b]) expect((await call(service, '/api/critical-css/jobs')).status).toBe(429)
  })

  it('an idempotency key, the quota and the jobs hold across nodes', async () => {
    const [a, b] = [await node(), await node()]
    const first = await call(a, GENERATE, { token: PRO, body: { url: PAGE }, key: 'build-1' })
    expect(first.status).toBe(202)
    const again = await call(b, GENERATE, { token: PRO, body: { url: PAGE }, key: 'build-1' })
    expect(again.body.id).toBe(first.body.id)
    expect((await call(b, GENERATE, { token: PRO, body: { url: `${PAGE}?2` }, key: 'build-2' })).status).toBe(202)
    // Two generations of a quota of 2: the third is refused on either node.
    const third = await call(a, GENERATE, { token: PRO, body: { url: `${PAGE}?3` }, key: 'build-3' })
    expect(third.status).toBe(402)
    expect(third.body).toMatchObject({ error: { code: 'plan_limit_reached' } })
    const usage = await call(b, '/api/critical-css/usage', { token: PRO })
    expect(usage.body).toMatchObject({ plan: 'pro', quota: { generations_used: 2, generations_limit: 2 } })
    // Accepted on a, its data read on b.
    const done = await untilDone(b, String(first.body.id), PRO)
    expect(done).toMatchObject({ status: 'done', css_available: true })
    const listed = await call(b, '/api/critical-css/jobs', { token: PRO })
    expect((listed.body.jobs as { id: string }[]).map((job) => job.id)).toContain(first.body.id)
  })

  it('Redis away: 503 with Retry-After, then answers again by itself, with every accepted job kept', async () => {
    const service = await node()
    const accepted = await call(service, GENERATE, { token: PRO, body: { url: PAGE } })
    expect(accepted.status).toBe(202)
    await untilDone(service, String(accepted.body.id), PRO)
    await redis.stop(true)
    const away = await call(service, '/api/critical-css/usage', { token: PRO })
    expect(away.status).toBe(503)
    expect(away.body).toMatchObject({ error: { code: 'unavailable' } })
    expect(Number(away.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    await redis.start()
    let back = away
    for (let tries = 0; tries < 100 && back.status !== 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      back = await call(service, '/api/critical-css/usage', { token: PRO })
    }
    expect(back.status).toBe(200)
    // Killed, not shut down: what was accepted is in the append-only file.
    expect((await call(service, `/api/critical-css/job/${String(accepted.body.id)}/data`, { token: PRO })).body).toMatchObject({ status: 'done' })
  })

  it('Redis stopped for 5 s under load: refusals are 503 with Retry-After, and every job accepted before, during or after ends done', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    // A kill can lose Redis's answer to the command that moved a job to active (it is in the
    // append-only file): ioredis sends it again after the restart, which takes another job.
    // The first, locked by a worker that does not know it has it, is handed back by that
    // worker (the test above), not left for its 30 s lock to end: the product's default lock here.
    const [a, b] = [await node({ tokens: [{ token: ent, plan: 'ent' }], engine: createStubEngine(() => ({ delayMs: 200 })) }), await node({ tokens: [{ token: ent, plan: 'ent' }] })]
    const accepted: string[] = []
    const statuses: number[] = []
    let retryAfterMissing = 0
    let sending = true
    const load = (async () => {
      for (let i = 0; sending; i++) {
        const answer = await call(i % 2 === 0 ? a : b, GENERATE, { token: ent, body: { url: `${PAGE}?load=${i}` } })
        statuses.push(answer.status)
        if (answer.status === 202) accepted.push(String(answer.body.id))
        if (answer.status === 503 && !(Number(answer.headers.get('retry-after')) >= 1)) retryAfterMissing += 1
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 500))
    await redis.stop(true)
    await new Promise((resolve) => setTimeout(resolve, 5000))
    await redis.start()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    sending = false
    await load
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0)
    expect(statuses.filter((status) => status !== 202 && status !== 503)).toEqual([])
    expect(retryAfterMissing).toBe(0)
    // Accepted before the outage, its job was rendering while Redis was away: its result waited.
    expect(accepted.length).toBeGreaterThan(10)
    for (const id of accepted) expect(await untilDone(a, id, ent), id).toMatchObject({ status: 'done' })
  }, 60_000)

  it('a worker whose answer to taking a job is lost with its connection hands the job on itself, with the default lock', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    const proxy = await startRedisProxy(redis.port)
    try {
      const service = await node({ redisUrl: proxy.url, tokens: [{ token: ent, plan: 'ent' }] })
      // BullMQ's moveToActive names the queue's priority counter and marker; its answer carries the job, named render.
      const dropped = proxy.dropOnce([':pc', ':marker'], 'render')
      const accepted = await call(service, GENERATE, { token: ent, body: { url: PAGE } })
      expect(accepted.status).toBe(202)
      const id = String(accepted.body.id)
      await dropped
      // Not a race with the clock: without the hand-back the job still ends done, when its 30 s lock runs out and
      // BullMQ's stalled check hands it on, and says nothing of it.
      expect(await untilDoneWithin(service, id, ent, 60_000)).toMatchObject({ status: 'done' })
      expect(logged.filter((line) => line.event === 'job_handed_on')).toEqual([expect.objectContaining({ job: id, reason: 'answer_lost' })])
    } finally {
      await proxy.close()
    }
  }, 90_000)

  it('closes while Redis cannot be reached: the close ends (it waited for Redis for good before)', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    const proxy = await startRedisProxy(redis.port)
    const service = await node({ redisUrl: proxy.url, tokens: [{ token: ent, plan: 'ent' }] })
    running.splice(running.indexOf(service), 1)
    const accepted = await call(service, GENERATE, { token: ent, body: { url: PAGE } })
    expect(await untilDoneWithin(service, String(accepted.body.id), ent, 30_000)).toMatchObject({ status: 'done' })
    await proxy.close()
    // The service has seen Redis go: it answers 503.
    let status = 0
    for (let tries = 0; tries < 400 && status !== 503; tries++) {
      status = (await call(service, '/api/critical-css/usage', { token: ent })).status
      if (status !== 503) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(status).toBe(503)
    await service.close()
  }, 60_000)

  it('a render worker killed mid-job: another worker takes the job over and finishes it; an API node renders nothing', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    const apiEngine = createStubEngine()
    const api = await node({ role: 'api', engine: apiEngine, tokens: [{ token: ent, plan: 'ent' }] })
    const workers: ChildProcess[] = []
    const startWorker = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--redis', redis.url, '--role', 'worker', '--engine', ENGINE, '--workers', '1', '--worker-lock', '1', '--allow-private-networks', '--log', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] })
      workers.push(child)
      await new Promise<void>((resolve, reject) => {
        let out = ''
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString()
          if (out.includes('"worker_started"')) resolve()
        })
        child.once('exit', (code) => reject(new Error(`worker exited ${code}`)))
      })
      return child
    }
    try {
      const first = await startWorker()
      const accepted = await call(api, GENERATE, { token: ent, body: { url: `${PAGE}?delay=3000` } })
      expect(accepted.status).toBe(202)
      const id = String(accepted.body.id)
      for (let tries = 0; tries < 200; tries++) {
        if ((await call(api, `/api/critical-css/job/${id}/data`, { token: ent })).body.status === 'processing') break
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      first.kill('SIGKILL')
      await startWorker()
      const started = Date.now()
      const done = await untilDoneWithin(api, id, ent, 15_000)
      expect(done).toMatchObject({ status: 'done', css_available: true })
      // The lock (1 s), the stalled check and a whole render again: well within the job's 60 s deadline.
      expect(Date.now() - started).toBeLessThan(15_000)
      // Done stays done, with the same CSS.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect((await call(api, `/api/critical-css/job/${id}/data`, { token: ent })).body).toMatchObject({ status: 'done', css: done.css })
      expect(apiEngine.calls).toHaveLength(0)
    } finally {
      for (const child of workers) child.kill('SIGKILL')
    }
  }, 40_000)

  it('fair between tokens on the shared queue: one token’s 30 waiting jobs do not hold up another token’s one', async () => {
    const [busy, quiet] = ['tok_redis_busy_0123456789ab', 'tok_redis_quiet_0123456789a']
    const service = await node({ workers: 1, tokens: [{ token: busy, plan: 'ent' }, { token: quiet, plan: 'ent' }], engine: createStubEngine(() => ({ delayMs: 50 })) })
    const many = await Promise.all(Array.from({ length: 30 }, (_, i) => call(service, GENERATE, { token: busy, body: { url: `${PAGE}?busy=${i}` } })))
    const one = await call(service, GENERATE, { token: quiet, body: { url: `${PAGE}?quiet` } })
    const doneAt = async (id: unknown, token: string): Promise<number> => Date.parse(String((await untilDoneWithin(service, String(id), token, 20_000)).updated_at))
    const quietDone = await doneAt(one.body.id, quiet)
    const busyDone = await Promise.all(many.map((answer) => doneAt(answer.body.id, busy)))
    // Behind at most a few of the busy token's jobs, not all 30 (FIFO would put it last).
    expect(busyDone.filter((at) => at > quietDone).length).toBeGreaterThan(20)
  }, 30_000)

  it('an accepted job that never reached the queue (its API process died) is done; one the queue gave up on fails render_failed', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    const engine = createStubEngine()
    const service = await node({ engine, tokens: [{ token: ent, plan: 'ent' }] })
    const state = await openRedisState(redis.url)
    try {
      // Accepted 15 s ago, as the routes accept them, with no queue entry: the accepting
      // process died before adding it, or the queue gave the processing one up.
      const at = new Date(Date.now() - 15_000).toISOString()
      const orphan = (id: string, url: string): StoredJob => ({
        id, tokenId: tokenId(hashToken(ent)), url, status: 'queued', cssAvailable: false, createdAt: at, updatedAt: at,
        error: null, css: null, cssBytes: null, viewports: [{ width: 1300, height: 900 }], durationMs: null,
      })
      for (const job of [orphan('job_orphan_queued', `${PAGE}?queued`), orphan('job_orphan_processing', `${PAGE}?processing`)]) {
        expect(await state.store.acceptJob({ job, period: at.slice(0, 7), quota: null })).toEqual({ kind: 'created' })
      }
      await state.store.updateJob('job_orphan_processing', { status: 'processing', updatedAt: at })
      expect(await untilDoneWithin(service, 'job_orphan_queued', ent, 15_000)).toMatchObject({ status: 'done', css_available: true })
      expect(await untilDoneWithin(service, 'job_orphan_processing', ent, 15_000)).toMatchObject({ status: 'failed', error: { code: 'render_failed' } })
      expect(engine.calls.map((call) => call.url)).toEqual([`${PAGE}?queued`])
    } finally {
      await state.store.close()
    }
  }, 30_000)

  it('a job kept by a release before third_party and network reads with network null and no policy; a new one keeps both', async () => {
    const ent = 'tok_redis_ent_0123456789abc'
    const network = { skippedHosts: [{ host: 'cdn.example.net', reason: 'unreachable' }], unreadStylesheets: [] }
    const engine = createStubEngine(() => ({ network }))
    const service = await node({ engine, tokens: [{ token: ent, plan: 'ent' }] })
    const state = await openRedisState(redis.url)
    try {
      const at = new Date().toISOString()
      // The JSON an older release wrote: neither field.
      const old: StoredJob = {
        id: 'job_old_done', tokenId: tokenId(hashToken(ent)), url: `${PAGE}?old`, status: 'done', cssAvailable: true, createdAt: at, updatedAt: at,
        error: null, css: 'p{margin:0}', cssBytes: 11, viewports: [{ width: 1300, height: 900 }], durationMs: 420,
      }
      expect(await state.store.acceptJob({ job: old, period: at.slice(0, 7), quota: null })).toEqual({ kind: 'created' })
      const data = await call(service, '/api/critical-css/job/job_old_done/data', { token: ent })
      expect(data.body).toMatchObject({ status: 'done', css: 'p{margin:0}', network: null })
      expect(data.body).not.toHaveProperty('third_party')

      const accepted = await call(service, GENERATE, { token: ent, body: { url: `${PAGE}?new`, third_party: 'block' } })
      expect(await untilDone(service, String(accepted.body.id), ent)).toMatchObject({
        third_party: 'block',
        network: { skipped_hosts: [{ host: 'cdn.example.net', reason: 'unreachable' }], unread_stylesheets: [] },
      })
      expect(engine.calls.map((input) => input.thirdParty)).toEqual(['block'])
    } finally {
      await state.store.close()
    }
  })

  it('an API node restarted: idempotency keys, quota counts and tokens still hold', async () => {
    const first = await node()
    const accepted = await call(first, GENERATE, { token: PRO, body: { url: PAGE }, key: 'k-restart' })
    expect(accepted.status).toBe(202)
    await first.close()
    running.splice(running.indexOf(first), 1)
    // Started again without tokens of its own: what it knew lives on Redis.
    const again = await node({ tokens: [] })
    const repeated = await call(again, GENERATE, { token: PRO, body: { url: PAGE }, key: 'k-restart' })
    expect(repeated.body.id).toBe(accepted.body.id)
    expect((await call(again, '/api/critical-css/usage', { token: PRO })).body).toMatchObject({ quota: { generations_used: 1, generations_limit: 2 } })
    expect((await call(again, GENERATE, { token: PRO, body: { url: `${PAGE}?2` } })).status).toBe(202)
    expect((await call(again, GENERATE, { token: PRO, body: { url: `${PAGE}?3` } })).status).toBe(402)
  })

  it('a node closed leaves no connection to Redis open', async () => {
    const service = await node()
    expect((await call(service, GENERATE, { body: { url: PAGE } })).status).toBe(202)
    await service.close()
    running.splice(running.indexOf(service), 1)
    const client = new Redis(redis.url)
    try {
      const list = String(await client.client('LIST'))
      // Only this one.
      expect(list.trim().split('\n')).toHaveLength(1)
    } finally {
      client.disconnect()
    }
  })

  it('token create --redis makes a token every node accepts', () => {
    const created = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'token', 'create', '--plan', 'free', '--redis', redis.url], { encoding: 'utf8' })
    expect(created.status, created.stderr).toBe(0)
    const secret = created.stdout.trim()
    return (async () => {
      const service = await node({ tokens: [] })
      expect((await call(service, '/api/critical-css/usage', { token: secret })).body).toMatchObject({ plan: 'free' })
      const listed = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'token', 'list', '--redis', redis.url], { encoding: 'utf8' })
      expect(listed.stdout).toMatch(/free/)
      expect(listed.stdout).not.toContain(secret)
    })()
  })

  it('--data-dir and --redis together are refused, naming both', () => {
    const both = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'token', 'list', '--redis', redis.url, '--data-dir', '/tmp/x'], { encoding: 'utf8' })
    expect(both.status).toBe(2)
    expect(both.stderr).toMatch(/--data-dir and --redis/)
  })
})
