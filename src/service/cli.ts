#!/usr/bin/env node
/**
 * `critical-css-service`: run the reference service, and manage its tokens.
 *
 *   critical-css-service serve [--port 8787] [--host 127.0.0.1] [--data-dir DIR | --redis URL] [--workers 2] [--engine chromium|static|auto|MODULE] [--log text|json]
 *   critical-css-service token create --plan free|pro|ent [--expires 2027-01-01] [--quota N] [--data-dir DIR | --redis URL]
 *   critical-css-service token list [--data-dir DIR | --redis URL]
 *   critical-css-service token revoke ID [--data-dir DIR | --redis URL]
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { PLANS, type Plan } from '../contract/api-contract.ts'
import { STOP_SIGNALS, signalExitCode, type StopSignal } from '../shared/signals.ts'
import { createToken } from './auth.ts'
import type { Engine } from '../engine/engine.ts'
import { ENGINE_CHOICES, type EngineChoice } from '../shared/engines.ts'
import { startService, tokenRecord, type ServiceRole } from './server.ts'
import { LOG_FORMATS, formatLogLine, type LogFormat } from './log-lines.ts'
import { REDIS_ENV } from './start-line.ts'
import { fromLocal } from './store/local.ts'
import type { Store } from './store/types.ts'

const DEFAULT_DATA_DIR = './critical-css-data'

/** Where a command's state is: --redis, else the env var, else the data directory. */
interface StateFlags {
  'data-dir'?: string | undefined
  redis?: string | undefined
}
const STATE_OPTIONS = { 'data-dir': { type: 'string' }, redis: { type: 'string' } } as const

