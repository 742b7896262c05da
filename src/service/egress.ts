/**
 * The egress proxy: the one way out for the browser's connections when the service renders
 * for callers. Chromium is pointed at it with loopback not bypassed, so the page, its
 * redirects, subresources, workers, WebSockets, prefetches and preconnects all arrive here
 * as a plain proxied request or a CONNECT tunnel. Each connection's host is resolved here
 * once, every address is checked against the network policy, and the connection goes to an
 * address that was checked: the browser never resolves a name itself, so a second answer
 * (DNS rebinding) has no one to reach.
 *
 * Each browser context gets a gate of its own (its own port), so a refusal is known to be
 * that job's, and closing the gate cuts whatever the context left open.
 */
import { createServer as createHttpServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, createServer as createNetServer, isIP, type AddressInfo, type Server, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { EgressGate } from '../engine/engine.ts'
import type { NetworkPolicy } from './network.ts'

export interface EgressProxy {
  open(): Promise<EgressGate>
  close(): Promise<void>
}

/** Headers that describe one hop, not the request: never passed on (RFC 9110 §7.6.1), nor the proxy's own. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'])
/** A tunnel or upstream that says nothing for this long is dropped; the job's deadline bounds the rest. */
const IDLE_TIMEOUT_MS = 30_000
const CONNECT_TIMEOUT_MS = 10_000

class Gate implements EgressGate {
  readonly server: string
  refused: string | null = null
  readonly #listener: Server
  readonly #connections = new Set<Duplex>()
  readonly agent = new Agent({ keepAlive: true, maxSockets: 8 })
  #onClose: () => void

  constructor(listener: Server, onClose: () => void) {
    this.#listener = listener
    this.#onClose = onClose
    this.server = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`
  }

  /** Tracks a connection of this gate's context, either side, so `close` can cut it. */
  hold(connection: Duplex): void {
    // A kept-alive upstream socket comes back for each request it carries.
    if (this.#connections.has(connection)) return
    this.#connections.add(connection)
    connection.once('close', () => this.#connections.delete(connection))
  }

  refuse(reason: string): void {
    this.refused ??= reason
  }

  reset(): void {
    this.refused = null
  }

  close(): void {
    this.#listener.close()
    for (const connection of this.#connections) connection.destroy()
    this.agent.destroy()
    this.#onClose()
  }
}

export function createEgressProxy(policy: NetworkPolicy, log: (line: Record<string, unknown>) => void): EgressProxy {
  const gates = new Set<Gate>()
  const gateOf = new WeakMap<Socket, Gate>()

  /** Every address the policy checked, tried in turn; never one it did not see. */
  const admitted = async (gate: Gate, host: string, port: number, schemes: readonly string[]): Promise<string[] | null> => {
    const admission = await policy.admit(host, port, schemes).catch(() => ({ refused: `${host} could not be checked` }))
    if ('addresses' in admission) return admission.addresses
    if (gate.refused === null) log({ event: 'egress_refused', host: host.slice(0, 200), reason: admission.refused })
    gate.refuse(admission.refused)
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
    const authority = authorityOf(req.url ?? '')
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
    const addresses = await admitted(gate, target.hostname, portOf(target), [target.protocol])
    if (!addresses) return refuseRequest(res, `Refused: ${gate.refused}`)
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
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passedHeaders(answer.rawHeaders))
      answer.pipe(res)
    })
    upstream.on('timeout', () => upstream.destroy())
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('The site could not be reached.')
      else res.destroy()
    })
    req.pipe(upstream)
  }

  async function tunnel(gate: Gate, authority: { host: string; port: number }, client: Duplex, head: Buffer): Promise<void> {
    const addresses = await admitted(gate, authority.host, authority.port, ['https:', 'http:'])
    if (!addresses) return refuseTunnel(client)
    const upstream = await connected(addresses, authority.port).catch(() => null)
    if (!upstream) return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
    gate.hold(upstream)
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length) upstream.write(head)
    splice(client, upstream)
  }

  async function upgrade(gate: Gate, target: URL, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const addresses = await admitted(gate, target.hostname, portOf(target), ['http:'])
    if (!addresses) return refuseTunnel(client)
    const upstream = await connected(addresses, portOf(target)).catch(() => null)
    if (!upstream) return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n')
    gate.hold(upstream)
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

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
}

/** `host:port` of a CONNECT request, IPv6 literal in brackets; null when it is anything else. */
function authorityOf(text: string): { host: string; port: number } | null {
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
        socket.once('timeout', () => socket.destroy(new Error('connect timeout')))
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
