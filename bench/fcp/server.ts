/**
 * One loopback server for every load of the bench, pointed at one site and variant at a
 * time: a file is served from the variant's overlay folder when it is there, else from the
 * built site. Every `.css` response is held back `delayMs` (a slow stylesheet: the case
 * critical CSS is for), plus its size at `kbps` when given; everything else is answered at once. The first script of the page
 * that asks for it (its Referer) starts with `performance.mark('bench-first-script')`, so
 * the page records when that script began to run.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, resolve, sep } from 'node:path'
import { contentTypeOf } from '../../src/core/build-server.ts'

export const FIRST_SCRIPT_MARK = 'bench-first-script'


export interface Target {
  /** The variant's overlay folder, looked in first. */
  overlay: string
  /** The built site. */
  root: string
  /** Page path → the path of its first script, which gets the mark. */
  firstScripts: Map<string, string>
  delayMs: number
  /** Also holds each `.css` response back its size at this many kB/s (a slow network, on which a small sheet lands first). */
  kbps?: number
}

export interface BenchServer {
  origin: string
  /** What the next requests are served from. */
  target: Target | null
  /** Paths answered 404 (a file missing from a load is worth knowing), but the browser's own favicon request. */
  misses: Set<string>
  /** `.css` requests answered, all loads together. */
  cssRequests: number
  close(): Promise<void>
}

function inside(root: string, pathname: string): string | null {
  const base = resolve(root)
  const file = resolve(base, `.${pathname}`)
  if (file !== base && !file.startsWith(base + sep)) return null
  if (existsSync(file) && statSync(file).isDirectory()) return join(file, 'index.html')
  return existsSync(file) && statSync(file).isFile() ? file : null
}

function pathOf(url: string | undefined): string | null {
  try {
    return decodeURIComponent(new URL(url ?? '/', 'http://127.0.0.1').pathname)
  } catch {
    return null
  }
}

export async function startServer(): Promise<BenchServer> {
  const pending = new Set<NodeJS.Timeout>()
  const state: BenchServer = {
    origin: '',
    target: null,
    misses: new Set(),
    cssRequests: 0,
    close: async () => {},
  }
  const send = (res: ServerResponse, status: number, type: string, body: Buffer): void => {
    if (res.destroyed) return
    res.writeHead(status, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' })
    res.end(body)
  }
  const server = createServer((req, res) => {
    const target = state.target
    const pathname = pathOf(req.url)
    if (!target || pathname === null) {
      res.writeHead(400).end()
      return
    }
    const file = inside(target.overlay, pathname) ?? inside(target.root, pathname)
    if (!file) {
      if (pathname !== '/favicon.ico') state.misses.add(pathname)
      send(res, 404, 'text/plain', Buffer.from('not found'))
      return
    }
    const extension = extname(file).toLowerCase()
    let body = readFileSync(file)
    const referrer = pathOf(req.headers.referer)
    if (referrer !== null && target.firstScripts.get(referrer) === pathname) {
      body = Buffer.concat([Buffer.from(`performance.mark('${FIRST_SCRIPT_MARK}');`), body])
    }
    const type = contentTypeOf(file)
    if (extension === '.css') state.cssRequests++
    const heldMs = extension === '.css' ? target.delayMs + (target.kbps ? body.length / target.kbps : 0) : 0
    if (heldMs > 0) {
      const timer = setTimeout(() => {
        pending.delete(timer)
        send(res, 200, type, body)
      }, heldMs)
      pending.add(timer)
    } else {
      send(res, 200, type, body)
    }
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  state.close = () =>
    new Promise<void>((done) => {
      for (const timer of pending) clearTimeout(timer)
      server.closeAllConnections()
      server.close(() => done())
    })
  return state
}
