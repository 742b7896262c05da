/**
 * `startService(options)`: the reference Critical CSS Generation API on node:http. Bodies
 * are read up to 16 KiB (413 beyond), every answer is JSON, a fault is a 500 that says
 * nothing internal, and `close()` stops accepting (503 + Retry-After), lets jobs in flight
 * finish or go back to the queue, then closes the store and the engine.
 */
import { existsSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { MAX_BODY_BYTES, RATE_WINDOW_MS, errorBodyToWire, type Plan } from '../contract/api-contract.ts'
import { hashToken } from './auth.ts'
import type { Admit } from '../engine/egress.ts'
import { EngineError, type Engine } from '../engine/engine.ts'
import type { EngineChoice } from '../shared/engines.ts'
import { localWindows, type RateWindows } from './limits.ts'
import { createNetworkPolicy, systemResolver, type NetworkPolicy, type Resolver } from './network.ts'
import { JobQueue } from './queue.ts'
import { handleApiRequest, type ApiAnswer } from './routes.ts'
import { fromLocal } from './store/local.ts'
import { createMemoryStore } from './store/memory.ts'
import type { RenderQueue } from './shared-queue.ts'
import { stateShown, tokenCommand } from './start-line.ts'
import type { Store, StoredJob, TokenRecord } from './store/types.ts'

export interface ServiceToken {
  token: string
  plan: Plan
  /** ISO time after which generate answers 402 subscription_expired. */
  expiresAt?: string
  /** Generations per calendar month; default: the plan's. */
  quota?: number
}

export type ServiceRole = 'api' | 'worker' | 'all'

export interface ServiceOptions {
  /** 0 (default): an ephemeral port. */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** Tokens to accept (kept as hashes), besides those a `dataDir` store already has. */
  tokens?: ServiceToken[]
  /** Keep jobs, results, usage and tokens in SQLite here; default: in memory. */
  dataDir?: string
  /**
   * Keep every piece of shared state on Redis at this URL (`redis://HOST:PORT`), for many
   * service processes on one state: tokens, jobs, quotas, idempotency keys and the rate
   * windows, exact across processes, and one job queue (BullMQ) that every render worker
   * takes from. Wins over `dataDir`.
   */
  redisUrl?: string
  /**
   * With `redisUrl`: `api` answers requests and renders nothing (no browser), `worker`
   * renders jobs and answers no request (it does not listen), `all` (default) both.
   */
  role?: ServiceRole
  /** With `redisUrl`: how long a render worker may stop answering before its job goes to another. Default 30 000 ms. */
  workerLockMs?: number
  /**
   * What makes the CSS: `chromium` (default: the first Chrome/Chromium found that starts, or
   * the start fails), `static` (no browser: every rule a page's elements use), `auto`
   * (Chromium when a browser starts, else static), or an Engine of your own.
   */
  engine?: Engine | EngineChoice
  /** Jobs rendered at once. Default 2. */
  workers?: number
  /** A job's deadline; past it the job fails with `timeout`. Default 60 000 ms. */
  jobTimeoutMs?: number
  /** Fetch loopback and private addresses too (the embedded mode, bound to 127.0.0.1). Default false. */
  allowPrivateNetworks?: boolean
  /**
   * Origins fetched even when they are internal, like `https://staging.internal:8443`: an
   * internal site the service must render. Everything else internal stays refused. Default: none.
   */
  allowOrigins?: string[]
  /** Length of the rate limit's sliding window. Default 60 000 ms (the contract's minute). */
  rateWindowMs?: number
  /** How long `close()` lets jobs in flight finish before putting them back in the queue. Default 10 000 ms. */
  shutdownGraceMs?: number
  /** Most jobs one token may have waiting; past it, generate answers 503 with Retry-After. Default 1 000. */
  maxQueuedPerToken?: number
  /** Most jobs waiting in all, every token together; past it, generate answers 503. Default 10 000. */
  maxQueued?: number
  /** Time a client has to send a request's headers; past it, 408 and the connection closes. Default 10 000 ms. */
  headersTimeoutMs?: number
  /** Time a client has to send a whole request, body included; past it, 408. Default 30 000 ms. */
  requestTimeoutMs?: number
  /** Structured log lines (never a token). Default: none. */
  log?: (line: Record<string, unknown>) => void
  /** Resolves hostnames for the network policy; default: the system resolver. */
  resolve?: Resolver
  /** Time source, for tests. */
  now?: () => number
}

export interface RunningService {
  /** Base URL, e.g. `http://127.0.0.1:8787`; empty for a render worker (`role: 'worker'`), which does not listen. */
  url: string
  close(): Promise<void>
}

const CLOSE_GRACE_MS = 10_000
const DEFAULT_WORKERS = 2
const DEFAULT_WORKER_LOCK_MS = 30_000
const SHUTDOWN_RETRY_AFTER_S = 5

/** The id `token list` shows: derived from the hash, so the same token keeps its id. */
export function tokenId(hash: string): string {
  return `tok_${hash.slice(0, 16)}`
}

/** What the store keeps of a token: its hash and the id derived from it. */
export function tokenRecord(token: ServiceToken, createdAt: string): TokenRecord {
  const hash = hashToken(token.token)
  return {
    id: tokenId(hash),
    hash,
    plan: token.plan,
    expiresAt: token.expiresAt ?? null,
    quota: token.quota ?? null,
    createdAt,
    revokedAt: null,
  }
}

/** Where the state lives: Redis, SQLite or memory; the rate windows beside it. */
async function openState(options: ServiceOptions): Promise<{ store: Store; windows: RateWindows }> {
  const windowMs = options.rateWindowMs ?? RATE_WINDOW_MS
  if (options.redisUrl !== undefined) {
    const { openRedisState } = await import('./store/redis.ts')
    const state = await openRedisState(options.redisUrl)
    return { store: state.store, windows: state.windows(windowMs) }
  }
  if (options.dataDir === undefined) return { store: fromLocal(createMemoryStore()), windows: localWindows(windowMs) }
  const { openSqliteStore } = await import('./store/sqlite.ts')
  return { store: fromLocal(openSqliteStore(options.dataDir)), windows: localWindows(windowMs) }
}

/** A service extra beside the contract's endpoints: whether this process takes requests (200) or is stopping (503). */
export const HEALTH_PATH = '/health'

/**
 * One of this package's engines, loaded only when a service runs without an engine of its own.
 * Every connection of its pages (a browser context's, or the static engine's fetches) is
 * admitted by the network policy, at the engine's egress gate. A browser is launched before the
 * service answers: one that would not be held to the gate (or none at all, for `chromium`)
 * stops the start with the reason, rather than failing every job.
 */
async function ownEngine(choice: EngineChoice, policy: NetworkPolicy, workers: number, log: (line: Record<string, unknown>) => void): Promise<{ engine: Engine; renders: string }> {
  const { startEngine } = await import('../engine/start-engine.ts')
  const admit: Admit = (host, port, schemes) => policy.admit(host, port, schemes)
  const started = await startEngine(choice, { chromium: { admit, warmPages: workers + 1, log }, static: { admit, log } })
  for (const failure of started.failed) log({ event: 'browser_did_not_start', browser: failure.browser, reason: failure.reason })
  const renders = started.browser === null ? `the static engine${started.fellBack ? ' (no browser found starts)' : ''}` : `Chromium ${started.browser.version} (${started.browser.executablePath})`
  return { engine: started.engine, renders }
}

function send(res: ServerResponse, answer: ApiAnswer): void {
  const body = JSON.stringify(answer.body)
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...answer.headers })
  res.end(body)
}

