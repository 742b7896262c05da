/**
 * The egress proxy: the one way out for the browser's connections, in every mode. Chromium is
 * pointed at it with loopback not bypassed and resolves no name itself, so the page, its
 * redirects, subresources, workers, WebSockets, prefetches and preconnects all arrive here as
 * a plain proxied request or a CONNECT tunnel. Each connection's host is admitted here once
 * (the service's network policy, or every host when the engine has none), within a bound: a
 * name whose answer is lost costs that bound, not the resolver's retries. The connection goes
 * to an address that was checked, so a second answer (DNS rebinding) has no one to reach.
 *
 * Each browser context gets a gate of its own (its own port), so what it refused or could not
 * reach is known to be that job's, the job can cut a host that holds its page, and closing the
 * gate cuts whatever the context left open.
 */
import { createServer as createHttpServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, createServer as createNetServer, isIP, type AddressInfo, type Server, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { resolveHost } from './resolve.ts'

/**
 * Where one connection may go: the addresses checked for it (connect to these, never resolve
 * again); or why the network policy refuses it; or why its name gave no address.
 */
export type Admission = { addresses: string[] } | { refused: string } | { unresolved: string }

/** The check every connection passes: `host:port`, for a request in one of `schemes` (a CONNECT tunnel may carry https or a WebSocket). */
export type Admit = (host: string, port: number, schemes: readonly string[]) => Promise<Admission>

/**
 * Why a host of a job got no connection: the policy refused it, it could not be reached, the
 * job cut it, or only the page's own hosts were let out. `silent`: cut because a request of it
 * got no answer within the third-party bound, and it had sent the job nothing at all.
 */
export type Unreached = { kind: 'refused' | 'unreachable' | 'cut' | 'blocked'; reason: string; silent?: true }

/**
 * One browser context's way out: an HTTP proxy (`server`, `http://127.0.0.1:PORT`) that every
 * connection of the context goes through, and the record of one job's connections through it.
 */
export interface EgressGate {
  readonly server: string
  /** Hosts (`host:port`, see {@link authorityOf}) of this job that got no connection, and why (the first reason counts). */
  readonly unreached: ReadonlyMap<string, Unreached>
  /** From now on only these `host:port`s are let out (the page's own); null lets every admitted host out. */
  only(authorities: readonly string[] | null): void
  /**
   * Ends every connection to `host:port` now and refuses new ones for the rest of the job.
   * `unanswered`: it left a request unanswered past the third-party bound; it is recorded
   * `silent` only if it sent the job nothing at all (a host that answered one request is slow, not gone).
   */
  cut(authority: string, reason: string, unanswered?: boolean): void
  /** Starts a new job's record (a warm context's gate serves one job after another). */
  reset(): void
  /** Cuts every connection made through it. */
  close(): void
}

export interface EgressProxy {
  open(): Promise<EgressGate>
  close(): Promise<void>
}

/** Headers that describe one hop, not the request: never passed on (RFC 9110 §7.6.1), nor the proxy's own. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'])
/** A tunnel or upstream that says nothing for this long is dropped; the job's deadline bounds the rest. */
const IDLE_TIMEOUT_MS = 30_000
const CONNECT_TIMEOUT_MS = 10_000
/**
 * Longest a host's admission (its name's lookup) may take. A resolver whose query got no
 * answer retries after 5 s (glibc's default); one retry is let through, a name that stays
 * silent is given up on. The job cuts a third-party host long before.
 */
export const RESOLVE_TIMEOUT_MS = 10_000

/** A host as the gate sees it: lower case, no IPv6 brackets, no trailing dot. */
function hostKey(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
}

/** What the gate keys a job's connections by: `host:port` (an IPv6 host in brackets), the port always written. */
export function authorityKey(hostname: string, port: number): string {
  const host = hostKey(hostname)
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/** A `host:port` as a user writes it: without the scheme's default port. */
export function shownHost(authority: string): string {
  return authority.replace(/:(443|80)$/, '')
}

/** The authority of an http(s) or ws(s) URL as the gate keys it; null for any other URL. */
export function authorityOf(url: string): string | null {
  if (!URL.canParse(url)) return null
  const parsed = new URL(url)
  const secure = parsed.protocol === 'https:' || parsed.protocol === 'wss:'
  if (!secure && parsed.protocol !== 'http:' && parsed.protocol !== 'ws:') return null
  return authorityKey(parsed.hostname, parsed.port ? Number(parsed.port) : secure ? 443 : 80)
}

/** The engine's own admission when it is given no policy (embedded mode renders its own build): every host, resolved by {@link resolveHost}. */
export const admitEveryHost: Admit = async (host) => {
  if (isIP(host)) return { addresses: [host] }
  try {
    const addresses = await resolveHost(host)
    return addresses.length ? { addresses } : { unresolved: `${host} does not resolve` }
  } catch {
    return { unresolved: `${host} does not resolve` }
  }
}

class Gate implements EgressGate {
  readonly server: string
  readonly unreached = new Map<string, Unreached>()
  readonly #listener: Server
  /** Every connection of the context, either side, so `close` can cut it. */
  readonly #connections = new Set<Duplex>()
  /** The connections carrying a host's traffic now, so `cut` can end them. */
  readonly #byHost = new Map<string, Set<Duplex>>()
  #only: Set<string> | null = null
  /** Hosts that sent this job anything (a response, a byte through a tunnel). */
  readonly #answered = new Set<string>()
  readonly agent = new Agent({ keepAlive: true, maxSockets: 8 })
  #onClose: () => void

  constructor(listener: Server, onClose: () => void) {
    this.#listener = listener
    this.#onClose = onClose
    this.server = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
  }

  hold(connection: Duplex): void {
    // A kept-alive upstream socket comes back for each request it carries.
    if (this.#connections.has(connection)) return
    this.#connections.add(connection)
    connection.once('close', () => {
      this.#connections.delete(connection)
      for (const carried of this.#byHost.values()) carried.delete(connection)
    })
  }

  /** A held `connection` carries `host`'s traffic until it closes or the returned release says it is done. */
  carry(host: string, connection: Duplex): () => void {
    let carried = this.#byHost.get(host)
    if (!carried) this.#byHost.set(host, (carried = new Set()))
    const held = carried
    held.add(connection)
    return () => void held.delete(connection)
  }

  /** Why a connection to `host` is not let out before it is admitted: the job cut it, or lets out only its own hosts. */
  closedTo(host: string): Unreached | null {
    const known = this.unreached.get(host)
    if (known?.kind === 'cut' || known?.kind === 'blocked') return known
    if (this.#only !== null && !this.#only.has(host)) return this.note(host, { kind: 'blocked', reason: 'only the page’s own hosts are contacted' })
    return null
  }

  /** Records why `host` got no connection (the first reason counts), and says it. */
  note(host: string, why: Unreached): Unreached {
    if (!this.unreached.has(host)) this.unreached.set(host, why)
    return this.unreached.get(host)!
  }

  only(authorities: readonly string[] | null): void {
    this.#only = authorities === null ? null : new Set(authorities)
  }

  /** `host` sent this job something. */
  answered(host: string): void {
    this.#answered.add(host)
  }

  cut(authority: string, reason: string, unanswered = false): void {
    const silent = unanswered && !this.#answered.has(authority)
    this.unreached.set(authority, { kind: 'cut', reason, ...(silent ? { silent: true as const } : {}) })
    for (const connection of this.#byHost.get(authority) ?? []) connection.destroy()
    this.#byHost.delete(authority)
  }

  reset(): void {
    this.unreached.clear()
    this.#answered.clear()
    this.#only = null
  }

  close(): void {
    this.#listener.close()
    for (const connection of this.#connections) connection.destroy()
    this.agent.destroy()
    this.#onClose()
  }
}

/**
 * The proxy every gate hands its connections to. `admit` decides where a connection may go;
 * `log` hears of every connection the policy refused (once per job and gate).
 */
export function createEgressProxy(admit: Admit, log: (line: Record<string, unknown>) => void, resolveTimeoutMs = RESOLVE_TIMEOUT_MS): EgressProxy {
  const gates = new Set<Gate>()
  const gateOf = new WeakMap<Socket, Gate>()

  /** Every address the admission checked, tried in turn; never one it did not see. Null when the connection is not let out (recorded on the gate). */
  const admitted = async (gate: Gate, host: string, port: number, schemes: readonly string[]): Promise<string[] | null> => {
    const key = authorityKey(host, port)
    if (gate.closedTo(key)) return null
    const admission = await withinBound(admit(host, port, schemes), hostKey(host), resolveTimeoutMs)
    // Cut or blocked while its name was looked up.
    if (gate.closedTo(key)) return null
    if ('addresses' in admission) return admission.addresses
    if ('unresolved' in admission) {
      gate.note(key, { kind: 'unreachable', reason: admission.unresolved })
      return null
    }
    // Once per job: a page that aims at a thousand internal hosts makes one line.
    if (![...gate.unreached.values()].some((why) => why.kind === 'refused')) log({ event: 'egress_refused', host: host.slice(0, 200), reason: admission.refused })
    gate.note(key, { kind: 'refused', reason: admission.refused })
    return null
  }

  const proxy = createHttpServer({ keepAliveTimeout: IDLE_TIMEOUT_MS })
  proxy.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const gate = gateOf.get(req.socket)
    const target = URL.canParse(req.url ?? '') ? new URL(req.url!) : null
    // https comes as CONNECT; a plain request is only ever http.
    if (!gate || !target || target.protocol !== 'http:') return refuseRequest(res, 'Only absolute http URLs are proxied.')
    void forward(gate, target, req, res)
  })
  proxy.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const gate = gateOf.get(req.socket)
    const authority = connectTarget(req.url ?? '')
    // A browser that hangs up while the name resolves must not take the process down.
    client.on('error', () => client.destroy())
    if (!gate || !authority) return refuseTunnel(client)
    gate.hold(client)
    void tunnel(gate, authority, client, head)
  })
  proxy.on('upgrade', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const gate = gateOf.get(req.socket)
    const target = URL.canParse(req.url ?? '') ? new URL(req.url!) : null
    client.on('error', () => client.destroy())
    if (!gate || !target || target.protocol !== 'http:') return refuseTunnel(client)
    gate.hold(client)
    void upgrade(gate, target, req, client, head)
  })
  proxy.on('clientError', (_error, socket) => socket.destroy())

  async function forward(gate: Gate, target: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = authorityKey(target.hostname, portOf(target))
    // One request at a time on a proxy connection: cutting the host ends this request, and only it.
    const release = gate.carry(host, req.socket)
    res.once('close', release)
    const addresses = await admitted(gate, target.hostname, portOf(target), [target.protocol])
    if (!addresses) return refuseRequest(res, `Not let out: ${gate.unreached.get(host)?.reason ?? target.host}`)
    // The checked address, with the page's own Host header: the server sees what it would have seen.
    const upstream = httpRequest({
      host: addresses[0],
      family: isIP(addresses[0]!),
      port: portOf(target),
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers: passedHeaders(req.rawHeaders),
      setHost: false,
      agent: gate.agent,
      timeout: IDLE_TIMEOUT_MS,
    })
    upstream.on('socket', (socket) => gate.hold(socket))
    upstream.on('response', (answer) => {
      gate.answered(host)
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passedHeaders(answer.rawHeaders))
      answer.pipe(res)
    })
    upstream.on('timeout', () => upstream.destroy())
    upstream.on('error', (error) => {
      gate.note(host, { kind: 'unreachable', reason: `${target.host} could not be reached (${codeOf(error)})` })
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('The site could not be reached.')
      else res.destroy()
    })
    // The browser hung up, or the job cut the host: the upstream request goes too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    req.pipe(upstream)
  }

  async function tunnel(gate: Gate, authority: { host: string; port: number }, client: Duplex, head: Buffer): Promise<void> {
    const host = authorityKey(authority.host, authority.port)
    gate.carry(host, client)
    const addresses = await admitted(gate, authority.host, authority.port, ['https:', 'http:'])
    if (!addresses) return refuseTunnel(client)
    const upstream = await connected(addresses, authority.port).catch((error: unknown) => {
      gate.note(host, { kind: 'unreachable', reason: `${hostKey(authority.host)} could not be reached (${codeOf(error)})` })
      return null
    })
    if (!upstream) return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
    gate.hold(upstream)
    // Cut while it connected: the client is gone, and the new socket goes too.
    if (client.destroyed) return void upstream.destroy()
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length) upstream.write(head)
    splice(client, upstream)
    // After the pipe: it reads on as before, and this hears the first byte too.
    upstream.once('data', () => gate.answered(host))
  }

  async function upgrade(gate: Gate, target: URL, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    gate.carry(authorityKey(target.hostname, portOf(target)), client)
    const addresses = await admitted(gate, target.hostname, portOf(target), ['http:'])
    if (!addresses) return refuseTunnel(client)
    const upstream = await connected(addresses, portOf(target)).catch(() => null)
    if (!upstream) return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
    gate.hold(upstream)
    if (client.destroyed) return void upstream.destroy()
    const headers: string[] = []
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase()
      if (!name.startsWith('proxy-')) headers.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
    }
    upstream.write(`${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`)
    if (head.length) upstream.write(head)
    splice(client, upstream)
  }

  return {
    async open() {
      let gate: Gate | null = null
      const listener = createNetServer((socket) => {
        if (!gate) return socket.destroy()
        gateOf.set(socket, gate)
        gate.hold(socket)
        proxy.emit('connection', socket)
      })
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject)
        listener.listen(0, '127.0.0.1', () => resolve())
      })
      const opened: Gate = new Gate(listener, () => gates.delete(opened))
      gate = opened
      gates.add(opened)
      return opened
    },
    async close() {
      for (const gate of [...gates]) gate.close()
      // It never listened itself (its gates hand it their connections): nothing else to stop.
      proxy.closeAllConnections()
    },
  }
}

