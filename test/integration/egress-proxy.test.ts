/**
 * The egress proxy on the wire, as Chromium speaks to it: absolute-form requests and
 * CONNECT tunnels through a gate, against real servers on 127.0.0.1. The names resolve
 * through a test resolver; the loopback servers stand for public hosts by name, and are
 * let out by `allowOrigins`.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createEgressProxy, type EgressGate, type EgressProxy } from '../../src/engine/egress.ts'
import { createNetworkPolicy } from '../../src/service/network.ts'

let upstream: Server
let port: number
let seen: { url: string; headers: IncomingHttpHeaders }[]
let lookups: string[]
let proxy: EgressProxy
let gate: EgressGate
const lines: Record<string, unknown>[] = []

beforeEach(async () => {
  seen = []
  lookups = []
  upstream = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers })
    res.writeHead(200, { 'content-type': 'text/plain', connection: 'keep-alive' }).end('upstream')
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  port = (upstream.address() as AddressInfo).port
  const policy = createNetworkPolicy({
    allowPrivateNetworks: false,
    // The upstream stands for a public site: allowed by name and port, on loopback.
    allowOrigins: [`http://site.example:${port}`, `https://site.example:${port}`],
    resolve: async (host) => {
      lookups.push(host)
      if (host === 'site.example') return ['127.0.0.1']
      if (host === 'inside.example') return ['10.0.0.5']
      throw new Error('ENOTFOUND')
    },
  })
  proxy = createEgressProxy((host, port, schemes) => policy.admit(host, port, schemes), (line) => lines.push(line))
  gate = await proxy.open()
})

afterEach(async () => {
  await proxy.close()
  upstream.closeAllConnections()
  await new Promise<void>((resolve) => upstream.close(() => resolve()))
})

function viaProxy(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { port: gatePort } = new URL(gate.server)
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: gatePort, path: url, headers: { host: new URL(url).host, ...headers } }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Opens a CONNECT tunnel; resolves with the proxy's status line and the socket. */
function tunnel(authority: string): Promise<{ status: string; socket: Socket }> {
  const { port: gatePort } = new URL(gate.server)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(gatePort), '127.0.0.1', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`))
    socket.once('data', (chunk: Buffer) => resolve({ status: chunk.toString('latin1').split('\r\n')[0]!, socket }))
    socket.once('error', reject)
  })
}

describe('egress proxy', () => {
  it('forwards an allowed absolute-form request to the checked address, with the page\'s Host and without hop-by-hop headers', async () => {
    const answer = await viaProxy(`http://SITE.example.:${port}/a.css?x=1`, { 'proxy-connection': 'keep-alive', 'x-kept': 'yes' })
    expect(answer).toEqual({ status: 200, body: 'upstream' })
    expect(seen).toHaveLength(1)
    expect(seen[0]!.url).toBe('/a.css?x=1')
    expect(seen[0]!.headers.host).toBe(`site.example.:${port}`)
    expect(seen[0]!.headers['x-kept']).toBe('yes')
    expect(seen[0]!.headers['proxy-connection']).toBeUndefined()
    expect(lookups).toEqual(['site.example'])
    expect(gate.unreached.size).toBe(0)
  })

  it('refuses a request to an internal address with 403, remembers why, and logs it once', async () => {
    lines.length = 0
    expect((await viaProxy('http://inside.example/')).status).toBe(403)
    expect((await viaProxy(`http://127.0.0.1:${port}/`)).status).toBe(403)
    expect(seen).toEqual([])
    expect(gate.unreached.get('inside.example:80')).toEqual({ kind: 'refused', reason: 'inside.example is refused by the network policy' })
    expect(lines.filter((line) => line.event === 'egress_refused')).toHaveLength(1)
  })

  it('tunnels CONNECT to an allowed host and refuses one to loopback, another port or a name that does not resolve', async () => {
    const open = await tunnel(`site.example:${port}`)
    expect(open.status).toBe('HTTP/1.1 200 Connection Established')
    // Through the tunnel, the bytes reach the upstream as they are.
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      open.socket.on('data', (chunk: Buffer) => {
        text += chunk.toString()
        if (text.includes('upstream')) resolve(text)
      })
      open.socket.write(`GET /t HTTP/1.1\r\nhost: site.example\r\n\r\n`)
    })
    expect(answer).toContain('200 OK')
    open.socket.destroy()
    for (const authority of [`127.0.0.1:${port}`, `[::1]:${port}`, `localhost.:${port}`, `site.example:${port + 1}`, 'nowhere.example:443']) {
      const refused = await tunnel(authority)
      expect({ authority, status: refused.status }).toEqual({ authority, status: 'HTTP/1.1 403 Forbidden' })
      refused.socket.destroy()
    }
    expect(seen.map((entry) => entry.url)).toEqual(['/t'])
  })

  it('closing the gate cuts the tunnels its context left open', async () => {
    const open = await tunnel(`site.example:${port}`)
    const closed = new Promise<void>((resolve) => open.socket.once('close', () => resolve()))
    gate.close()
    await closed
    expect(open.socket.destroyed).toBe(true)
  })

  it('cuts a host the job gives up on: its open tunnel ends, a new one is refused at once, and the record says why; other hosts go on', async () => {
    const open = await tunnel(`site.example:${port}`)
    expect(open.status).toBe('HTTP/1.1 200 Connection Established')
    const closed = new Promise<void>((resolve) => open.socket.once('close', () => resolve()))
    gate.cut(`site.example:${port}`, 'no answer within 1.0 s')
    await closed
    const again = await tunnel(`site.example:${port}`)
    expect(again.status).toBe('HTTP/1.1 403 Forbidden')
    again.socket.destroy()
    expect(gate.unreached.get(`site.example:${port}`)).toEqual({ kind: 'cut', reason: 'no answer within 1.0 s' })
    // Refused without asking the resolver again.
    expect(lookups).toEqual(['site.example'])
    // The next job on the same gate starts with nothing cut.
    gate.reset()
    const next = await tunnel(`site.example:${port}`)
    expect(next.status).toBe('HTTP/1.1 200 Connection Established')
    next.socket.destroy()
  })

  it('lets out only the page’s own host when told to, and says so for the others', async () => {
    gate.only([`site.example:${port}`])
    const other = await tunnel('elsewhere.example:443')
    expect(other.status).toBe('HTTP/1.1 403 Forbidden')
    other.socket.destroy()
    expect(lookups).toEqual([])
    expect(gate.unreached.get('elsewhere.example:443')?.kind).toBe('blocked')
    const own = await tunnel(`site.example:${port}`)
    expect(own.status).toBe('HTTP/1.1 200 Connection Established')
    own.socket.destroy()
  })
})

