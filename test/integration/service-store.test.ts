/**
 * The two stores behave the same, and the SQLite one survives a real restart of the
 * service: finished jobs, usage counts, idempotency keys and tokens stay; jobs that were
 * running when it stopped (or crashed) are queued again and finish. A database another
 * process holds locked delays writes without stopping the service or losing a result.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client.ts'
import { hashToken } from '../../src/service/auth.ts'
import { startService, tokenId, type RunningService } from '../../src/service/server.ts'
import { EngineError, type Engine, type EngineInput } from '../../src/engine/engine.ts'
import { fromLocal } from '../../src/service/store/local.ts'
import { createMemoryStore } from '../../src/service/store/memory.ts'
import { openSqliteStore } from '../../src/service/store/sqlite.ts'
import type { LocalStore, StoredJob } from '../../src/service/store/types.ts'
import { createStubEngine, stubCss } from '../fixtures/stub-engine.ts'

const SERVICE_CLI = fileURLToPath(new URL('../../src/service/cli.ts', import.meta.url))

const TOKEN = 'tok_store_test_0123456789ab'
const dirs: string[] = []
const services: RunningService[] = []
afterEach(async () => {
  for (const service of services.splice(0)) await service.close()
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ucc-store-'))
  dirs.push(dir)
  return dir
}

function job(id: string, tokenId: string, status: StoredJob['status'] = 'queued', at = '2026-11-21T10:00:00.000Z'): StoredJob {
  return { id, tokenId, url: `https://example.com/${id}`, status, cssAvailable: false, createdAt: at, updatedAt: at, error: null, css: null, cssBytes: null, viewports: [{ width: 1300, height: 900 }], durationMs: null }
}

describe.each([
  ['memory', async () => createMemoryStore()],
  ['sqlite', async () => openSqliteStore(await tempDir())],
])('%s store', (_name, open: () => Promise<LocalStore>) => {
  it('accepts a job as the service does: in one step with its key and the quota', async () => {
    const store = fromLocal(await open())
    const period = '2026-11'
    const idempotency = { key: 'k1', notBefore: '2026-11-20T10:00:00.000Z' }
    expect(await store.acceptJob({ job: job('j1', 'tok_a'), period, quota: 2, idempotency })).toEqual({ kind: 'created' })
    // The same key names the first job: nothing new is made or counted.
    expect(await store.acceptJob({ job: job('j2', 'tok_a'), period, quota: 2, idempotency })).toMatchObject({ kind: 'existing', job: { id: 'j1' } })
    expect(await store.generations('tok_a', period)).toBe(1)
    expect(await store.job('j2')).toBeNull()
    // A key older than notBefore names nothing.
    expect(await store.acceptJob({ job: job('j3', 'tok_a'), period, quota: 2, idempotency: { key: 'k1', notBefore: '2026-11-21T10:00:00.001Z' } })).toEqual({ kind: 'created' })
    // The quota is used up: refused, nothing kept; another token has its own.
    expect(await store.acceptJob({ job: job('j4', 'tok_a'), period, quota: 2 })).toEqual({ kind: 'over_quota' })
    expect(await store.job('j4')).toBeNull()
    expect(await store.generations('tok_a', period)).toBe(2)
    expect(await store.acceptJob({ job: job('x1', 'tok_b'), period, quota: 2 })).toEqual({ kind: 'created' })
    expect(await store.idempotentJob('tok_a', 'k1', '2026-11-20T10:00:00.000Z')).toBe('j3')
    await store.close()
  })

  it('keeps tokens by hash and revokes them', async () => {
    const store = await open()
    store.addToken({ id: 'tok_a', hash: hashToken(TOKEN), plan: 'pro', expiresAt: null, quota: 5, createdAt: '2026-11-21T10:00:00.000Z', revokedAt: null })
    expect(store.tokenByHash(hashToken(TOKEN))).toMatchObject({ id: 'tok_a', plan: 'pro', quota: 5 })
    expect(store.revokeToken('tok_a', '2026-11-22T00:00:00.000Z')).toBe(true)
    expect(store.revokeToken('tok_missing', '2026-11-22T00:00:00.000Z')).toBe(false)
    expect(store.tokenByHash(hashToken(TOKEN))).toBeNull()
    expect(store.listTokens()[0]).toMatchObject({ id: 'tok_a', revokedAt: '2026-11-22T00:00:00.000Z' })
    store.close()
  })

  it('lists a token\'s jobs newest first, filters by status, counts stats', async () => {
    const store = await open()
    for (const id of ['j1', 'j2', 'j3']) store.addJob(job(id, 'tok_a'))
    store.addJob(job('x1', 'tok_b'))
    store.updateJob('j2', { status: 'done', css: 'a{}', cssBytes: 3, cssAvailable: true })
    store.updateJob('j3', { status: 'failed', error: { code: 'timeout', message: 'slow' } })
    expect(store.listJobs('tok_a', { limit: 10 }).map((j) => j.id)).toEqual(['j3', 'j2', 'j1'])
    expect(store.listJobs('tok_a', { limit: 2 }).map((j) => j.id)).toEqual(['j3', 'j2'])
    expect(store.listJobs('tok_a', { limit: 10, status: 'done' }).map((j) => j.id)).toEqual(['j2'])
    expect(store.job('j2')).toMatchObject({ status: 'done', css: 'a{}', cssAvailable: true, tokenId: 'tok_a' })
    expect(store.job('j3')?.error).toEqual({ code: 'timeout', message: 'slow' })
    expect(store.stats('tok_a')).toEqual({ jobsTotal: 3, jobsQueued: 1, jobsProcessing: 0, jobsDone: 1, jobsFailed: 1, cssBytesTotal: 3 })
    expect(store.jobsWithStatus('queued').map((j) => j.id)).toEqual(['j1', 'x1'])
    store.close()
  })

  it('counts generations per period and remembers idempotency keys for their window', async () => {
    const store = await open()
    store.countGeneration('tok_a', '2026-11')
    store.countGeneration('tok_a', '2026-11')
    store.countGeneration('tok_a', '2026-12')
    expect(store.generations('tok_a', '2026-11')).toBe(2)
    expect(store.generations('tok_b', '2026-11')).toBe(0)
    store.rememberIdempotency('tok_a', 'k', 'j1', '2026-11-21T10:00:00.000Z')
    expect(store.idempotentJob('tok_a', 'k', '2026-11-20T10:00:00.000Z')).toBe('j1')
    expect(store.idempotentJob('tok_a', 'k', '2026-11-21T10:00:00.001Z')).toBeNull()
    expect(store.idempotentJob('tok_b', 'k', '2026-11-20T10:00:00.000Z')).toBeNull()
    store.close()
  })

  it("keeps a job's third-party policy and its render's network notes; a job without them reads as not known", async () => {
    const store = await open()
    const network = { skippedHosts: [{ host: 'ads.example.net', reason: 'not contacted (block)' }], unreadStylesheets: ['https://cdn.example.net/a.css'] }
    store.addJob({ ...job('j1', 'tok_a'), thirdParty: 'block', network: null })
    expect(store.job('j1')).toMatchObject({ thirdParty: 'block', network: null })
    store.updateJob('j1', { status: 'done', css: 'a{}', cssBytes: 3, cssAvailable: true, network })
    expect(store.job('j1')).toMatchObject({ status: 'done', thirdParty: 'block', network })
    expect(store.listJobs('tok_a', { limit: 1 })[0]).toMatchObject({ thirdParty: 'block', network })
    store.addJob(job('j2', 'tok_a'))
    const unknown = store.job('j2')!
    expect(unknown.thirdParty).toBeUndefined()
    expect(unknown.network ?? null).toBeNull()
    store.close()
  })

  it("keeps a job's selection (keep, drop, states, …) through its updates; a job without one has none", async () => {
    const store = await open()
    const selection = { keep: ['.menu.is-open'], drop: ['.cookie-banner'], states: ['[data-theme="dark"]'], fontFaces: false }
    store.addJob({ ...job('j1', 'tok_a'), selection })
    store.updateJob('j1', { status: 'done', css: 'a{}', cssBytes: 3, cssAvailable: true })
    expect(store.job('j1')?.selection).toEqual(selection)
    store.addJob(job('j2', 'tok_a'))
    expect(store.job('j2')?.selection).toBeUndefined()
    store.close()
  })
})

/**
 * The SQLite schema of the release before `third_party` and `network`, as it was: a file
 * it made must open with this version.
 */