/** Reads the body up to the limit; null when it is larger. */
/**
 * The body as text, or null once it is over the limit: then nothing more is read (the 413
 * goes out at once and the connection closes), whoever sent it and however it is framed.
 */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > MAX_BODY_BYTES) {
      resolve(null)
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk)
        return
      }
      req.off('data', onData)
      req.pause()
      resolve(null)
    }
    req.on('data', onData)
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** An over-long body is not read to its end: the answer goes, then the connection. */
function closeAfter(res: ServerResponse): void {
  res.on('finish', () => {
    // Half-close first, so the client can read the answer; then let go of whatever it still sends.
    res.socket?.end()
    setTimeout(() => res.socket?.destroy(), 1000).unref()
  })
}

/** What a connection that never made a whole request is told, by why Node gave up on it. */
function clientErrorAnswer(code: string | undefined): { status: number; reason: string; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, reason: 'Request Header Fields Too Large', message: 'The request headers are too large.' }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, reason: 'Request Timeout', message: 'The request did not arrive in time.' }
  return { status: 400, reason: 'Bad Request', message: 'The request is not valid HTTP.' }
}

export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const now = options.now ?? Date.now
  const log = options.log ?? (() => {})
  // A logger that throws must not take a request, or the process, down with it.
  const safeLog = (line: Record<string, unknown>): void => {
    try {
      log(line)
    } catch {
      // nothing to do: the line is lost
    }
  }
  const allowPrivateNetworks = options.allowPrivateNetworks ?? false
  const policy = createNetworkPolicy({ allowPrivateNetworks, allowOrigins: options.allowOrigins ?? [], resolve: options.resolve ?? systemResolver })
  // A data dir this start creates goes again if the start fails: a failed start leaves nothing behind.
  const newDataDir = options.redisUrl === undefined && options.dataDir !== undefined && !existsSync(options.dataDir) ? options.dataDir : null
  const forgetNewDataDir = (): void => {
    if (newDataDir !== null) rmSync(newDataDir, { recursive: true, force: true })
  }
  // The store first: a damaged database stops the start before a browser is launched.
  let state: Awaited<ReturnType<typeof openState>>
  try {
    state = await openState(options)
  } catch (error) {
    forgetNewDataDir()
    throw error
  }
  const { store, windows } = state
  const role = options.role ?? 'all'
  let engine: Engine | null = null
  // What renders, as the start line names it.
  let renders = 'nothing (role api)'
  try {
    if (role !== 'all' && options.redisUrl === undefined) throw new TypeError(`role "${role}" needs the state on Redis (redisUrl / --redis): a process of its own state has no one to share work with.`)
    const given = options.engine ?? 'chromium'
    if (typeof given === 'object' && role !== 'api') {
      engine = given
      renders = 'the engine given to the service'
    } else if (typeof given === 'string' && role !== 'api') {
      const started = await ownEngine(given, policy, options.workers ?? DEFAULT_WORKERS, safeLog)
      engine = started.engine
      renders = started.renders
    }
  } catch (error) {
    await store.close()
    forgetNewDataDir()
    throw error
  }
  // A start that fails past this point lets go of what it opened: the store's file, the browser and its gate, a data dir it made.
  let started = false
  const release = async (): Promise<void> => {
    await store.close()
    await engine?.close?.()
    if (!started) forgetNewDataDir()
  }
  const createdAt = new Date(now()).toISOString()
  try {
    for (const token of options.tokens ?? []) {
      const record = tokenRecord(token, createdAt)
      if (!(await store.tokenByHash(record.hash))) await store.addToken(record)
    }
  } catch (error) {
    await release()
    throw error
  }
  if (!(await store.listTokens()).some((token) => token.revokedAt === null)) {
    // A new or emptied database answers 401 to everyone: say so once, where the operator looks.
    const command = tokenCommand(options)
    safeLog({ event: 'no_tokens', message: `No API token is active (${stateShown(options)}): every request will get 401.${command ? ` Create one with \`${command}\`.` : ''}` })
  }
  const queueOptions = {
    store,
    workers: options.workers ?? DEFAULT_WORKERS,
    jobTimeoutMs: options.jobTimeoutMs ?? 60_000,
    maxQueuedPerToken: options.maxQueuedPerToken ?? 1_000,
    maxQueued: options.maxQueued ?? 10_000,
    now,
    log: safeLog,
    beforeRun: allowPrivateNetworks
      ? undefined
      : async (job: StoredJob) => {
          const refused = await policy.refusedResolution(new URL(job.url))
          if (refused) throw new EngineError('blocked_url', `The service does not fetch this page: ${refused}.`)
        },
  }
  let queue: RenderQueue
  try {
    queue =
      options.redisUrl !== undefined
        ? (await import('./shared-queue.ts')).openSharedQueue({ ...queueOptions, redisUrl: options.redisUrl, engine, lockMs: options.workerLockMs ?? DEFAULT_WORKER_LOCK_MS })
        : new JobQueue({ ...queueOptions, engine: engine! })
  } catch (error) {
    await release()
    throw error
  }
  let closing = false

  const sockets = new Set<Socket>()
  const internalError: ApiAnswer = { status: 500, headers: {}, body: errorBodyToWire({ code: 'internal', message: 'The service failed on this request.' }) }
  const server = createServer({
    headersTimeout: options.headersTimeoutMs ?? 10_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    // How often Node looks for connections past those timeouts: a slow client is let go within a second of its time.
    connectionsCheckingInterval: 1000,
  }, (req, res) => {
    const started = performance.now()
    const path = (req.url ?? '/').split('?')[0]!.slice(0, 200)
    const finish = (answer: ApiAnswer): void => {
      send(res, answer)
      safeLog({ event: 'request', method: req.method, path, status: answer.status, ms: Math.round(performance.now() - started) })
    }
    const fault = (error: unknown): void => {
      safeLog({ event: 'fault', path, error: error instanceof Error ? error.name : 'unknown' })
      if (!res.headersSent) finish(internalError)
      else res.destroy()
    }
    try {
      if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
        // For load balancers and probes: no token, no data, not logged (they ask every few seconds).
        req.resume()
        send(res, { status: closing ? 503 : 200, headers: { 'cache-control': 'no-store' }, body: { status: closing ? 'stopping' : 'ok' } })
        return
      }
      if (closing) {
        req.resume()
        finish({ status: 503, headers: { 'retry-after': String(SHUTDOWN_RETRY_AFTER_S), connection: 'close' }, body: errorBodyToWire({ code: 'unavailable', message: 'The service is shutting down.' }) })
        return
      }
      const url = new URL(req.url ?? '/', 'http://service.invalid')
      readBody(req).then(
        (body) => {
          try {
            if (body === null) {
              closeAfter(res)
              finish({ status: 413, headers: { connection: 'close' }, body: errorBodyToWire({ code: 'payload_too_large', message: `The body is larger than ${MAX_BODY_BYTES} bytes.` }) })
              return
            }
            handleApiRequest(
              { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body },
              { store, windows, queue, now, policy },
            ).then(finish, fault)
          } catch (error) {
            fault(error)
          }
        },
        () => res.destroy(),
      )
    } catch (error) {
      fault(error)
    }
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const answer = clientErrorAnswer(error.code)
    safeLog({ event: 'client-error', status: answer.status })
    if (!socket.writable) return
    const body = JSON.stringify(errorBodyToWire({ code: 'invalid_request', message: answer.message }))
    socket.end(`HTTP/1.1 ${answer.status} ${answer.reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
  })

  try {
    await queue.restore()
    // A render worker answers no request: its work comes from the shared queue.
    if (role !== 'worker') {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
      })
    }
  } catch (error) {
    // A port in use, or a store too busy to put interrupted jobs back: nothing keeps running.
    await queue.close(0)
    await release()
    throw error
  }
  started = true
  let url = ''
  if (role !== 'worker') {
    const address = server.address() as AddressInfo
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
    url = `http://${host}:${address.port}`
  }
  // The start line: everything an operator checks first, in one place.
  safeLog({
    event: role === 'worker' ? 'worker_started' : 'listening',
    ...(role === 'worker' ? {} : { url }),
    role,
    state: stateShown(options),
    workers: role === 'api' ? 0 : queueOptions.workers,
    renders,
    privateNetworks: allowPrivateNetworks,
    allowedOrigins: options.allowOrigins ?? [],
    tokenCommand: tokenCommand(options),
  })

  let closed: Promise<void> | null = null
  return {
    url,
    close() {
      closed ??= (async () => {
        closing = true
        await queue.close(options.shutdownGraceMs ?? CLOSE_GRACE_MS)
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeIdleConnections()
          setTimeout(() => {
            for (const socket of sockets) socket.destroy()
          }, 1000).unref()
        })
        await release()
        safeLog({ event: 'closed' })
      })()
      return closed
    },
  }
}
