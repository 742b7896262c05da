/**
 * The service's shared state on Redis (`--redis URL`), for many processes on one state:
 * tokens (as hashes), jobs with their results, quota counters, idempotency keys (24 h) and
 * the rate windows. Every step that must be exact across processes is one Lua script: a
 * job's acceptance (its key, the quota, the job), a job's update (compare-and-set on what
 * the caller read) and a window's check-and-count. ioredis is an optional peer, loaded only
 * with a Redis URL.
 *
 * While Redis cannot be reached, calls fail at once with `StoreUnavailableError` (no queue
 * of commands waiting for a reconnect): a request gets 503 with Retry-After, and ioredis
 * reconnects by itself.
 */
import type { Redis as RedisClient, RedisOptions } from 'ioredis'
import type { JobStatus } from '../../contract/api-contract.ts'
import type { RateWindows, WindowDecision } from '../limits.ts'
import { settlesWithin } from '../../shared/abortable.ts'
import { requirePeer } from '../peer.ts'
import { StoreUnavailableError, type JobStats, type Store, type StoredJob, type TokenRecord } from './types.ts'

const PREFIX = 'ucc:'
/** A key names its job for 24 h; kept a little longer so that a clock a few seconds apart cannot lose it early. */
const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000 + 60_000
/** A month's generation count outlives its month by a few weeks, for the usage of its last days. */
const GENERATIONS_KEEP_S = 62 * 24 * 60 * 60
/** Jobs fetched per round trip when a token's list is filtered by status. */
const LIST_PAGE = 200

// Keys of one token share a hash tag, so a Redis Cluster keeps them on one slot.
const keys = {
  tokens: `${PREFIX}tokens`,
  tokenByHash: `${PREFIX}token-by-hash`,
  seq: `${PREFIX}seq`,
  job: (id: string) => `${PREFIX}job:${id}`,
  status: (status: string) => `${PREFIX}status:${status}`,
  jobsOf: (tokenId: string) => `${PREFIX}{${tokenId}}:jobs`,
  statsOf: (tokenId: string) => `${PREFIX}{${tokenId}}:stats`,
  generations: (tokenId: string, period: string) => `${PREFIX}{${tokenId}}:generations:${period}`,
  idempotency: (tokenId: string, key: string) => `${PREFIX}{${tokenId}}:idempotency:${key}`,
  rate: (tokenId: string) => `${PREFIX}{${tokenId}}:rate`,
  turn: (chore: string) => `${PREFIX}turn:${chore}`,
}

/**
 * KEYS: idempotency, generations, seq, token's jobs, token's stats, status set, job.
 * ARGV: has key (1/0), notBefore, quota ('' for none), job JSON, job id, created at, key ttl ms, status, generations ttl s.
 */
const ACCEPT = `
if ARGV[1] == '1' then
  local named = redis.call('GET', KEYS[1])
  if named then
    local cut = string.find(named, '\\n', 1, true)
    if string.sub(named, cut + 1) >= ARGV[2] then
      local job = redis.call('HGET', '${PREFIX}job:' .. string.sub(named, 1, cut - 1), 'json')
      if job then return {'existing', job} end
    end
  end
end
if ARGV[3] ~= '' and tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[3]) then return {'over_quota'} end
local seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[7], 'json', ARGV[4], 'seq', seq)
redis.call('ZADD', KEYS[4], seq, ARGV[5])
redis.call('ZADD', KEYS[6], seq, ARGV[5])
redis.call('HINCRBY', KEYS[5], 'total', 1)
redis.call('HINCRBY', KEYS[5], ARGV[8], 1)
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[9])
if ARGV[1] == '1' then redis.call('SET', KEYS[1], ARGV[5] .. '\\n' .. ARGV[6], 'PX', ARGV[7]) end
return {'created'}
`

/**
 * Compare-and-set of a job: written only if it is still what the caller read.
 * KEYS: job, old status set, new status set, token's stats. ARGV: read JSON, new JSON, id, old status, new status, bytes delta.
 */