const SCHEMA_BEFORE_THIRD_PARTY = `
CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY, hash TEXT UNIQUE NOT NULL, plan TEXT NOT NULL, expires_at TEXT,
  quota INTEGER, created_at TEXT NOT NULL, revoked_at TEXT);
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, token_id TEXT NOT NULL,
  url TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  error_code TEXT, error_message TEXT, css TEXT, css_bytes INTEGER, viewports TEXT NOT NULL,
  duration_ms INTEGER);
CREATE INDEX IF NOT EXISTS jobs_by_token ON jobs (token_id, seq);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status, seq);
CREATE TABLE IF NOT EXISTS generations (
  token_id TEXT NOT NULL, period TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (token_id, period));
CREATE TABLE IF NOT EXISTS idempotency (
  token_id TEXT NOT NULL, key TEXT NOT NULL, job_id TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (token_id, key));
`

describe('a SQLite database made before third_party and network', () => {
  /** A service.db as the previous release left it: one token, a finished job, a queued one and a key naming the finished one. */
  async function oldDatabase(): Promise<string> {
    const dataDir = await tempDir()
    const db = new Database(join(dataDir, 'service.db'))
    db.pragma('journal_mode = WAL')
    db.exec(SCHEMA_BEFORE_THIRD_PARTY)
    const owner = tokenId(hashToken(TOKEN))
    db.prepare('INSERT INTO tokens (id, hash, plan, expires_at, quota, created_at, revoked_at) VALUES (?, ?, ?, NULL, NULL, ?, NULL)').run(owner, hashToken(TOKEN), 'ent', '2026-11-21T10:00:00.000Z')
    const insert = db.prepare(
      'INSERT INTO jobs (id, token_id, url, status, created_at, updated_at, error_code, error_message, css, css_bytes, viewports, duration_ms) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)',
    )
    const at = new Date().toISOString()
    insert.run('j_old_done', owner, 'https://example.com/old', 'done', at, at, 'p{margin:0}', 11, '[{"width":1300,"height":900}]', 420)
    insert.run('j_old_queued', owner, 'https://example.com/queued', 'queued', at, at, null, null, '[{"width":1300,"height":900}]', null)
    db.prepare('INSERT INTO idempotency (token_id, key, job_id, at) VALUES (?, ?, ?, ?)').run(owner, 'old-key', 'j_old_done', at)
    db.close()
    return dataDir
  }

  it('opens, reads its old jobs with network null and no policy, and keeps both for the jobs after', async () => {
    const dataDir = await oldDatabase()
    const engine = createStubEngine()
    const service = await startService({ dataDir, engine, allowPrivateNetworks: true })
    services.push(service)

    const old = await request(`${service.url}/api/critical-css/job/j_old_done/data`)
    expect(old.status).toBe(200)
    expect(old.json).toMatchObject({ status: 'done', css: 'p{margin:0}', css_bytes: 11, network: null })
    // What an old job was rendered with is not known: it is not made up.
    expect(old.json).not.toHaveProperty('third_party')
    // The job queued by the old release is rendered now, with the default, and says so.
    expect(await settled(service, 'j_old_queued')).toMatchObject({ status: 'done', third_party: 'cut', network: null })
    expect(engine.calls.find((input) => input.url === 'https://example.com/queued')?.thirdParty).toBe('cut')
    // A key the old release kept still names its job for a request of the default policy.
    const repeated = await request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/old' }), key: 'old-key' })
    expect(repeated.json.id).toBe('j_old_done')

    const fresh = await request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/new', third_party: 'wait' }) })
    expect(fresh.status).toBe(202)
    expect(await settled(service, fresh.json.id)).toMatchObject({ status: 'done', third_party: 'wait', network: null })

    // The selection column, added to the old file, carries a request's say to the engine.
    const said = await request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/said', keep: ['.menu.is-open'], states: ['.dark'], keyframes: false }) })
    expect(await settled(service, said.json.id)).toMatchObject({ status: 'done' })
    expect(engine.calls.find((input) => input.url === 'https://example.com/said')?.selection).toEqual({ keep: ['.menu.is-open'], states: ['.dark'], keyframes: false })
    const bad = await request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/bad', states: ['html.dark'] }) })
    expect(bad.status).toBe(400)
    expect(bad.json.error.message).toContain('field "states[0]" must be an attribute selector')
  })

  it('is upgraded once: a second open finds the columns and alters nothing', async () => {
    const dataDir = await oldDatabase()
    openSqliteStore(dataDir).close()
    const columns = (): string[] => {
      const db = new Database(join(dataDir, 'service.db'), { readonly: true })
      try {
        return (db.pragma('table_info(jobs)') as { name: string }[]).map((column) => column.name)
      } finally {
        db.close()
      }
    }
    const upgraded = columns()
    expect(upgraded.slice(-5)).toEqual(['third_party', 'network', 'first_screen', 'selection', 'engine'])
    const store = openSqliteStore(dataDir)
    // A job done before engines were named reads as not said.
    expect(store.job('j_old_done')).toMatchObject({ status: 'done', css: 'p{margin:0}', network: null, firstScreen: null, engine: null })
    store.close()
    expect(columns()).toEqual(upgraded)
  })
})