describe('egress gate: a name whose answer never comes', () => {
  it('gives up on it within its own bound, and a cut ends the wait at once', async () => {
    const silent = createEgressProxy(() => new Promise(() => {}), () => {}, 300)
    try {
      const bounded = await silent.open()
      const socketTo = (authority: string): Promise<{ status: string; ms: number }> => {
        const started = Date.now()
        return new Promise((resolve, reject) => {
          const socket = connect(Number(new URL(bounded.server).port), '127.0.0.1', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`))
          socket.once('data', (chunk: Buffer) => {
            resolve({ status: chunk.toString('latin1').split('\r\n')[0]!, ms: Date.now() - started })
            socket.destroy()
          })
          socket.once('close', () => resolve({ status: 'closed', ms: Date.now() - started }))
          socket.once('error', reject)
        })
      }
      expect((await socketTo('lost.example:443')).status).toBe('HTTP/1.1 403 Forbidden')
      expect(bounded.unreached.get('lost.example:443')).toEqual({ kind: 'unreachable', reason: 'lost.example did not resolve within 0.3 s' })
      // Cut while the name is still being looked up: the tunnel ends without waiting for the bound.
      const waiting = socketTo('stalled.example:443')
      await new Promise((resolve) => setTimeout(resolve, 50))
      bounded.cut('stalled.example:443', 'cut')
      expect((await waiting).status).toBe('closed')
    } finally {
      await silent.close()
    }
  })
})
