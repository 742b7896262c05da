/**
 * Each framework's test project (test/frameworks/<name>, installed by `npm test`'s pretest
 * or `tsx scripts/frameworks.ts`; dist/ built) built with its own command three ways:
 * without our integration (the peer: what the framework costs alone), cold (an empty cache,
 * every page rendered in the local Chromium) and warm (the same cache again: no browser).
 * Prints pages inlined / total from the report, and the wall time of each build command.
 *
 *   npm run bench:frameworks            all of them
 *   BENCH_FRAMEWORKS=astro,nuxt npm run bench:frameworks
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { frameworkDir, readReport, removeDirs, runIn } from '../test/fixtures/frameworks.ts'

interface Framework {
  name: string
  dir: string
  command: string[]
  /** Build outputs and caches removed before each build, relative to the project. */
  outputs: string[]
  env?: Record<string, string>
}

const FRAMEWORKS: Framework[] = [
  { name: 'Astro', dir: 'astro', command: ['astro', 'build'], outputs: ['dist', '.astro'], env: { ASTRO_TELEMETRY_DISABLED: '1' } },
  { name: 'VitePress', dir: 'vitepress', command: ['vitepress', 'build'], outputs: ['.vitepress/dist', '.vitepress/cache'] },
  { name: 'SvelteKit', dir: 'sveltekit', command: ['vite', 'build'], outputs: ['build', '.svelte-kit'] },
  { name: 'Nuxt', dir: 'nuxt', command: ['nuxt', 'generate'], outputs: ['.output', '.nuxt', 'dist'], env: { NUXT_TELEMETRY_DISABLED: '1' } },
  { name: 'Eleventy', dir: 'eleventy', command: ['@11ty/eleventy'], outputs: ['_site'] },
  { name: 'Docusaurus', dir: 'docusaurus', command: ['docusaurus', 'build'], outputs: ['build', '.docusaurus'] },
]

const wanted = process.env.BENCH_FRAMEWORKS?.split(',').map((name) => name.trim().toLowerCase())
const rows: Record<string, string>[] = []

for (const framework of FRAMEWORKS.filter((entry) => !wanted || wanted.includes(entry.dir))) {
  const dir = frameworkDir(framework.dir)
  const temp = await mkdtemp(join(tmpdir(), `ucc-bench-${framework.dir}-`))
  const cache = { dir: join(temp, 'cache') }
  const report = join(temp, 'report.json')
  const build = async (options: object | null, env: Record<string, string> = {}): Promise<number> => {
    await removeDirs(...framework.outputs.map((output) => join(dir, output)))
    const run = await runIn(dir, 'npx', framework.command, options, { ...framework.env, ...env })
    if (run.code !== 0) throw new Error(`${framework.name}: ${framework.command.join(' ')} exited ${run.code}\n${run.stderr.slice(-2000)}`)
    return run.ms
  }
  try {
    const alone = await build(null)
    const cold = await build({ cache, report })
    const coldReport = await readReport(report)
    // No browser: a warm build that needed one would fail with the install hint.
    const warm = await build({ cache, report }, { CHROME_PATH: '/nonexistent/chrome' })
    const warmReport = await readReport(report)
    const inlined = coldReport.pages.filter((page) => page.outcome === 'inlined').length
    rows.push({
      framework: framework.name,
      'pages inlined / total': `${inlined} / ${coldReport.pages.length}`,
      'without the plugin': `${(alone / 1000).toFixed(1)} s`,
      cold: `${(cold / 1000).toFixed(1)} s`,
      'critical CSS step, cold': `${(coldReport.ms / 1000).toFixed(1)} s`,
      warm: `${(warm / 1000).toFixed(1)} s`,
      'from cache, warm': `${warmReport.pages.filter((page) => page.source === 'cache').length} / ${warmReport.pages.length}`,
    })
    console.error(`${framework.name}: done`)
  } catch (error) {
    rows.push({ framework: framework.name, 'pages inlined / total': `failed: ${(error as Error).message.split('\n')[0]}` })
  } finally {
    await removeDirs(...framework.outputs.map((output) => join(dir, output)))
    await rm(temp, { recursive: true, force: true })
  }
}
console.table(rows)
