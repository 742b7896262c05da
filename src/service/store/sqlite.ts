/**
 * The SQLite store (`dataDir`): jobs, results, usage counts, idempotency keys and token
 * hashes in `service.db` under WAL, so a restart loses no finished job. better-sqlite3 is
 * an optional peer: loaded only when a `dataDir` is given.
 *
 * better-sqlite3 is synchronous: a write that waits for a lock held by another process
 * waits on the event loop, and with the driver's default (5 s) the whole service stops
 * answering. So the connection waits only a few milliseconds, and a write still locked
 * out throws `StoreBusyError`: the queue retries it on timers, a request gets 503.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type Database from 'better-sqlite3'
import type { FirstScreenDifference, JobNetwork, JobStatus, Plan, Selection, ThirdPartyPolicy, Viewport } from '../../contract/api-contract.ts'
import { peerVersion, requirePeer } from '../peer.ts'
import { StoreBusyError, type JobStats, type LocalStore, type StoredJob, type TokenRecord } from './types.ts'

/** Long enough to ride out another connection's short write, short enough not to hold the event loop. */
const BUSY_TIMEOUT_MS = 5

const SCHEMA = `
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

/**
 * Columns of `jobs` added after the first schema, in order. A new database gets them the
 * way an old one does (SCHEMA stays the first schema), so every file takes the one path
 * and each column is declared once. Nullable: the rows of an old file read as "not known".
 */
const ADDED_JOB_COLUMNS = [
  // The job's third-party policy (`cut`, `wait`, `block`); null for a job from before it existed.
  ['third_party', 'TEXT'],
  // JSON of the render's JobNetwork; null until done, or when the engine said nothing.
  ['network', 'TEXT'],
  // JSON of the render's first-screen differences; null until done, or when the engine did not check.
  ['first_screen', 'TEXT'],
  // JSON of the request's Selection (keep, drop, states, font_faces, keyframes); null: the defaults, and every job from before it existed.
  ['selection', 'TEXT'],
  // What made the CSS (`chromium`, `static`); null until done, when the engine did not say, and for every job from before it existed.
  ['engine', 'TEXT'],
] as const

interface TokenRow {
  id: string
  hash: string
  plan: string
  expires_at: string | null
  quota: number | null
  created_at: string
  revoked_at: string | null
}

interface JobRow {
  id: string
  token_id: string
  url: string
  status: string
  created_at: string
  updated_at: string
  error_code: string | null
  error_message: string | null
  css: string | null
  css_bytes: number | null
  viewports: string
  duration_ms: number | null
  third_party: string | null
  network: string | null
  first_screen: string | null
  selection: string | null
  engine: string | null
}

function tokenFromRow(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    hash: row.hash,
    plan: row.plan as Plan,
    expiresAt: row.expires_at,
    quota: row.quota,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  }
}

function jobFromRow(row: JobRow): StoredJob {
  const status = row.status as JobStatus
  const job: StoredJob = {
    id: row.id,
    tokenId: row.token_id,
    url: row.url,
    status,
    cssAvailable: status === 'done' && row.css !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
    css: row.css,
    cssBytes: row.css_bytes,
    viewports: JSON.parse(row.viewports) as Viewport[],
    durationMs: row.duration_ms,
    network: row.network === null ? null : (JSON.parse(row.network) as JobNetwork),
    firstScreen: row.first_screen === null ? null : (JSON.parse(row.first_screen) as FirstScreenDifference[]),
    engine: row.engine,
  }
  if (row.third_party !== null) job.thirdParty = row.third_party as ThirdPartyPolicy
  if (row.selection !== null) job.selection = JSON.parse(row.selection) as Selection
  return job
}

function jobToRow(job: StoredJob): JobRow {
  return {
    id: job.id,
    token_id: job.tokenId,
    url: job.url,
    status: job.status,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    error_code: job.error?.code ?? null,
    error_message: job.error?.message ?? null,
    css: job.css,
    css_bytes: job.cssBytes,
    viewports: JSON.stringify(job.viewports),
    duration_ms: job.durationMs,
    third_party: job.thirdParty ?? null,
    network: job.network ? JSON.stringify(job.network) : null,
    first_screen: job.firstScreen ? JSON.stringify(job.firstScreen) : null,
    selection: job.selection ? JSON.stringify(job.selection) : null,
    engine: job.engine ?? null,
  }
}

/** SQLITE_BUSY and its extended codes (BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT): the lock is someone else's, for now. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

/** The same store, with SQLite's busy errors turned into the store's own, so callers need not know SQLite. */
function translatingBusy(store: LocalStore, file: string): LocalStore {
  const translated = { ...store }
  for (const name of Object.keys(store) as (keyof LocalStore)[]) {
    const method = store[name] as (...args: unknown[]) => unknown
    ;(translated as Record<keyof LocalStore, unknown>)[name] = (...args: unknown[]): unknown => {
      try {
        return method(...args)
      } catch (error) {
        throw isBusy(error) ? new StoreBusyError(file) : error
      }
    }
  }
  return translated
}

/**
 * Which better-sqlite3 runs on which Node without taking the process down, seen on this
 * project's CI: 12 built for Node 24 aborts at random (a statement collected outside a
 * context trips Node 24's ObjectWrap cleanup-hook check: `Assertion failed: (env) !=
 * nullptr`), and 13 (N-API, `engines` >= 22) segfaults as it loads on Node 20.
 */
export function sqliteDriverProblem(driver: string, node: string = process.versions.node): string | null {
  const [driverMajor, nodeMajor] = [Number.parseInt(driver, 10), Number.parseInt(node, 10)]
  if (driverMajor < 13 && nodeMajor >= 24) {
    return `better-sqlite3 ${driver} aborts the process at random on Node ${node} (\`Assertion failed: (env) != nullptr\` as a statement is freed): install better-sqlite3 13 or later, \`npm install better-sqlite3@^13\`.`
  }
  if (driverMajor >= 13 && nodeMajor < 22) {
    return `better-sqlite3 ${driver} needs Node 22 or later and crashes as it loads on Node ${node}: install better-sqlite3 12, \`npm install better-sqlite3@^12\`, or run on Node 22 or later.`
  }
  return null
}

