/**
 * How many requests a page costs, and how close to the plan's limit a build runs.
 *
 * 20 pages against the fake service, jobs taking 1–8 s (seeded), on the pro plan (its real
 * 60 s window) and the free plan (5 requests per window, the window scaled to 4 s through
 * the fake and the `rateLimit` option so the run takes well under a minute). Beside our
 * client: a naive one that generates every page at once and polls each job every second,
 * retrying 429s after their Retry-After. Our client runs once more on each plan against a
 * service that sends the contract's pending-job hint (`Retry-After` on a pending job: the
 * whole seconds left of it, as the reference service estimates them). All six runs go at the
 * same time, each against its own fake service.
 *
 *   npm run bench:requests
 */
import { createClient } from '../src/client.ts'
import { startFakeService, type Plan } from '../test/fixtures/fake-service.ts'
import { seeded } from './seeded.ts'

const PAGES = 20
const TOKEN = 'tok_bench_0123456789abcdef'
const SEED = Number(process.env.BENCH_SEED ?? 7)

interface Scenario {
  plan: Plan
  rate: number
  windowMs: number
  /** The service sends the pending-job hint. */
  hint?: boolean
}

const SCENARIOS: Scenario[] = [
  { plan: 'pro', rate: 60, windowMs: 60_000 },
  { plan: 'free', rate: 5, windowMs: 4_000 },
  { plan: 'pro', rate: 60, windowMs: 60_000, hint: true },
  { plan: 'free', rate: 5, windowMs: 4_000, hint: true },
]

const random = seeded(SEED)
const durations = Array.from({ length: PAGES }, () => Math.round(1000 + random() * 7000))
const urls = durations.map((_, i) => `https://bench.example/page-${i}/`)

async function withFake(scenario: Scenario, run: (baseUrl: string) => Promise<void>) {
  const fake = await startFakeService({
    tokens: { [TOKEN]: { plan: scenario.plan, requestsPerWindow: scenario.rate, quota: null } },
    windowMs: scenario.windowMs,
    ...(scenario.hint ? { pendingRetryAfter: 'estimate' as const } : {}),
    behaviour: (url) => ({ durationMs: durations[urls.indexOf(url)] ?? 1000 }),
  })
  const started = performance.now()
  try {
    await run(fake.url)
  } finally {
    await fake.close()
  }
  return {
    wallMs: performance.now() - started,
    requests: fake.requests.length,
    rateLimited: fake.count({ status: 429 }),
  }
}

async function ours(scenario: Scenario, baseUrl: string): Promise<void> {
  const client = createClient({ baseUrl, token: TOKEN, rateLimit: { requestsPerMinute: scenario.rate, windowMs: scenario.windowMs } })
  try {
    const results = await Promise.all(urls.map(async (url) => client.waitForCss(await client.generate(url))))
    if (!results.every((r) => typeof r.css === 'string')) throw new Error('a page got no CSS')
  } finally {
    await client.close()
  }
}

/** What a first attempt looks like: fire everything, poll every second, obey 429s. */
async function naive(baseUrl: string): Promise<void> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
  async function send(path: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
    for (;;) {
      const response = await fetch(baseUrl + path, { ...init, headers })
      const body = (await response.json()) as Record<string, unknown>
      if (response.status !== 429) return { status: response.status, body }
      await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000)
    }
  }
  await Promise.all(
    urls.map(async (url) => {
      const job = await send('/api/critical-css/generate', { method: 'POST', body: JSON.stringify({ url }) })
      for (;;) {
        await sleep(1000)
        const data = await send(`/api/critical-css/job/${String(job.body.id)}/data`)
        if (data.body.status === 'done') return
        if (data.body.status === 'failed') throw new Error('job failed')
      }
    }),
  )
}

const runs = await Promise.all(
  SCENARIOS.flatMap((scenario) => [
    withFake(scenario, (baseUrl) => ours(scenario, baseUrl)).then((r) => ({ client: 'unplugin-critical-css', scenario, ...r })),
    ...(scenario.hint ? [] : [withFake(scenario, (baseUrl) => naive(baseUrl)).then((r) => ({ client: 'naive (poll every 1 s)', scenario, ...r }))]),
  ]),
)

const slowestJobMs = Math.max(...durations)
const rows = runs.map((run) => {
  const windows = Math.ceil((2 * PAGES + 1) / run.scenario.rate)
  const minimumMs = windows * run.scenario.windowMs
  // A tighter floor: the last of the 2N+1 requests cannot go before its window opens, and
  // no client can finish before its slowest job has.
  const floorMs = Math.max((windows - 1) * run.scenario.windowMs, slowestJobMs)
  return {
    client: run.client,
    plan: `${run.scenario.plan} (${run.scenario.rate}/${run.scenario.windowMs / 1000} s)${run.scenario.hint ? ', service hint' : ''}`,
    requests: run.requests,
    'req/page': (run.requests / PAGES).toFixed(2),
    '429s': run.rateLimited,
    'wall s': (run.wallMs / 1000).toFixed(1),
    'min s ⌈(2N+1)/rate⌉ windows': (minimumMs / 1000).toFixed(1),
    'wall / min': (run.wallMs / minimumMs).toFixed(3),
    'floor s': (floorMs / 1000).toFixed(1),
    'wall / floor': (run.wallMs / floorMs).toFixed(3),
  }
})

console.log(`\n${PAGES} pages, job times ${Math.min(...durations)}–${slowestJobMs} ms (seed ${SEED}); node ${process.version}`)
console.table(rows)
console.log('Targets for unplugin-critical-css: ≤ 2.1 req/page, 0 429s, wall ≤ 1.05 × min.')
console.log('floor = max(start of the window of the last request, slowest job): no client can beat it.')