function redisUrlOf(values: StateFlags): string | undefined {
  const url = values.redis ?? (process.env[REDIS_ENV] || undefined)
  if (url !== undefined && !/^rediss?:\/\//.test(url)) throw new UsageError(`--redis (or ${REDIS_ENV}) must be a redis:// or rediss:// URL`)
  if (url !== undefined && values['data-dir'] !== undefined) throw new UsageError(`--data-dir and --redis name two places for the same state: give one`)
  return url
}

const HELP = {
  main: `critical-css-service — the reference Critical CSS Generation API

Usage:
  critical-css-service serve [options]          run the API
  critical-css-service token create [options]   make a token (printed once)
  critical-css-service token list [options]     ids, plans and expiry of the tokens
  critical-css-service token revoke ID          stop accepting a token

Each command takes --help. Data lives in --data-dir (default ${DEFAULT_DATA_DIR}), or on
Redis with --redis URL (or ${REDIS_ENV}) for many service processes on one state.
`,
  serve: `critical-css-service serve — run the API

Options:
  --port N          port to listen on (default 8787; 0 picks a free one)
  --host ADDR       address to bind (default 127.0.0.1)
  --data-dir DIR    SQLite data directory (default ${DEFAULT_DATA_DIR})
  --redis URL       keep the state on Redis instead (redis://HOST:PORT; default ${REDIS_ENV}),
                    shared by every process started with it, with one job queue
  --role R          with --redis: api (answer requests, render nothing), worker (render,
                    answer nothing) or all (default)
  --worker-lock S   with --redis: seconds a render worker may stop answering before its
                    job goes to another (default 30)
  --workers N       pages rendered at once (default 2)
  --job-timeout S   seconds a page may take (default 60)
  --engine ENGINE   chromium (default: the Chrome/Chromium on this machine), static (no
                    browser: every rule a page's elements use, no fold), auto (Chromium
                    when a browser is found and starts, else static), or a module whose
                    default export is an Engine, or a function returning one
  --allow-private-networks   also fetch loopback and private addresses
  --allow-origin URL         fetch this origin even when it is internal (repeatable)

  --log FORMAT      text (default: a start line that says where it listens, its state,
                    browser, policy and how to make a token; then one line per event) or
                    json (one JSON object per line, for log collectors)

Stops gracefully on SIGTERM, SIGINT and SIGHUP: new requests get 503, running jobs finish or
go back to the queue, then it exits 0. Logs go to stdout; tokens never appear.

Packages it needs besides this one (optional peers: install what your mode uses):
  playwright-core   rendering with the Chromium engine (not for --role api, --engine static or a module)
  better-sqlite3    --data-dir (the default): 13 or later on Node 22 and 24, 12 on
                    Node 20 (other pairs crash the process, so serve refuses them)
  ioredis, bullmq   --redis
`,
  create: `critical-css-service token create — make a token

Options:
  --plan free|pro|ent   the plan (rate limit and default quota)
  --expires DATE        ISO date or time after which generate answers 402
  --quota N             generations per calendar month instead of the plan's
  --data-dir DIR        data directory (default ${DEFAULT_DATA_DIR})
  --redis URL           the Redis state instead (default ${REDIS_ENV})

The token is printed once, on stdout; only its hash is kept.
`,
  list: `critical-css-service token list — ids, plans, expiry and quota of the tokens (never the tokens)

Options:
  --data-dir DIR   data directory (default ${DEFAULT_DATA_DIR})
  --redis URL      the Redis state instead (default ${REDIS_ENV})
`,
  revoke: `critical-css-service token revoke ID — stop accepting a token (ID from token list)

Options:
  --data-dir DIR   data directory (default ${DEFAULT_DATA_DIR})
  --redis URL      the Redis state instead (default ${REDIS_ENV})
`,
}

class UsageError extends Error {}

function positiveInteger(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a whole number, got "${value}"`)
  return Number(value)
}

/** `--engine`: one of this package's (`auto`, `chromium`, `static`), else a module whose default export is an Engine. */
async function loadEngine(module: string | undefined): Promise<Engine | EngineChoice | undefined> {
  if (module === undefined) return undefined
  if ((ENGINE_CHOICES as readonly string[]).includes(module)) return module as EngineChoice
  const loaded = (await import(pathToFileURL(resolve(module)).href)) as { default?: unknown }
  const value = loaded.default
  const engine = typeof value === 'function' ? await (value as () => Engine | Promise<Engine>)() : value
  if (!engine || typeof (engine as Engine).generate !== 'function') throw new UsageError(`--engine ${module}: its default export is not an Engine (an object with generate())`)
  return engine as Engine
}

function stateOf(values: StateFlags): { redisUrl: string } | { dataDir: string } {
  const redisUrl = redisUrlOf(values)
  return redisUrl !== undefined ? { redisUrl } : { dataDir: values['data-dir'] ?? DEFAULT_DATA_DIR }
}

const ROLES = ['api', 'worker', 'all'] as const

function roleOf(values: StateFlags & { role?: string | undefined; 'worker-lock'?: string | undefined }): { role?: ServiceRole; workerLockMs?: number } {
  if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`)
  if ((values.role !== undefined || values['worker-lock'] !== undefined) && redisUrlOf(values) === undefined) throw new UsageError('--role and --worker-lock need --redis: processes share work only through Redis')
  return {
    ...(values.role !== undefined ? { role: values.role as ServiceRole } : {}),
    ...(values['worker-lock'] !== undefined ? { workerLockMs: positiveInteger(values['worker-lock'], '--worker-lock', 30) * 1000 } : {}),
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      ...STATE_OPTIONS,
      role: { type: 'string' },
      'worker-lock': { type: 'string' },
      workers: { type: 'string' },
      'job-timeout': { type: 'string' },
      engine: { type: 'string' },
      'allow-private-networks': { type: 'boolean' },
      'allow-origin': { type: 'string', multiple: true },
      log: { type: 'string' },
      help: { type: 'boolean' },
    },
  })
  if (values.help) return void process.stdout.write(HELP.serve)
  const format = (values.log ?? 'text') as LogFormat
  if (!(LOG_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--log must be one of ${LOG_FORMATS.join(', ')}, got "${values.log}"`)
  const write = (line: Record<string, unknown>): void => void process.stdout.write(formatLogLine(line, format))
  const engine = await loadEngine(values.engine)
  // Listening from before the start: a signal while the browser launches ends the process, and
  // exiting has the browser launcher kill what it started; once the service runs, it drains first.
  let service: Awaited<ReturnType<typeof startService>> | null = null
  const stop = (signal: StopSignal): void => {
    write({ event: 'stopping', signal })
    if (service === null) process.exit(signalExitCode(signal))
    else void service.close().then(() => process.exit(0))
  }
  for (const signal of STOP_SIGNALS) process.once(signal, () => stop(signal))
  service = await startService({
    port: positiveInteger(values.port, '--port', 8787),
    host: values.host ?? '127.0.0.1',
    ...stateOf(values),
    ...roleOf(values),
    workers: positiveInteger(values.workers, '--workers', 2),
    jobTimeoutMs: positiveInteger(values['job-timeout'], '--job-timeout', 60) * 1000,
    allowPrivateNetworks: values['allow-private-networks'] ?? false,
    allowOrigins: values['allow-origin'] ?? [],
    ...(engine ? { engine } : {}),
    log: write,
  })
}

async function withStore<T>(flags: StateFlags, run: (store: Store) => Promise<T>): Promise<T> {
  const redisUrl = redisUrlOf(flags)
  let store: Store
  if (redisUrl !== undefined) {
    const { openRedisState } = await import('./store/redis.ts')
    store = (await openRedisState(redisUrl)).store
  } else {
    const { openSqliteStore } = await import('./store/sqlite.ts')
    store = fromLocal(openSqliteStore(flags['data-dir'] ?? DEFAULT_DATA_DIR))
  }
  try {
    return await run(store)
  } finally {
    await store.close()
  }
}

async function token(argv: string[]): Promise<void> {
  const [action, ...rest] = argv
  if (action === 'create') {
    const { values } = parseArgs({ args: rest, options: { plan: { type: 'string' }, expires: { type: 'string' }, quota: { type: 'string' }, ...STATE_OPTIONS, help: { type: 'boolean' } } })
    if (values.help) return void process.stdout.write(HELP.create)
    if (!values.plan || !(PLANS as readonly string[]).includes(values.plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`)
    let expiresAt: string | null = null
    if (values.expires !== undefined) {
      const time = Date.parse(values.expires)
      if (Number.isNaN(time)) throw new UsageError(`--expires must be an ISO date, got "${values.expires}"`)
      // A token that is expired when made answers 402 to its first generate: a typo, not a wish.
      if (time <= Date.now()) throw new UsageError(`--expires ${values.expires} is in the past: the token would be refused (402) from its first request`)
      expiresAt = new Date(time).toISOString()
    }
    const quota = values.quota === undefined ? null : positiveInteger(values.quota, '--quota', 0)
    const secret = createToken()
    const record = tokenRecord(
      { token: secret, plan: values.plan as Plan, ...(expiresAt ? { expiresAt } : {}), ...(quota !== null ? { quota } : {}) },
      new Date().toISOString(),
    )
    await withStore(values, (store) => store.addToken(record))
    process.stderr.write(`Created ${record.id} (plan ${values.plan}${expiresAt ? `, expires ${expiresAt}` : ''}${quota !== null ? `, quota ${quota}/month` : ''}). The token, shown only now:\n`)
    process.stdout.write(`${secret}\n`)
    return
  }
  if (action === 'list') {
    const { values } = parseArgs({ args: rest, options: { ...STATE_OPTIONS, help: { type: 'boolean' } } })
    if (values.help) return void process.stdout.write(HELP.list)
    const tokens = await withStore(values, (store) => store.listTokens())
    const rows = [['id', 'plan', 'expires', 'quota', 'created', 'revoked'], ...tokens.map((t) => [t.id, t.plan, t.expiresAt ?? '-', t.quota === null ? 'plan' : String(t.quota), t.createdAt, t.revokedAt ?? '-'])]
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
    for (const row of rows) process.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}\n`)
    return
  }
  if (action === 'revoke') {
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...STATE_OPTIONS, help: { type: 'boolean' } } })
    if (values.help) return void process.stdout.write(HELP.revoke)
    const [id] = positionals
    if (!id) throw new UsageError('token revoke needs the token id (see token list)')
    const revoked = await withStore(values, (store) => store.revokeToken(id, new Date().toISOString()))
    // Well-formed, but nothing to revoke: a failure (1), not a usage error (2).
    if (!revoked) throw new Error(`no token with id ${id} (see token list)`)
    process.stdout.write(`Revoked ${id}.\n`)
    return
  }
  if (action === '--help' || action === undefined) return void process.stdout.write(HELP.main)
  throw new UsageError(`unknown token command "${action}"`)
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  if (command === 'serve') return serve(rest)
  if (command === 'token') return token(rest)
  if (command === undefined || command === '--help' || command === 'help') return void process.stdout.write(HELP.main)
  throw new UsageError(`unknown command "${command}"`)
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage = error instanceof UsageError || (error instanceof TypeError && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS'))
  process.stderr.write(`critical-css-service: ${error instanceof Error ? error.message : String(error)}${usage ? '\nRun critical-css-service --help.' : ''}\n`)
  process.exitCode = usage ? 2 : 1
})