const NEEDED_FOR = 'The service keeps data in SQLite (`dataDir` / --data-dir)'

function loadDriver(): typeof Database {
  // Checked before loading: the wrong build crashes the process instead of throwing.
  const version = peerVersion('better-sqlite3')
  const problem = version === null ? null : sqliteDriverProblem(version)
  if (problem !== null) throw new TypeError(`${NEEDED_FOR}, but ${problem}`)
  return requirePeer<typeof Database>('better-sqlite3', NEEDED_FOR)
}

/**
 * Opens the database and checks it before anything is served: a damaged file stops the
 * start with the reason, instead of a service that answers 500 to everything.
 */
function openChecked(Driver: typeof Database, file: string): Database.Database {
  let db: Database.Database | null = null
  try {
    db = new Driver(file, { timeout: BUSY_TIMEOUT_MS })
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check).filter((line) => line !== 'ok')
    if (problems.length > 0) throw new Error(problems.slice(0, 3).join('; '))
    db.exec(SCHEMA)
    addMissingColumns(db)
    return db
  } catch (error) {
    db?.close()
    // A lock held elsewhere says nothing about the file: "restore it from a backup" would be wrong advice.
    if (isBusy(error)) throw new StoreBusyError(file)
    throw new Error(`the database ${file} cannot be used (${error instanceof Error ? error.message : String(error)}): restore it from a backup, or move it away to start with an empty one.`)
  }
}

/**
 * Brings a database made by an older version up to this one's columns. A file already up
 * to date is only read; one that is not is altered in a single IMMEDIATE transaction that
 * looks again under the lock, so two processes opening it at once do not both add a column.
 */
function addMissingColumns(db: Database.Database): void {
  const missing = (): (typeof ADDED_JOB_COLUMNS)[number][] => {
    const present = new Set((db.pragma('table_info(jobs)') as { name: string }[]).map((column) => column.name))
    return ADDED_JOB_COLUMNS.filter(([name]) => !present.has(name))
  }
  if (missing().length === 0) return
  db.transaction(() => {
    for (const [name, type] of missing()) db.exec(`ALTER TABLE jobs ADD COLUMN ${name} ${type}`)
  }).immediate()
}

