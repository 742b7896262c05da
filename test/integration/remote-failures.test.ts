/**
 * Remote mode as a user sees it when the address is wrong or the plan holds pages, through
 * real builds and the real client on real sockets: a closed port, a host name that does not
 * resolve and an HTTP server that is not the API fail the build at once with one message;
 * a service that went away after it answered is retried; and a free plan's pace is said once,
 * with an estimate of the end that the run keeps.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WrongAddressError, createClient } from '../../src/client.ts'
import { processDirectory } from '../../src/index.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { startService, type RunningService } from '../../src/service/server.ts'
import { startFakeService, type FakeService } from '../fixtures/fake-service.ts'
import { SITE_CSS, SITE_PAGES, buildSite, page, type BuildOutput } from '../fixtures/sites.ts'
import { createStubEngine } from '../fixtures/stub-engine.ts'

const TOKEN = 'tok_remote_failures_0123456789'
const SITE = 'https://site.example'
/** The target: a wrong address fails the build in under 2 s. */
const FAILS_WITHIN_MS = 2000

const servers: Server[] = []
const temps: string[] = []

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

/** The address of a port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<string> {
  const server = createServer()
  const port = await listen(server)
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}

/** A plain HTTP server that is not the API: it answers every request with `status` and `body`. */
async function notTheApi(status: number, type: string, body: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(status, { 'content-type': type })
    response.end(body)
  })
  servers.push(server)
  return `http://127.0.0.1:${await listen(server)}`
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1
}

/** A built folder of `count` pages, each linking one stylesheet. */
async function folder(count: number): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-remote-failures-'))
  temps.push(root)
  const dist = join(root, 'dist')
  await mkdir(dist)
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  await writeFile(join(dist, 'style.css'), SITE_CSS)
  for (let i = 0; i < count; i++) await writeFile(join(dist, `page-${i}.html`), page(`Page ${i}`, '<link rel="stylesheet" href="/style.css">\n'))
  return { root, dist }
}

/** A logger that keeps each line with the moment it was said. */
function timedLogger(): BuildLogger & { lines: { at: number; text: string }[] } {
  const lines: { at: number; text: string }[] = []
  const say = (text: string): void => void lines.push({ at: performance.now(), text })
  return { lines, info: say, warn: say }
}

describe('a wrong address fails the build at once, with one message', () => {
  let reference: BuildOutput
  beforeAll(async () => {
    // Also loads Vite, so the builds below are timed as a user's second build would be.
    reference = await buildSite('vite', { withoutPlugin: true })
    temps.push(reference.root)
  }, 60_000)

  async function failedBuild(baseUrl: string, extra: object = {}): Promise<{ output: BuildOutput; ms: number }> {
    const started = performance.now()
    const output = await buildSite('vite', { plugin: { baseUrl, token: TOKEN, siteUrl: SITE, cache: false, ...extra } })
    const ms = performance.now() - started
    temps.push(output.root)
    return { output, ms }
  }

  /** What every wrong address comes to: a failed build, one message naming the option and the variable once each, no page changed, within the target. (Vite puts the plugin's name and the stack around the message.) */
  function expectOneMessage({ output, ms }: { output: BuildOutput; ms: number }, says: RegExp): void {
    const message = output.error?.message ?? ''
    expect(message).toMatch(says)
    expect(occurrences(message, 'CRITICAL_CSS_BASE_URL')).toBe(1)
    expect(occurrences(message, '`baseUrl`')).toBe(1)
    expect(message).not.toContain(TOKEN)
    // Said once: not also as a warning per page, nor as a table of failed pages.
    expect(output.warnings.filter((line) => line.includes('CRITICAL_CSS_BASE_URL'))).toEqual([])
    expect(output.infos.join('\n')).not.toMatch(/pages? · 0 inlined/)
    for (const { file } of SITE_PAGES) {
      const bytes = output.files.get(file)
      if (bytes) expect(bytes.equals(reference.files.get(file)!), file).toBe(true)
    }
    expect(ms).toBeLessThan(FAILS_WITHIN_MS)
  }

  it('a closed port', async () => {
    const address = await closedPort()
    expectOneMessage(
      await failedBuild(address),
      new RegExp(`Nothing answers at ${address}: the connection was refused \\(ECONNREFUSED\\)\\. Check that CRITICAL_CSS_BASE_URL \\(or the \`baseUrl\` option\\) is the service's address and that the service is running\\.`),
    )
  })

  it('a closed port, with `rateLimit` set so that the first request is a generate', async () => {
    expectOneMessage(await failedBuild(await closedPort(), { rateLimit: { requestsPerMinute: 60 } }), /the connection was refused \(ECONNREFUSED\)/)
  })

  it('a host name that does not resolve', async () => {
    // `.invalid` never resolves (RFC 2606).
    expectOneMessage(await failedBuild('http://critical-css.invalid'), /The host name critical-css\.invalid does not resolve \(ENOTFOUND\)\. Check that CRITICAL_CSS_BASE_URL/)
  })

  it('an HTTP server that answers HTML', async () => {
    const address = await notTheApi(200, 'text/html', '<!doctype html><title>My site</title><p>Hello')
    expectOneMessage(await failedBuild(address), new RegExp(`${address} is not a Critical CSS Generation API: GET /api/critical-css/usage answered 200 with an HTML page\\.`))
  })

  it('an HTTP server that answers 404 pages', async () => {
    const address = await notTheApi(404, 'text/html', '<h1>Not Found</h1>')
    expectOneMessage(await failedBuild(address), /is not a Critical CSS Generation API: GET \/api\/critical-css\/usage answered 404 with an HTML page\./)
  })

  it('an HTTP server that answers JSON of another kind', async () => {
    const address = await notTheApi(200, 'application/json', '{"status":"ok","items":[]}')
    expectOneMessage(await failedBuild(address), /is not a Critical CSS Generation API: GET \/api\/critical-css\/usage answered 200 with JSON that does not follow the API contract/)
  })
})

