/**
 * Embedded mode reaches the engine through the reference service on loopback (HTTP, the
 * queue, job checks every 150–500 ms) instead of calling it directly. This prints what that
 * costs: the same pages with a stub engine of fixed job time, once called directly with the
 * service's worker count, once through `startService` + the client as embedded mode does.
 *
 *   npm run bench:embedded-path
 */
import { performance } from 'node:perf_hooks'
import { createClient } from '../src/client/client.ts'
import { clientRenderer } from '../src/core/modes/client-renderer.ts'
import { CHECK_INTERVAL, PAGES_PER_WORKER } from '../src/core/modes/embedded.ts'
import { DEFAULT_VIEWPORTS } from '../src/contract/api-contract.ts'
import { createToken } from '../src/service/auth.ts'
import { startService } from '../src/service/server.ts'
import { createStubEngine } from '../test/fixtures/stub-engine.ts'

const PAGES = 40
const WORKERS = 4
const JOB_MS = [0, 300, 1000]
const viewports = DEFAULT_VIEWPORTS.map((viewport) => ({ ...viewport }))

async function inParallel(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < count) await work(next++)
  }))
}

async function direct(jobMs: number): Promise<number[]> {
  const engine = createStubEngine(() => ({ delayMs: jobMs }))
  const latencies: number[] = []
  await inParallel(PAGES, WORKERS, async (i) => {
    const begun = performance.now()
    await engine.generate({ url: `http://127.0.0.1/page-${i}/`, viewports, signal: new AbortController().signal })
    latencies.push(performance.now() - begun)
  })
  return latencies
}

async function throughService(jobMs: number): Promise<number[]> {
  const token = createToken()
  const service = await startService({ host: '127.0.0.1', port: 0, tokens: [{ token, plan: 'ent' }], engine: createStubEngine(() => ({ delayMs: jobMs })), allowPrivateNetworks: true, workers: WORKERS, shutdownGraceMs: 0, log: () => {} })
  const client = createClient({ baseUrl: service.url, token, checkInterval: CHECK_INTERVAL })
  const renderer = clientRenderer(client, { viewports, thirdParty: null, concurrency: PAGES_PER_WORKER * WORKERS, advice: () => null })
  const latencies: number[] = []
  try {
    await inParallel(PAGES, renderer.concurrency, async (i) => {
      const begun = performance.now()
      await renderer.render(`http://127.0.0.1/page-${i}/`, { deadline: Date.now() + 60_000, signal: new AbortController().signal })
      latencies.push(performance.now() - begun)
    })
  } finally {
    await client.close()
    await service.close()
  }
  return latencies
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const rows: string[][] = []
for (const jobMs of JOB_MS) {
  let begun = performance.now()
  await direct(jobMs)
  const directMs = performance.now() - begun
  begun = performance.now()
  const viaService = await throughService(jobMs)
  const serviceMs = performance.now() - begun
  rows.push([`${jobMs} ms`, `${directMs.toFixed(0)} ms`, `${serviceMs.toFixed(0)} ms`, `${(serviceMs - directMs).toFixed(0)} ms`, `${((serviceMs - directMs) / PAGES).toFixed(1)} ms`, `${median(viaService).toFixed(0)} ms`])
}
const header = ['job time', `direct (${WORKERS} at once)`, 'through the loopback service', 'difference', 'per page', 'page latency p50 (service)']
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
const line = (cells: string[]): string => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')
console.log(`${PAGES} pages, stub engine, ${WORKERS} workers, ${PAGES_PER_WORKER * WORKERS} pages in flight through the service\n`)
console.log([line(header), ...rows.map(line)].join('\n'))