export function openSqliteStore(dataDir: string): LocalStore {
  mkdirSync(dataDir, { recursive: true })
  const Driver = loadDriver()
  const file = join(dataDir, 'service.db')
  const db = openChecked(Driver, file)

  const statements = {
    addToken: db.prepare('INSERT INTO tokens (id, hash, plan, expires_at, quota, created_at, revoked_at) VALUES (@id, @hash, @plan, @expires_at, @quota, @created_at, @revoked_at)'),
    tokenByHash: db.prepare('SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL'),
    listTokens: db.prepare('SELECT * FROM tokens ORDER BY created_at, id'),
    revokeToken: db.prepare('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
    addJob: db.prepare(
      'INSERT INTO jobs (id, token_id, url, status, created_at, updated_at, error_code, error_message, css, css_bytes, viewports, duration_ms, third_party, network, first_screen, selection, engine) VALUES (@id, @token_id, @url, @status, @created_at, @updated_at, @error_code, @error_message, @css, @css_bytes, @viewports, @duration_ms, @third_party, @network, @first_screen, @selection, @engine)',
    ),
    job: db.prepare('SELECT * FROM jobs WHERE id = ?'),
    updateJob: db.prepare(
      'UPDATE jobs SET status = @status, updated_at = @updated_at, error_code = @error_code, error_message = @error_message, css = @css, css_bytes = @css_bytes, viewports = @viewports, duration_ms = @duration_ms, third_party = @third_party, network = @network, first_screen = @first_screen, selection = @selection, engine = @engine WHERE id = @id',
    ),
    listJobs: db.prepare('SELECT * FROM jobs WHERE token_id = ? ORDER BY seq DESC LIMIT ?'),
    listJobsWithStatus: db.prepare('SELECT * FROM jobs WHERE token_id = ? AND status = ? ORDER BY seq DESC LIMIT ?'),
    jobsWithStatus: db.prepare('SELECT * FROM jobs WHERE status = ? ORDER BY seq'),
    stats: db.prepare(
      "SELECT COUNT(*) AS total, SUM(status = 'queued') AS queued, SUM(status = 'processing') AS processing, SUM(status = 'done') AS done, SUM(status = 'failed') AS failed, COALESCE(SUM(css_bytes), 0) AS bytes FROM jobs WHERE token_id = ?",
    ),
    generations: db.prepare('SELECT count FROM generations WHERE token_id = ? AND period = ?'),
    countGeneration: db.prepare('INSERT INTO generations (token_id, period, count) VALUES (?, ?, 1) ON CONFLICT (token_id, period) DO UPDATE SET count = count + 1'),
    idempotentJob: db.prepare('SELECT job_id FROM idempotency WHERE token_id = ? AND key = ? AND at >= ?'),
    remember: db.prepare('INSERT INTO idempotency (token_id, key, job_id, at) VALUES (?, ?, ?, ?) ON CONFLICT (token_id, key) DO UPDATE SET job_id = excluded.job_id, at = excluded.at'),
  }

  return translatingBusy({
    addToken(record) {
      statements.addToken.run({
        id: record.id,
        hash: record.hash,
        plan: record.plan,
        expires_at: record.expiresAt,
        quota: record.quota,
        created_at: record.createdAt,
        revoked_at: record.revokedAt,
      })
    },
    tokenByHash(hash) {
      const row = statements.tokenByHash.get(hash) as TokenRow | undefined
      return row ? tokenFromRow(row) : null
    },
    listTokens() {
      return (statements.listTokens.all() as TokenRow[]).map(tokenFromRow)
    },
    revokeToken(id, at) {
      return statements.revokeToken.run(at, id).changes > 0
    },

    addJob(job) {
      statements.addJob.run(jobToRow(job))
    },
    job(id) {
      const row = statements.job.get(id) as JobRow | undefined
      return row ? jobFromRow(row) : null
    },
    updateJob(id, patch) {
      const row = statements.job.get(id) as JobRow | undefined
      if (!row) return null
      const job = { ...jobFromRow(row), ...patch }
      statements.updateJob.run(jobToRow(job))
      return jobFromRow(jobToRow(job))
    },
    listJobs(tokenId, query) {
      const rows = (query.status === undefined ? statements.listJobs.all(tokenId, query.limit) : statements.listJobsWithStatus.all(tokenId, query.status, query.limit)) as JobRow[]
      return rows.map(jobFromRow)
    },
    jobsWithStatus(status) {
      return (statements.jobsWithStatus.all(status) as JobRow[]).map(jobFromRow)
    },
    stats(tokenId) {
      const row = statements.stats.get(tokenId) as { total: number; queued: number | null; processing: number | null; done: number | null; failed: number | null; bytes: number }
      const stats: JobStats = {
        jobsTotal: row.total,
        jobsQueued: row.queued ?? 0,
        jobsProcessing: row.processing ?? 0,
        jobsDone: row.done ?? 0,
        jobsFailed: row.failed ?? 0,
        cssBytesTotal: row.bytes,
      }
      return stats
    },

    generations(tokenId, period) {
      return (statements.generations.get(tokenId, period) as { count: number } | undefined)?.count ?? 0
    },
    countGeneration(tokenId, period) {
      statements.countGeneration.run(tokenId, period)
    },

    idempotentJob(tokenId, key, notBefore) {
      return (statements.idempotentJob.get(tokenId, key, notBefore) as { job_id: string } | undefined)?.job_id ?? null
    },
    rememberIdempotency(tokenId, key, jobId, at) {
      statements.remember.run(tokenId, key, jobId, at)
    },

    transaction(work) {
      // IMMEDIATE takes the write lock first: a busy database refuses before any part is written.
      return db.transaction(work).immediate()
    },

    close() {
      db.close()
    },
  }, file)
}
