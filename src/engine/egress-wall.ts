/**
 * The check at launch that the browser is held to its egress gate: a context opened as jobs
 * open theirs must reach loopback through its proxy, never around it. A browser that is not
 * held fails the launch, with what to change.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Browser, BrowserContext, CDPSession } from 'playwright-core'
import { contextProxy } from './flags.ts'

/** What makes playwright-core let loopback bypass every proxy it is not told otherwise about: named when it is the cause. */
const FORCED_LOOPBACK_ENV = 'PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK'

/**
 * The browser would not be held to its proxy: a context opened as jobs open them reached
 * loopback without it, or the check could not tell. A configuration fault, not a page's: no
 * job runs on such a browser, and the message says what to change.
 */
export class EgressWallBroken extends Error {
  override name = 'EgressWallBroken'
}

/** A proxy that lets nothing through, and can say when it is asked for a given `host:port`. */
export interface ClosedProxy {
  readonly server: string
  /** Settles once a request or tunnel for `authority` arrives. */
  asked(authority: string): Promise<void>
  close(): void
}

/** Refuses every request, tunnel and upgrade (403), on 127.0.0.1 and a port of its own. */
export async function openClosedProxy(): Promise<ClosedProxy> {
  const waiting = new Map<string, () => void>()
  const sockets = new Set<Socket>()
  const heard = (authority: string): void => {
    waiting.get(authority)?.()
    waiting.delete(authority)
  }
  const refuse = (socket: Duplex): void => void socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  const proxy: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (URL.canParse(req.url ?? '')) heard(new URL(req.url!).host)
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('The browser’s own connections are not let out.')
  })
  proxy.on('connect', (req: IncomingMessage, socket: Duplex) => {
    heard(req.url ?? '')
    socket.on('error', () => socket.destroy())
    refuse(socket)
  })
  proxy.on('upgrade', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy())
    refuse(socket)
  })
  proxy.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  proxy.on('clientError', (_error, socket) => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject)
    proxy.listen(0, '127.0.0.1', () => resolve())
  })
  return {
    server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    asked: (authority) => new Promise<void>((resolve) => waiting.set(authority, resolve)),
    close() {
      proxy.close()
      for (const socket of sockets) socket.destroy()
    },
  }
}

/** Longest the check at launch may wait for its request: a browser that just started, on a busy machine. */
const CHECK_TIMEOUT_MS = 10_000

/**
 * Whether a context opened as jobs open theirs ({@link contextProxy}) is held to its proxy: a
 * tab of it is opened on a canary at another loopback port. Held, the request reaches the
 * proxy and the canary never hears of it; not held (Playwright left `<-loopback>` out, as it
 * does under PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK, or Chromium reads the
 * bypass list otherwise), the canary gets the connection and the launch fails with
 * {@link EgressWallBroken}.
 *
 * Behavioural, not a look at the flags: a context's bypass list travels over CDP, where
 * nothing reads it back, and what counts is what Chromium does with it. It is kept cheap: the
 * tab is opened over CDP with the canary as its URL and the check ends as soon as the request
 * lands on one side (the browser sends it before the tab's renderer is up), rather than a
 * Playwright page, whose first renderer takes 150–250 ms to start (a check through one cost
 * 400 ms). Measured on 2 cores: the check alone about 100 ms; `ready()` 310 ms against 220 ms
 * without it, a build's first page (launch included) 690 ms against 530–570 ms (medians of 12).
 *
 * `proxy` is what the check's context is opened with: a test passes a leaky one to see it fail.
 */
export async function checkForcedThroughProxy(
  browser: Browser,
  closed: Pick<ClosedProxy, 'server' | 'asked'>,
  proxy: { server: string; bypass?: string } = contextProxy(closed.server),
): Promise<void> {
  let reached: () => void = () => {}
  const canaryReached = new Promise<'canary'>((resolve) => (reached = () => resolve('canary')))
  const canary = createServer((_req, res) => void res.writeHead(204, { connection: 'close' }).end())
  canary.on('connection', () => reached())
  await new Promise<void>((resolve, reject) => {
    canary.once('error', reject)
    canary.listen(0, '127.0.0.1', () => resolve())
  })
  const authority = `127.0.0.1:${(canary.address() as AddressInfo).port}`
  const proxied = closed.asked(authority).then(() => 'proxy' as const)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CHECK_TIMEOUT_MS)))
  let context: BrowserContext | undefined
  let session: CDPSession | undefined
  try {
    session = await browser.newBrowserCDPSession()
    const before = new Set((await session.send('Target.getBrowserContexts')).browserContextIds)
    context = await browser.newContext({ proxy, serviceWorkers: 'block' })
    const ours = (await session.send('Target.getBrowserContexts')).browserContextIds.filter((id) => !before.has(id))
    if (ours.length !== 1) throw new EgressWallBroken('The browser could not be checked for its egress gate: the context opened for the check could not be told apart from the others.')
    // Not awaited: the request goes out before the tab is ready, and the check is over then.
    const unopened = session.send('Target.createTarget', { url: `http://${authority}/`, browserContextId: ours[0]! }).then(
      () => new Promise<never>(() => {}),
      (error: unknown) => ({ unopened: error }),
    )
    const outcome = await Promise.race([proxied, canaryReached, late, unopened])
    if (typeof outcome === 'object') {
      throw new EgressWallBroken(`The browser could not be checked for its egress gate: its check tab did not open (${String(outcome.unopened).split('\n')[0]}).`)
    }
    if (outcome === 'canary') {
      const cause = process.env[FORCED_LOOPBACK_ENV]
        ? `${FORCED_LOOPBACK_ENV} is set in this process's environment, and with it playwright-core leaves loopback out of the proxy; unset it`
        : 'the proxy bypass list the context was given lets loopback bypass the proxy (has playwright-core changed how it passes `proxy.bypass`?)'
      throw new EgressWallBroken(
        `The browser is not held to its egress gate: a browser context, opened as the engine opens its jobs', reached ${authority} on loopback directly instead of through its proxy, so pages could reach any local service. ${cause}. The engine does not start like this.`,
      )
    }
    if (outcome === 'late') {
      throw new EgressWallBroken(
        `The browser could not be shown to go through its egress gate: within ${CHECK_TIMEOUT_MS / 1000} s a tab of a browser context, opened as the engine opens its jobs', reached neither its proxy nor ${authority}. The engine does not start like this.`,
      )
    }
  } finally {
    clearTimeout(timer)
    // In the background: the launch need not wait for the tab's renderer to start and go.
    void context?.close().catch(() => {})
    void session?.detach().catch(() => {})
    canary.closeAllConnections()
    canary.close()
  }
}