describe('a real restart with the SQLite store', () => {
  it('keeps finished jobs, usage, idempotency and tokens', async () => {
    const dataDir = await tempDir()
    const first = await startService({ dataDir, tokens: [{ token: TOKEN, plan: 'pro', quota: 10 }], engine: createStubEngine(), allowPrivateNetworks: true })
    const client = createClient({ baseUrl: first.url, token: TOKEN })
    const done = await client.waitForCss(await client.generate('https://example.com/a', { idempotencyKey: 'key-1' }), { deadline: Date.now() + 10_000 })
    await client.close()
    await first.close()

    // No tokens passed this time: the store remembers the hash.
    const second = await startService({ dataDir, engine: createStubEngine(), allowPrivateNetworks: true })
    services.push(second)
    const again = createClient({ baseUrl: second.url, token: TOKEN })
    try {
      expect(await again.jobData(done.id)).toMatchObject({ status: 'done', css: done.css })
      const repeated = await again.generate('https://example.com/a', { idempotencyKey: 'key-1' })
      expect(repeated.id).toBe(done.id)
      const usage = await again.usage()
      expect(usage.quota).toMatchObject({ generationsUsed: 1, generationsLimit: 10 })
      expect(usage.stats.jobsDone).toBe(1)
    } finally {
      await again.close()
    }
  })

  it('queues again the jobs that were running when it stopped or crashed, and finishes them', async () => {
    const dataDir = await tempDir()
    // A crash: a job left 'processing' in the database.
    const store = openSqliteStore(dataDir)
    const owner = tokenId(hashToken(TOKEN))
    store.addToken({ id: owner, hash: hashToken(TOKEN), plan: 'ent', expiresAt: null, quota: null, createdAt: '2026-11-21T10:00:00.000Z', revokedAt: null })
    store.addJob(job('j_crashed', owner, 'processing'))
    store.close()

    // A stop with a job in flight longer than the grace: it goes back to the queue.
    const slow = createStubEngine(() => ({ delayMs: 5000 }))
    const first = await startService({ dataDir, engine: slow, shutdownGraceMs: 200, allowPrivateNetworks: true, workers: 1 })
    await new Promise((resolve) => setTimeout(resolve, 100))
    await first.close()
    expect(slow.calls.map((input) => input.url)).toEqual(['https://example.com/j_crashed'])

    const engine = createStubEngine()
    const second = await startService({ dataDir, engine, allowPrivateNetworks: true })
    services.push(second)
    const client = createClient({ baseUrl: second.url, token: TOKEN })
    try {
      const data = await client.waitForCss('j_crashed', { deadline: Date.now() + 10_000 })
      expect(data.css).toBe(stubCss({ url: 'https://example.com/j_crashed', viewports: [{ width: 1300, height: 900 }] }))
    } finally {
      await client.close()
    }
  })
})

