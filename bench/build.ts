/**
 * What the plugin adds to a build's wall time: the Vite playground grown to 50 pages,
 * built without the plugin, with it on a warm cache, and with it against the fake service
 * with every job taking 2 s (cold: a fresh cache, ent plan), and cold once more against a
 * service that sends the contract's pending-job hint (`Retry-After` on a pending job, as the
 * reference service does). Medians of ROUNDS builds each, run in turn in one process.
 *
 * Targets: warm ≤ 1.05 × plugin-less; cold ≤ plugin-less + slowest job + 10 %.
 *
 *   npm run bench:build            (BENCH_ROUNDS=5 for more rounds)
 */
import { cp, mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type InlineConfig } from 'vite'
import criticalCss from '../src/vite.ts'
import type { Options } from '../src/core/options.ts'
import { CHECK_INTERVAL } from '../src/client/check-planner.ts'
import { startFakeService } from '../test/fixtures/fake-service.ts'

const PAGES = 50
const JOB_MS = 2000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const TOKEN = 'tok_bench_build_0123456789'
const SITE = 'https://bench.example'

async function makeSite(): Promise<{ root: string; pages: string[] }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-bench-build-'))
  await cp(fileURLToPath(new URL('../playground/site/', import.meta.url)), join(root, 'site'), { recursive: true })
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  const pages = ['index.html', 'pricing/index.html', 'about/index.html']
  const template = await readFile(join(root, 'site/pricing/index.html'), 'utf8')
  for (let i = pages.length; i < PAGES; i++) {
    const file = `p${String(i).padStart(2, '0')}/index.html`
    await mkdir(join(root, 'site', file, '..'), { recursive: true })
    await writeFile(join(root, 'site', file), template.replaceAll('Pricing', `Page ${i}`))
    pages.push(file)
  }
  return { root, pages }
}

function config(root: string, pages: string[], plugin: Options | null): InlineConfig {
  const site = join(root, 'site')
  return {
    root: site,
    configFile: false,
    logLevel: 'silent',
    publicDir: false,
    build: { outDir: join(root, 'dist'), emptyOutDir: true, rollupOptions: { input: pages.map((page) => join(site, page)) } },
    plugins: plugin ? [criticalCss(plugin)] : [],
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function main(): Promise<void> {
  const { root, pages } = await makeSite()
  const behaviour = () => ({ durationMs: JOB_MS, css: '.hero{color:#fff}' })
  const fake = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour })
  const hinting = await startFakeService({ tokens: { [TOKEN]: { plan: 'ent' } }, behaviour, pendingRetryAfter: 'estimate' })
  const remote = (cacheDir: string, service = fake): Options => ({ baseUrl: service.url, token: TOKEN, siteUrl: SITE, cache: { dir: cacheDir } })
  const warmCache = join(root, 'cache-warm')
  try {
    // One build of each kind first: Vite's and Node's own warm-up is not what is measured.
    await build(config(root, pages, null))
    await build(config(root, pages, remote(warmCache)))

    const times = { none: [] as number[], warm: [] as number[], cold: [] as number[], hinted: [] as number[] }
    // The plugin's own time inside a warm build, from its JSON report: steadier than the
    // difference of two noisy build times.
    const ownWarm: number[] = []
    const reportFile = join(root, 'report.json')
    const requestsBefore = { warm: 0, cold: 0, hinted: 0 }
    for (let round = 0; round < ROUNDS; round++) {
      times.none.push(await timed(() => build(config(root, pages, null))))
      let before = fake.requests.length
      times.warm.push(await timed(() => build(config(root, pages, { ...remote(warmCache), report: reportFile }))))
      ownWarm.push((JSON.parse(await readFile(reportFile, 'utf8')) as { ms: number }).ms)
      requestsBefore.warm += fake.requests.length - before
      before = fake.requests.length
      times.cold.push(await timed(() => build(config(root, pages, remote(join(root, `cache-cold-${round}`))))))
      requestsBefore.cold += fake.requests.length - before
      before = hinting.requests.length
      times.hinted.push(await timed(() => build(config(root, pages, remote(join(root, `cache-hinted-${round}`), hinting)))))
      requestsBefore.hinted += hinting.requests.length - before
    }

    const none = median(times.none)
    const warm = median(times.warm)
    const cold = median(times.cold)
    const hinted = median(times.hinted)
    const coldTarget = (none + JOB_MS) * 1.1
    const rows = [
      ['without the plugin', none, '1.00×', '', '', 0],
      ['plugin, warm cache', warm, `${(warm / none).toFixed(2)}×`, `≤ 1.05×`, warm <= none * 1.05 ? 'yes' : 'NO', requestsBefore.warm / ROUNDS],
      ['plugin, cold (jobs 2 s)', cold, `${(cold / none).toFixed(2)}×`, `≤ ${(coldTarget / 1000).toFixed(2)} s`, cold <= coldTarget ? 'yes' : 'NO', requestsBefore.cold / ROUNDS],
      ['plugin, cold, service hint', hinted, `${(hinted / none).toFixed(2)}×`, `≤ ${(coldTarget / 1000).toFixed(2)} s`, hinted <= coldTarget ? 'yes' : 'NO', requestsBefore.hinted / ROUNDS],
    ] as const
    console.log(`\nVite ${(await import('vite')).version}, ${PAGES} pages, median of ${ROUNDS} rounds (Node ${process.version})\n`)
    console.log('| build | wall | vs plugin-less | target | met | requests |')
    console.log('|---|---|---|---|---|---|')
    for (const [name, ms, ratio, target, met, requests] of rows) console.log(`| ${name} | ${(ms / 1000).toFixed(2)} s | ${ratio} | ${target} | ${met} | ${requests} |`)
    // Knowing nothing of the service yet, the client looks at a job CHECK_INTERVAL.firstMs after
    // it started, then ×factor later each time (2, 5, 9.5 s…).
    let seenAt = CHECK_INTERVAL.firstMs
    for (let step = CHECK_INTERVAL.firstMs; seenAt < JOB_MS; ) seenAt += (step *= CHECK_INTERVAL.factor)
    console.log(`\ncold floor under the client's poll schedule: plugin-less + ${(seenAt / 1000).toFixed(2)} s (a ${JOB_MS / 1000} s job is first seen done then) = ${((none + seenAt) / 1000).toFixed(2)} s`)
    const own = median(ownWarm)
    console.log(`warm: the plugin's own time (its report's ms, median) is ${own.toFixed(1)} ms = ${((own / none) * 100).toFixed(1)} % of the plugin-less build`)
    console.log(`cold target: (plugin-less + slowest job ${JOB_MS / 1000} s) × 1.1. Rounds: none ${times.none.map((t) => t.toFixed(0)).join('/')} ms, warm ${times.warm.map((t) => t.toFixed(0)).join('/')} ms, cold ${times.cold.map((t) => t.toFixed(0)).join('/')} ms, hinted ${times.hinted.map((t) => t.toFixed(0)).join('/')} ms`)
  } finally {
    await fake.close()
    await hinting.close()
    await rm(root, { recursive: true, force: true })
  }
}

await main()
