/**
 * The SSRF vector matrix: every way out the lab's hostile site tries (test/fixtures/ssrf-lab.ts),
 * through the service with its egress proxy (the site allowed by allowOrigins, everything
 * else internal refused), beside the same pages with the policy open (the embedded mode,
 * the peer): what reached the loopback canaries, and how each job ended.
 */
import { runVectors, startSsrfLab } from '../test/fixtures/ssrf-lab.ts'
import { findChromium } from '../src/engine/find-browsers.ts'

if (!findChromium()) {
  console.error('No Chromium: `apt-get install -y chromium` or set CHROME_PATH.')
  process.exit(1)
}
const lab = await startSsrfLab()
try {
  const rebinding = lab.site.replace('127.0.0.1', 'rebind.test')
  const rows = [...lab.vectors.map((vector) => ({ name: vector.name, path: vector.path })), { name: 'DNS rebinding: public at generate, loopback after', path: rebinding }]
  const closed = await runVectors(lab, { allowOrigins: [lab.site] }, rows.map((row) => row.path))
  const open = await runVectors(lab, { allowPrivateNetworks: true }, rows.map((row) => row.path))
  const show = (outcome: { outcome: string; hits: number } | undefined): string => (outcome ? `${outcome.outcome}, ${outcome.hits} hit${outcome.hits === 1 ? '' : 's'}` : '—')
  console.log('| vector | service (egress proxy) | open policy (embedded mode) |\n|---|---|---|')
  for (const row of rows) console.log(`| ${row.name} | ${show(closed.get(row.path))} | ${show(open.get(row.path))} |`)
  const reached = rows.filter((row) => (closed.get(row.path)?.hits ?? 0) > 0).length
  const live = rows.filter((row) => (open.get(row.path)?.hits ?? 0) > 0).length
  // What the checkpoint costs a page: render times of the pages done both ways.
  const both = rows.filter((row) => closed.get(row.path)?.ms != null && open.get(row.path)?.ms != null)
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
  console.log(`\nRender time of the ${both.length} pages done both ways, median: ${median(both.map((row) => closed.get(row.path)!.ms!))} ms through the egress proxy, ${median(both.map((row) => open.get(row.path)!.ms!))} ms with the policy open.`)
  console.log(`${rows.length} vectors: ${reached} reached a canary through the service; ${live} reach one with the policy open.`)
} finally {
  await lab.close()
}
