/**
 * `npm run demo`: builds playground/vite and playground/webpack with the plugin in
 * embedded mode (no service configured: the plugin starts the reference service in this
 * process and renders the fresh build in the system Chromium), then prints what each page
 * got. A machine without Chrome/Chromium gets Debian's `chromium` through apt-get when
 * that is possible (Debian/Ubuntu, as root); otherwise the demo says what to install.
 *
 * `npm run demo -- --verbose` also prints where each build's plugin time went (timings.ts)
 * and writes it beside the report, as playground/<name>/timings.json.
 */
import { readFile, stat, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { BuildReport } from '../src/core/report.ts'
import { ensureChromium } from '../scripts/chromium.ts'
import { breakdown, printBreakdown, recordTimings, type Breakdown } from './timings.ts'

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))
const SERVICE_ENV = ['CRITICAL_CSS_BASE_URL', 'CRITICAL_CSS_API_TOKEN', 'CRITICAL_CSS_SITE_URL']
const STYLESHEET_HREF = /<link\b[^>]*\bhref=["']?([^"' >]+\.css)/g
const VERBOSE = process.argv.includes('--verbose')

/** Bytes of the stylesheets a built page links (each once): what the browser had to load before the first paint. */
async function linkedCssBytes(dist: string, html: string): Promise<number> {
  let total = 0
  for (const href of new Set(Array.from(html.matchAll(STYLESHEET_HREF), (match) => match[1]!))) {
    total += (await stat(`${dist}/${href.replace(/^\//, '')}`).catch(() => ({ size: 0 }))).size
  }
  return total
}

async function buildVite(): Promise<void> {
  const { build } = await import('vite')
  await build({ configFile: here('./vite/vite.config.ts') })
}

async function buildWebpack(): Promise<void> {
  const webpack = (await import('webpack')).default
  const config = (await import('./webpack/webpack.config.ts')).default
  const stats = await new Promise<import('webpack').Stats>((resolve, reject) => {
    const compiler = webpack(config)
    compiler.run((error, result) => compiler.close(() => (error || !result ? reject(error) : resolve(result))))
  })
  console.log(stats.toString({ colors: process.stdout.isTTY, assets: true, modules: false, logging: 'info', children: false }))
  if (stats.hasErrors()) throw new Error('the webpack build failed (see above)')
}

async function summary(name: string, ms: number): Promise<void> {
  const file = here(`./${name}/report.json`)
  const report = JSON.parse(await readFile(file, 'utf8')) as BuildReport
  const dist = here(`./${name}/dist`)
  const rows = []
  for (const page of report.pages) {
    const html = await readFile(`${dist}/${page.file}`, 'utf8')
    rows.push({
      page: page.url,
      file: page.file,
      outcome: page.outcome,
      from: page.source ?? '—',
      engine: page.engine ?? '—',
      'critical CSS inlined (B)': page.cssBytes,
      'full CSS, now deferred (B)': await linkedCssBytes(dist, html),
      // Where the critical CSS was nearly all of the page's stylesheets, they are inline whole instead: no request, nothing sent twice.
      'inlined whole': page.inlinedWhole.length ? page.inlinedWhole.join(', ') : '—',
      'ms': Math.round(page.ms),
    })
  }
  const count = (test: (page: BuildReport['pages'][number]) => boolean): number => report.pages.filter(test).length
  console.log(
    `\n${name}: ${count((page) => page.outcome === 'inlined')}/${report.pages.length} pages inlined ` +
      `(${count((page) => page.source === 'embedded' || page.source === 'service')} rendered by the ${report.service ?? 'service'}, ${count((page) => page.source === 'cache')} from the cache), ` +
      `build ${(ms / 1000).toFixed(1)} s; report ${file}`,
  )
  console.table(rows)
}

async function main(): Promise<void> {
  try {
    console.log(`Chromium: ${ensureChromium()}`)
  } catch (error) {
    console.error(`The demo renders pages in a local Chrome/Chromium and found none.\n${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
  // The demo shows embedded mode; a service configured in this shell would turn it into remote mode.
  for (const name of SERVICE_ENV) {
    if (process.env[name]) console.log(`(ignoring ${name} for the demo: it runs in embedded mode)`)
    delete process.env[name]
  }
  const timings: [string, number, Breakdown | null][] = []
  for (const [name, build] of [['vite', buildVite], ['webpack', buildWebpack]] as const) {
    console.log(`\n── playground/${name}`)
    const started = performance.now()
    const steps = VERBOSE ? recordTimings() : null
    await build()
    const ms = performance.now() - started
    const spent = steps && breakdown(steps.stop())
    if (spent) await writeFile(here(`./${name}/timings.json`), `${JSON.stringify(spent, null, 2)}\n`)
    timings.push([name, ms, spent])
  }
  for (const [name, ms, spent] of timings) {
    await summary(name, ms)
    if (spent) printBreakdown(name, spent)
  }
  console.log('\nRun it again: unchanged pages come from the cache (node_modules/.cache/unplugin-critical-css) and no browser starts.')
}

await main()
