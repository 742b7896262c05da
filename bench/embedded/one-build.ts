/**
 * One measured job of bench/embedded.ts, in a process of its own so that its peak memory
 * (and its Chromium's) is its own:
 *
 *   node --import tsx bench/embedded/one-build.ts '<Job as JSON>'
 *
 * Answers a JobResult as JSON on the last line of stdout.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import BeastiesExport from 'beasties'
import { build } from 'vite'
import type { BuildReport } from '../../src/core/report.ts'
import { ENV } from '../../src/core/options.ts'
import criticalCss from '../../src/vite.ts'
import type { Job, JobResult } from './job.ts'
import { selfAndReapedCpuMs as cpuMs } from './tree.ts'

// beasties' types describe a CommonJS default export; under ESM the import is the class itself.
const Beasties = ((BeastiesExport as unknown as { default?: unknown }).default ?? BeastiesExport) as unknown as typeof import('beasties').default

const MAX_PROBLEMS = 5
const STYLE = /<style[\s>]/g

// Embedded mode: no service configured anywhere.
for (const name of Object.values(ENV)) delete process.env[name]

async function htmlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.html')).map((entry) => join(entry.parentPath, entry.name)).sort()
}

const maxRss = (): number => process.resourceUsage().maxRSS * 1024

async function viteBuild(site: string, inputs: string[], outDir: string, plugin: { cacheDir: string; report: string } | null): Promise<number> {
  const started = performance.now()
  await build({
    root: site,
    configFile: false,
    logLevel: 'silent',
    publicDir: false,
    build: { outDir, emptyOutDir: true, rollupOptions: { input: inputs } },
    plugins: plugin ? [criticalCss({ cache: { dir: plugin.cacheDir }, report: plugin.report })] : [],
  })
  return performance.now() - started
}

async function run(job: Job): Promise<Omit<JobResult, 'startupCpuMs' | 'lifeCpuMs'>> {
  if (job.kind === 'vite') {
    const wallMs = await viteBuild(job.site, job.inputs, job.outDir, null)
    const pages = (await htmlFiles(job.outDir)).length
    return { wallMs, pages, ownMs: null, fromCache: null, inlined: null, failed: null, maxRssBytes: maxRss(), problems: [] }
  }
  if (job.kind === 'ours') {
    const wallMs = await viteBuild(job.site, job.inputs, job.outDir, { cacheDir: job.cacheDir, report: job.report })
    const report = JSON.parse(await readFile(job.report, 'utf8')) as BuildReport
    const count = (predicate: (page: BuildReport['pages'][number]) => boolean): number => report.pages.filter(predicate).length
    const problems = report.pages
      .filter((page) => page.outcome !== 'inlined')
      .slice(0, MAX_PROBLEMS)
      .map((page) => `${page.file}: ${page.outcome}${page.message ? ` (${page.message})` : ''}`)
    const emitted = (await htmlFiles(job.outDir)).length
    if (emitted !== report.pages.length) problems.push(`${emitted} HTML files emitted, ${report.pages.length} in the report`)
    return {
      wallMs,
      pages: report.pages.length,
      ownMs: report.ms,
      fromCache: count((page) => page.source === 'cache'),
      inlined: count((page) => page.outcome === 'inlined'),
      failed: count((page) => page.outcome === 'failed'),
      maxRssBytes: maxRss(),
      problems,
    }
  }
  // beasties: one instance for the whole site (it keeps stylesheets between pages), each
  // page read, processed and written back, as a post-build step would.
  const files = await htmlFiles(job.distDir)
  const problems: string[] = []
  let inlined = 0
  const started = performance.now()
  const beasties = new Beasties({ path: job.distDir, publicPath: '/', logLevel: 'silent' })
  for (const file of files) {
    const html = await readFile(file, 'utf8')
    const out = await beasties.process(html)
    await writeFile(file, out)
    if ((out.match(STYLE)?.length ?? 0) > (html.match(STYLE)?.length ?? 0)) inlined += 1
    else if (problems.length < MAX_PROBLEMS) problems.push(`${file.slice(job.distDir.length + 1)}: no <style> added`)
  }
  const wallMs = performance.now() - started
  return { wallMs, pages: files.length, ownMs: null, fromCache: null, inlined, failed: null, maxRssBytes: maxRss(), problems }
}

const job = JSON.parse(process.argv[2] ?? 'null') as Job | null
if (job === null) throw new Error('usage: node --import tsx bench/embedded/one-build.ts <job JSON>')
const startupCpuMs = cpuMs()
const result: JobResult = { ...(await run(job)), startupCpuMs, lifeCpuMs: cpuMs() }
process.stdout.write(`\n${JSON.stringify(result)}\n`)
