/**
 * The two stores behave the same, and the SQLite one survives a real restart of the
 * service: finished jobs, usage counts, idempotency keys and tokens stay; jobs that were
 * running when it stopped (or crashed) are queued again and finish.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../../src/client.ts'
import { hashToken } from '../../src/service/auth.ts'
import { startService, tokenId, type RunningService } from '../../src/service/server.ts'
import { createMemoryStore } from '../../src/service/store/memory.ts'
import { openSqliteStore } from '../../src/service/store/sqlite.ts'
import type { Store, StoredJob } from '../../src/service/store/types.ts'
import { createStubEngine, stubCss } from '../fixtures/stub-engine.ts'

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
])('%s store', (_name, open: () => Promise<Store>) => {
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

  it('an empty database starts, and says that every request will get 401 until a token is created', async () => {
    const dir = await tempDir()
    const lines: Record<string, unknown>[] = []
    const service = await startService({ dataDir: dir, engine: createStubEngine(), log: (line) => lines.push(line) })
    services.push(service)
    const warning = lines.find((line) => line.event === 'no_tokens')
    expect(warning?.message).toContain('every request will get 401')
    expect(warning?.message).toContain(`token create --data-dir ${dir}`)
    const withToken = await startService({ engine: createStubEngine(), tokens: [{ token: TOKEN, plan: 'ent' }], log: (line) => lines.push(line) })
    services.push(withToken)
    expect(lines.filter((line) => line.event === 'no_tokens')).toHaveLength(1)
  })
})