/** The admission, or `unresolved` once its bound passed (a lookup cannot be called back; its answer is dropped). */
async function withinBound(admission: Promise<Admission>, host: string, boundMs: number): Promise<Admission> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<Admission>((resolve) => (timer = setTimeout(() => resolve({ unresolved: `${host} did not resolve within ${(boundMs / 1000).toFixed(1)} s` }), boundMs)))
  try {
    return await Promise.race([admission.catch(() => ({ unresolved: `${host} could not be checked` })), late])
  } finally {
    clearTimeout(timer)
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? 'failed'
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
}

/** `host:port` of a CONNECT request, IPv6 literal in brackets; null when it is anything else. */
function connectTarget(text: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]/\s]+):(\d{1,5})$/i.exec(text)
  if (!match) return null
  const port = Number(match[2])
  if (port < 1 || port > 65_535) return null
  return { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port }
}

/** The end-to-end headers, in their order and case, without hop-by-hop ones. */
function passedHeaders(raw: string[]): string[] {
  const kept: string[] = []
  for (let i = 0; i < raw.length; i += 2) if (!HOP_HEADERS.has(raw[i]!.toLowerCase())) kept.push(raw[i]!, raw[i + 1]!)
  return kept
}

async function connected(addresses: string[], port: number): Promise<Socket> {
  let last: unknown
  for (const address of addresses) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connect({ host: address, port, timeout: CONNECT_TIMEOUT_MS })
        socket.once('connect', () => {
          socket.setTimeout(IDLE_TIMEOUT_MS)
          resolve(socket)
        })
        socket.once('timeout', () => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })))
        socket.once('error', reject)
      })
    } catch (error) {
      last = error
    }
  }
  throw last
}

/** Both ways until either side ends; an error on one side closes the other. */
function splice(a: Duplex, b: Duplex): void {
  a.pipe(b).on('error', () => a.destroy())
  b.pipe(a).on('error', () => b.destroy())
  a.on('error', () => b.destroy())
  b.on('error', () => a.destroy())
  a.on('close', () => b.destroy())
  b.on('close', () => a.destroy())
}

function refuseRequest(res: ServerResponse, message: string): void {
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(message)
}

function refuseTunnel(client: Duplex): void {
  client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
}