const UPDATE = `
if redis.call('HGET', KEYS[1], 'json') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[2])
if ARGV[4] ~= ARGV[5] then
  local seq = redis.call('HGET', KEYS[1], 'seq')
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('ZADD', KEYS[3], seq, ARGV[3])
  redis.call('HINCRBY', KEYS[4], ARGV[4], -1)
  redis.call('HINCRBY', KEYS[4], ARGV[5], 1)
end
if ARGV[6] ~= '0' then redis.call('HINCRBY', KEYS[4], 'bytes', ARGV[6]) end
return 1
`

/**
 * A sliding window of counted requests: a request at t counts while now − t < window.
 * KEYS: the token's window. ARGV: now, window ms, limit, a member naming this request, count it (1/0).
 * Returns {counted in the window (-1: refused), the oldest's time, when refused the one that must leave first}.
 */
const WINDOW = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or ''
if ARGV[5] == '0' then return {count, oldest} end
if count >= limit then
  return {-1, oldest, redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')[2]}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
if oldest == '' then oldest = ARGV[1] end
return {count + 1, oldest}
`

type Scripts = {
  accept(keys: string[], args: (string | number)[]): Promise<string[]>
  update(keys: string[], args: (string | number)[]): Promise<number>
  window(keys: string[], args: (string | number)[]): Promise<(string | number)[]>
}

function loadDriver(): typeof import('ioredis').Redis {
  return requirePeer<typeof import('ioredis')>('ioredis', 'The service keeps shared state on Redis (--redis / CRITICAL_CSS_REDIS_URL)').Redis
}

/** The address as logs and errors may show it: without a password. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.username = ''
    parsed.password = ''
    return parsed.toString()
  } catch {
    return 'the Redis address given'
  }
}

/**
 * A connection that comes back by itself within half a second of Redis, whatever the
 * outage's length. `failFast`: calls fail at once while Redis is away (requests get 503);
 * otherwise they wait for it (a queue worker's blocking reads, as BullMQ requires).
 * `until`: once aborted, it (and every copy made of it, as BullMQ makes) stops trying to
 * come back, and what waits for it fails: a close does not wait for a Redis that is away.
 */
export function redisConnection(url: string, { failFast, lazy = false, until }: { failFast: boolean; lazy?: boolean; until?: AbortSignal }): RedisClient {
  const Driver = loadDriver()
  const options: RedisOptions = {
    enableOfflineQueue: !failFast,
    maxRetriesPerRequest: failFast ? 0 : null,
    retryStrategy: (times) => (until?.aborted ? null : Math.min(50 * times, 500)),
    lazyConnect: lazy,
  }
  const client = new Driver(url, options)
  // Connection errors are said by the calls that meet them; unheard, they would be printed by ioredis.
  client.on('error', () => {})
  return client
}

/** How long a closing connection may take to say QUIT to a Redis that is there. */
const QUIT_GRACE_MS = 1_000

/**
 * Ends a connection whatever Redis is doing: one that is connected says QUIT (what it still
 * waits for comes first); one that is away or coming back is dropped, since a QUIT would
 * wait in its queue for a Redis that may not come back.
 */
export async function endRedisConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return
  if (client.status === 'ready' && (await settlesWithin(client.quit().catch(() => {}), QUIT_GRACE_MS))) return
  client.disconnect()
}

/** True for the one process that takes this chore's turn, which lasts `ms`: a chore that any process could do is done by one at a time. */
export async function takeTurn(client: RedisClient, chore: string, ms: number): Promise<boolean> {
  return (await client.set(keys.turn(chore), String(process.pid), 'PX', ms, 'NX')) === 'OK'
}

function withScripts(client: RedisClient): Scripts {
  client.defineCommand('uccAccept', { lua: ACCEPT })
  client.defineCommand('uccUpdate', { lua: UPDATE })
  client.defineCommand('uccWindow', { lua: WINDOW })
  const call = (name: string) => (k: string[], a: (string | number)[]) =>
    (client as unknown as Record<string, (n: number, ...rest: (string | number)[]) => Promise<unknown>>)[name]!(k.length, ...k, ...a)
  return {
    accept: call('uccAccept') as Scripts['accept'],
    update: call('uccUpdate') as Scripts['update'],
    window: call('uccWindow') as Scripts['window'],
  }
}

/** Redis errors as the store's own: the service does not speak Redis. */
function guarded<T extends object>(target: T, where: string): T {
  const out = {} as T
  for (const name of Object.keys(target) as (keyof T)[]) {
    const method = target[name]
    if (typeof method !== 'function') continue
    out[name] = (async (...args: unknown[]) => {
      try {
        return await (method as (...a: unknown[]) => Promise<unknown>).apply(target, args)
      } catch (error) {
        if (error instanceof StoreUnavailableError || !isConnectionError(error)) throw error
        throw new StoreUnavailableError(`The store at ${where} cannot be reached now.`)
      }
    }) as T[keyof T]
  }
  return out
}

function isConnectionError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : ''
  const code = (error as { code?: unknown } | null)?.code
  return (
    /Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|LOADING|READONLY|CLUSTERDOWN/i.test(message) ||
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code))
  )
}

function parseJob(json: string | null): StoredJob | null {
  return json === null ? null : (JSON.parse(json) as StoredJob)
}

/** Opens the shared state at `url`; a first connection that fails stops the start with the reason. */
export async function openRedisState(url: string): Promise<{ store: Store; windows: (windowMs: number) => RateWindows }> {
  const where = describeRedisUrl(url)
  const client = redisConnection(url, { failFast: true, lazy: true })
  try {
    await client.connect()
  } catch (error) {
    client.disconnect()
    throw new Error(`Redis at ${where} cannot be reached (${error instanceof Error ? error.message : String(error)}): start it, or check --redis / CRITICAL_CSS_REDIS_URL.`)
  }
  const scripts = withScripts(client)

  async function jobsByIds(ids: string[]): Promise<StoredJob[]> {
    if (ids.length === 0) return []
    const pipeline = client.pipeline()
    for (const id of ids) pipeline.hget(keys.job(id), 'json')
    const results = (await pipeline.exec()) ?? []
    const jobs: StoredJob[] = []
    for (const [error, json] of results) {
      if (error) throw error
      const job = parseJob(json as string | null)
      if (job) jobs.push(job)
    }
    return jobs
  }

  const store: Store = {
    async addToken(record) {
      await client.multi().hset(keys.tokens, record.id, JSON.stringify(record)).hset(keys.tokenByHash, record.hash, record.id).exec()
    },
    async tokenByHash(hash) {
      const id = await client.hget(keys.tokenByHash, hash)
      const json = id === null ? null : await client.hget(keys.tokens, id)
      const record = json === null ? null : (JSON.parse(json) as TokenRecord)
      return record && record.revokedAt === null ? record : null
    },
    async listTokens() {
      const records = (await client.hvals(keys.tokens)).map((json) => JSON.parse(json) as TokenRecord)
      return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    },
    async revokeToken(id, at) {
      const json = await client.hget(keys.tokens, id)
      if (json === null) return false
      const record = JSON.parse(json) as TokenRecord
      if (record.revokedAt === null) await client.hset(keys.tokens, id, JSON.stringify({ ...record, revokedAt: at }))
      return true
    },

    async acceptJob({ job, period, quota, idempotency }) {
      const [kind, json] = await scripts.accept(
        [
          keys.idempotency(job.tokenId, idempotency?.key ?? ''),
          keys.generations(job.tokenId, period),
          keys.seq,
          keys.jobsOf(job.tokenId),
          keys.statsOf(job.tokenId),
          keys.status(job.status),
          keys.job(job.id),
        ],
        [idempotency ? '1' : '0', idempotency?.notBefore ?? '', quota ?? '', JSON.stringify(job), job.id, job.createdAt, IDEMPOTENCY_KEEP_MS, job.status, GENERATIONS_KEEP_S],
      )
      if (kind === 'existing') return { kind, job: parseJob(json ?? null)! }
      return kind === 'over_quota' ? { kind } : { kind: 'created' }
    },
    async job(id) {
      return parseJob(await client.hget(keys.job(id), 'json'))
    },
    async updateJob(id, patch, onlyFrom) {
      for (;;) {
        const read = await client.hget(keys.job(id), 'json')
        if (read === null) return null
        const before = JSON.parse(read) as StoredJob
        // The compare-and-set below makes sure it is still in this state when written.
        if (onlyFrom && !onlyFrom.includes(before.status)) return null
        const after: StoredJob = { ...before, ...patch }
        const written = await scripts.update(
          [keys.job(id), keys.status(before.status), keys.status(after.status), keys.statsOf(before.tokenId)],
          [read, JSON.stringify(after), id, before.status, after.status, (after.cssBytes ?? 0) - (before.cssBytes ?? 0)],
        )
        if (written === 1) return after
      }
    },
    async listJobs(tokenId, query) {
      const out: StoredJob[] = []
      for (let start = 0; out.length < query.limit; start += LIST_PAGE) {
        const page = query.status === undefined ? query.limit : LIST_PAGE
        const ids = await client.zrevrange(keys.jobsOf(tokenId), start, start + page - 1)
        for (const job of await jobsByIds(ids)) if (query.status === undefined || job.status === query.status) out.push(job)
        if (ids.length < page) break
      }
      return out.slice(0, query.limit)
    },
    async jobsWithStatus(status: JobStatus) {
      return jobsByIds(await client.zrange(keys.status(status), 0, -1))
    },
    async stats(tokenId) {
      const raw = await client.hgetall(keys.statsOf(tokenId))
      const count = (name: string): number => Number(raw[name] ?? 0)
      const stats: JobStats = {
        jobsTotal: count('total'),
        jobsQueued: count('queued'),
        jobsProcessing: count('processing'),
        jobsDone: count('done'),
        jobsFailed: count('failed'),
        cssBytesTotal: count('bytes'),
      }
      return stats
    },
    async generations(tokenId, period) {
      return Number((await client.get(keys.generations(tokenId, period))) ?? 0)
    },
    async idempotentJob(tokenId, key, notBefore) {
      const named = await client.get(keys.idempotency(tokenId, key))
      if (named === null) return null
      const cut = named.indexOf('\n')
      return named.slice(cut + 1) >= notBefore ? named.slice(0, cut) : null
    },
    async close() {
      await endRedisConnection(client)
    },
  }

  const windows = (windowMs: number): RateWindows => {
    const seconds = (ms: number): number => Math.ceil(ms / 1000)
    const run = async (key: string, limit: number, now: number, take: boolean) =>
      (await scripts.window([keys.rate(key)], [now, windowMs, limit, `${now}:${Math.random().toString(36).slice(2)}`, take ? '1' : '0'])).map(String)
    return guarded(
      {
        async take(key: string, limit: number | null, now: number): Promise<WindowDecision> {
          if (limit === null) return { allowed: true, remaining: null, resetSeconds: null, retryAfterSeconds: null }
          const [count, oldest, leaving] = await run(key, limit, now, true)
          const resetSeconds = seconds(Number(oldest) + windowMs - now)
          if (count === '-1') return { allowed: false, remaining: 0, resetSeconds, retryAfterSeconds: Math.max(1, seconds(Number(leaving) + windowMs - now)) }
          return { allowed: true, remaining: limit - Number(count), resetSeconds, retryAfterSeconds: null }
        },
        async peek(key: string, limit: number | null, now: number) {
          if (limit === null) return { remaining: null, resetSeconds: null }
          const [count, oldest] = await run(key, limit, now, false)
          return { remaining: Math.max(0, limit - Number(count)), resetSeconds: oldest === '' ? 0 : seconds(Number(oldest) + windowMs - now) }
        },
      },
      where,
    )
  }

  return { store: guarded(store, where), windows }
}