it('the client alone: with failFastOnWrongAddress its first request fails without a retry, and the advice is apart for a wrapper to replace', async () => {
  const address = await closedPort()
  const retries: unknown[] = []
  const client = createClient({ baseUrl: address, token: TOKEN, failFastOnWrongAddress: true, onEvent: (event) => retries.push(event) })
  try {
    const error = await client.usage().then(
      () => null,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(WrongAddressError)
    expect(error).toMatchObject({ status: null, code: 'ECONNREFUSED', hint: "Check that `baseUrl` is the service's address and that the service is running." })
    expect((error as Error).message).toBe(`Nothing answers at ${address}: the connection was refused (ECONNREFUSED). Check that \`baseUrl\` is the service's address and that the service is running.`)
    expect(retries).toEqual([])
  } finally {
    await client.close()
  }
})

describe('a service that went away after it answered', () => {
  let fake: FakeService
  beforeAll(async () => {
    fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour: () => ({ instant: true, css: '.hero{color:#123}' }) })
  })
  afterAll(async () => {
    await fake.close()
  })

  /**
   * A front to the fake service that, once it has passed on its first answer, stops
   * listening (connections are refused) for `downMs`, then listens on the same port again.
   */
  async function goesAwayAfterFirstAnswer(downMs: number): Promise<string> {
    let answered = false
    const forward = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
      const upstream = request(`${fake.url}${incoming.url}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers)
        answer.pipe(outgoing)
      })
      incoming.pipe(upstream)
      outgoing.on('finish', () => {
        if (answered) return
        answered = true
        server.close()
        server.closeAllConnections()
        setTimeout(() => {
          server = createServer(forward)
          servers.push(server)
          void listen(server, port)
        }, downMs)
      })
    }
    let server = createServer(forward)
    const port = await listen(server)
    return `http://127.0.0.1:${port}`
  }

  it('is retried as before: the build waits for it and inlines every page', async () => {
    const baseUrl = await goesAwayAfterFirstAnswer(500)
    const { root, dist } = await folder(3)
    const logger = timedLogger()
    const { report } = await processDirectory(dist, { baseUrl, token: TOKEN, siteUrl: SITE, cache: false }, { root, logger, env: {} })
    expect(report.pages.map((entry) => entry.outcome)).toEqual(['inlined', 'inlined', 'inlined'])
    expect(logger.lines.map((line) => line.text).join('\n')).toMatch(/critical CSS: POST \/api\/critical-css\/generate answered ECONNREFUSED; retry 1 in/)
  }, 30_000)
})

describe('waits are said', () => {
  /** A short window stands in for the plan's minute, so the run takes seconds; the client learns it from the service's RateLimit-Reset. */
  const WINDOW_MS = 3000
  let service: RunningService
  const answered: number[] = []
  beforeAll(async () => {
    service = await startService({
      tokens: [{ token: TOKEN, plan: 'free' }],
      engine: createStubEngine(() => ({ delayMs: 300 })),
      allowPrivateNetworks: true,
      rateWindowMs: WINDOW_MS,
      log: (line) => {
        if (line.event === 'request' && typeof line.status === 'number') answered.push(line.status)
      },
    })
  })
  afterAll(async () => {
    await service.close()
  })

  it('8 pages on free: one line with the plan, the rate and an end the run keeps within 20 %', async () => {
    const { root, dist } = await folder(8)
    const logger = timedLogger()
    // The page timeout keeps the free plan's ratio to the window (120 s to 60 s), so as many pages go in flight as on the real plan.
    const { report } = await processDirectory(
      dist,
      { baseUrl: service.url, token: TOKEN, siteUrl: 'http://127.0.0.1:9/', cache: false, timeout: 2 * WINDOW_MS },
      { root, logger, env: {} },
    )
    const end = performance.now()
    expect(report.pages.filter((entry) => entry.outcome === 'inlined')).toHaveLength(8)
    // Paced, not refused.
    expect(answered).not.toContain(429)

    const pacing = logger.lines.filter((line) => /plan:/.test(line.text))
    expect(pacing.map((line) => line.text)).toEqual([expect.stringMatching(/^critical CSS: free plan: 5 requests per 3 s, 8 pages need about \d+ s$/)])
    const estimatedMs = Number(/about (\d+) s$/.exec(pacing[0]!.text)![1]) * 1000
    const tookMs = end - pacing[0]!.at
    expect(Math.abs(estimatedMs - tookMs) / tookMs).toBeLessThanOrEqual(0.2)
    // Said before the waiting: before any page was ready.
    const firstProgress = logger.lines.findIndex((line) => /pages ready/.test(line.text))
    expect(firstProgress === -1 || logger.lines.indexOf(pacing[0]!) < firstProgress).toBe(true)
  }, 60_000)

  it('nothing is said when the plan serves every page at once', async () => {
    const { root, dist } = await folder(1)
    const logger = timedLogger()
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
    await processDirectory(dist, { baseUrl: service.url, token: TOKEN, siteUrl: 'http://127.0.0.1:9/', cache: false, timeout: 2 * WINDOW_MS }, { root, logger, env: {} })
    expect(logger.lines.filter((line) => /plan:/.test(line.text))).toEqual([])
  }, 30_000)
})