describe('a SQLite database that cannot be trusted', () => {
  it('a file that is not a database stops the start with the file and what to do', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'service.db'), 'this is not a database, and it is long enough to look like a header'.repeat(100))
    const engine = createStubEngine()
    await expect(startService({ dataDir: dir, engine })).rejects.toThrow(/service\.db cannot be used \(.*\): restore it from a backup, or move it away/)
  })

  it('a database with a damaged page stops the start too, instead of answering 500 to everything', async () => {
    const dir = await tempDir()
    const store = openSqliteStore(dir)
    for (let i = 0; i < 400; i++) store.addJob({ ...job(`j_${String(i).padStart(20, '0')}`, 'tok_x', 'done'), css: 'a{}'.repeat(200) })
    store.close()
    const file = join(dir, 'service.db')
    const bytes = await readFile(file)
    // Page 3 onwards (4 KiB pages): table and index pages overwritten with noise.
    for (let at = 4096 * 2; at < Math.min(bytes.length, 4096 * 12); at++) bytes[at] = (at * 31) & 0xff
    await writeFile(file, bytes)
    await expect(startService({ dataDir: dir, engine: createStubEngine() })).rejects.toThrow(/cannot be used/)
  })

  it('a start that fails leaves no data dir it made: a port in use, on a new dir', async () => {
    const parent = await tempDir()
    const taken = await startService({ engine: createStubEngine(), tokens: [{ token: TOKEN, plan: 'ent' }] })
    services.push(taken)
    const port = Number(new URL(taken.url).port)
    const dataDir = join(parent, 'new-data')
    await expect(startService({ dataDir, port, engine: createStubEngine(), tokens: [{ token: TOKEN, plan: 'ent' }] })).rejects.toThrow(/EADDRINUSE/)
    expect(existsSync(dataDir)).toBe(false)
    // A dir that was there before stays, with what the failed start put in it.
    await expect(startService({ dataDir: parent, port, engine: createStubEngine(), tokens: [{ token: TOKEN, plan: 'ent' }] })).rejects.toThrow(/EADDRINUSE/)
    expect(existsSync(parent)).toBe(true)
  })

  it('an empty database starts, and says that every request will get 401 until a token is created', async () => {
    const dir = await tempDir()
    const lines: Record<string, unknown>[] = []
    const service = await startService({ dataDir: dir, engine: createStubEngine(), log: (line) => lines.push(line) })
    services.push(service)
    const warning = lines.find((line) => line.event === 'no_tokens')
    expect(warning?.message).toContain('every request will get 401')
    // The hint works as copied: run as printed, it makes a token, and a service on that data dir starts without the warning.
    const hint = /`critical-css-service (token create [^`]+)`/.exec(String(warning?.message))?.[1]
    expect(hint).toBe(`token create --plan pro --data-dir ${dir}`)
    const copied = spawnSync(process.execPath, ['--import', 'tsx', SERVICE_CLI, ...hint!.split(' ')], { encoding: 'utf8' })
    expect({ code: copied.status, token: copied.stdout.trim() }).toEqual({ code: 0, token: expect.stringMatching(/^ccs_/) })
    await service.close()
    const after = await startService({ dataDir: dir, engine: createStubEngine(), log: (line) => lines.push(line) })
    services.push(after)
    const withToken = await startService({ engine: createStubEngine(), tokens: [{ token: TOKEN, plan: 'ent' }], log: (line) => lines.push(line) })
    services.push(withToken)
    expect(lines.filter((line) => line.event === 'no_tokens')).toHaveLength(1)
  })
})

/** An engine whose one page finishes when the test says, the way the test says. */
function gatedEngine(): Engine & { started: Promise<EngineInput>; finish: (how: 'css' | 'render_failed') => void } {
  let started!: (input: EngineInput) => void
  let finish!: (how: 'css' | 'render_failed') => void
  const finished = new Promise<'css' | 'render_failed'>((resolve) => (finish = resolve))
  return {
    started: new Promise((resolve) => (started = resolve)),
    finish,
    async generate(input) {
      started(input)
      if ((await finished) === 'render_failed') throw new EngineError('render_failed', 'The page threw while rendering.')
      return { css: stubCss(input) }
    },
  }
}

/** A second connection, as another process would hold it: the write lock is taken until released. */
function holdWriteLock(dataDir: string): { release: () => void } {
  const other = new Database(join(dataDir, 'service.db'))
  other.exec('BEGIN IMMEDIATE')
  return {
    release() {
      other.exec('ROLLBACK')
      other.close()
    },
  }
}

async function request(url: string, init: { method?: string; body?: string; key?: string } = {}): Promise<{ status: number; retryAfter: string | null; json: Record<string, any> }> {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
  if (init.key !== undefined) headers['idempotency-key'] = init.key
  const response = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body })
  return { status: response.status, retryAfter: response.headers.get('retry-after'), json: (await response.json()) as Record<string, any> }
}

async function settled(service: RunningService, id: string): Promise<Record<string, any>> {
  for (;;) {
    const { json } = await request(`${service.url}/api/critical-css/job/${id}/data`)
    if (json.status !== 'queued' && json.status !== 'processing') return json
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('a SQLite database locked by another writer', () => {
  async function serviceWithLockedResult(lines: Record<string, unknown>[] = []) {
    const dataDir = await tempDir()
    const engine = gatedEngine()
    const service = await startService({ dataDir, tokens: [{ token: TOKEN, plan: 'ent' }], engine, allowPrivateNetworks: true, log: (line) => lines.push(line), shutdownGraceMs: 200 })
    const accepted = await request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/locked' }) })
    expect(accepted.status).toBe(202)
    const input = await engine.started
    return { dataDir, engine, service, id: accepted.json.id as string, input, lock: holdWriteLock(dataDir) }
  }

  it.each(['css', 'render_failed'] as const)('keeps answering while the lock is held, and records the job (%s) once it is released', async (how) => {
    const lines: Record<string, unknown>[] = []
    const { engine, service, id, input, lock } = await serviceWithLockedResult(lines)
    services.push(service)
    const order: string[] = []

    // The job's outcome is ready now; its write meets the lock.
    engine.finish(how)
    const [read, write] = await Promise.all([
      request(`${service.url}/api/critical-css/job/${id}/data`),
      request(`${service.url}/api/critical-css/generate`, { method: 'POST', body: JSON.stringify({ url: 'https://example.com/other' }) }),
    ])
    order.push('answered')
    lock.release()
    order.push('released')

    expect(order).toEqual(['answered', 'released'])
    // Reads go on under WAL; the outcome is not in yet.
    expect([read.status, read.json.status]).toEqual([200, 'processing'])
    expect([write.status, write.json.error?.code]).toEqual([503, 'unavailable'])
    expect(Number(write.retryAfter)).toBeGreaterThanOrEqual(1)
    expect(lines.some((line) => line.event === 'store_busy' && line.job === id)).toBe(true)

    const finished = await settled(service, id)
    if (how === 'css') expect(finished).toMatchObject({ status: 'done', css: stubCss(input), error: null })
    else expect(finished).toMatchObject({ status: 'failed', css: null, error: { code: 'render_failed' } })
    // The refused generate left nothing behind: no job, no generation counted.
    const jobs = await request(`${service.url}/api/critical-css/jobs`)
    expect(jobs.json.jobs.map((job: { id: string }) => job.id)).toEqual([id])
    expect((await request(`${service.url}/api/critical-css/usage`)).json.quota.generations_used).toBe(1)
  })

  it('a stop while the lock is held does not wait for it, and the next start renders the job again', async () => {
    const { dataDir, engine, service, id, input, lock } = await serviceWithLockedResult()
    services.push(service)
    engine.finish('css')
    try {
      // close() gives up on the locked write after its grace: the database still says processing.
      await service.close()
    } finally {
      lock.release()
    }

    const again = createStubEngine()
    const next = await startService({ dataDir, engine: again, allowPrivateNetworks: true })
    services.push(next)
    expect(await settled(next, id)).toMatchObject({ status: 'done', css: stubCss(input) })
    expect(again.calls.map((call) => call.url)).toEqual([input.url])
  })
})
