/**
 * Each framework's test project (test/frameworks/<name>, installed by `npm test`'s pretest
 * or `tsx scripts/frameworks.ts`; dist/ built) built with its own command three ways:
 * without our integration (the peer: what the framework costs alone), cold (an empty cache,
 * every page rendered in the local Chromium) and warm (the same cache again: no browser).
 * Prints the framework's installed version and the Node its builds ran on (the running one,
 * or Node 24 from .cache/node where the project's engines ask for more: scripts/node.mjs),
 * pages inlined / total from the report, and the wall time of each build command.
 *
 *   npm run bench:frameworks            all of them
 *   BENCH_FRAMEWORKS=astro,nuxt3 npm run bench:frameworks     (project folder names)
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectEnv } from '../scripts/node.mjs'
import { frameworkDir, readReport, removeDirs, runIn } from '../test/fixtures/frameworks.ts'

interface Framework {
  name: string
  dir: string
  command: string[]
  /** The package whose installed version the table prints. */
  pkg: string
  /** Build outputs and caches removed before each build, relative to the project. */
  outputs: string[]
  env?: Record<string, string>
  /**
   * A recipe instead of an integration (Next.js): the framework's command alone is the peer,
   * and with our options this command runs after it, taking them as flags.
   */
  then?: (cacheDir: string, report: string) => string[]
}

const ASTRO_ENV = { ASTRO_TELEMETRY_DISABLED: '1' }
const NUXT_ENV = { NUXT_TELEMETRY_DISABLED: '1' }

/** Current majors first; the previous major after each where it is still tested. */
const FRAMEWORKS: Framework[] = [
  { name: 'Astro', dir: 'astro', pkg: 'astro', command: ['astro', 'build'], outputs: ['dist', '.astro'], env: ASTRO_ENV },
  { name: 'Starlight', dir: 'starlight', pkg: '@astrojs/starlight', command: ['astro', 'build'], outputs: ['dist', '.astro'], env: ASTRO_ENV },
  { name: 'Astro', dir: 'astro5', pkg: 'astro', command: ['astro', 'build'], outputs: ['dist', '.astro'], env: ASTRO_ENV },
  { name: 'VitePress', dir: 'vitepress', pkg: 'vitepress', command: ['vitepress', 'build', 'docs'], outputs: ['docs/.vitepress/dist', 'docs/.vitepress/cache'] },
  { name: 'VitePress', dir: 'vitepress1', pkg: 'vitepress', command: ['vitepress', 'build'], outputs: ['.vitepress/dist', '.vitepress/cache'] },
  { name: 'SvelteKit', dir: 'sveltekit', pkg: '@sveltejs/kit', command: ['vite', 'build'], outputs: ['build', '.svelte-kit'] },
  { name: 'SvelteKit', dir: 'sveltekit2', pkg: '@sveltejs/kit', command: ['vite', 'build'], outputs: ['build', '.svelte-kit'] },
  { name: 'Nuxt', dir: 'nuxt', pkg: 'nuxt', command: ['nuxt', 'generate'], outputs: ['.output', '.nuxt', 'dist'], env: NUXT_ENV },
  { name: 'Nuxt', dir: 'nuxt3', pkg: 'nuxt', command: ['nuxt', 'generate'], outputs: ['.output', '.nuxt', 'dist'], env: NUXT_ENV },
  { name: 'Eleventy', dir: 'eleventy', pkg: '@11ty/eleventy', command: ['@11ty/eleventy'], outputs: ['_site'] },
  { name: 'Docusaurus', dir: 'docusaurus', pkg: '@docusaurus/core', command: ['docusaurus', 'build'], outputs: ['build', '.docusaurus'] },
  {
    name: 'Next.js',
    dir: 'next',
    pkg: 'next',
    command: ['next', 'build'],
    outputs: ['out', '.next'],
    env: { NEXT_TELEMETRY_DISABLED: '1' },
    then: (cacheDir, report) => ['critical-css', 'out', '--cache-dir', cacheDir, '--report', report],
  },
]

/** The framework's installed version, as the project resolves it. */
function versionOf(dir: string, pkg: string): string {
  return (JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version
}

/** The Node the project's builds run on (projectEnv moves a project to a newer line when its engines say so). */
function nodeOf(dir: string): string {
  return execFileSync('node', ['--version'], { env: projectEnv(dir), encoding: 'utf8' }).trim()
}

const wanted = process.env.BENCH_FRAMEWORKS?.split(',').map((name) => name.trim().toLowerCase())
const rows: Record<string, string>[] = []

for (const framework of FRAMEWORKS.filter((entry) => !wanted || wanted.includes(entry.dir))) {
  const dir = frameworkDir(framework.dir)
  const temp = await mkdtemp(join(tmpdir(), `ucc-bench-${framework.dir}-`))
  const cache = { dir: join(temp, 'cache') }
  const report = join(temp, 'report.json')
  const npx = async (command: string[], options: object | null, env: Record<string, string>): Promise<number> => {
    const run = await runIn(dir, 'npx', command, options, { ...framework.env, ...env })
    if (run.code !== 0) throw new Error(`${framework.name}: ${command.join(' ')} exited ${run.code}\n${run.stderr.slice(-2000)}`)
    return run.ms
  }
  const build = async (options: object | null, env: Record<string, string> = {}): Promise<number> => {
    await removeDirs(...framework.outputs.map((output) => join(dir, output)))
    if (framework.then === undefined) return npx(framework.command, options, env)
    const built = await npx(framework.command, null, env)
    return options === null ? built : built + (await npx(framework.then(cache.dir, report), null, env))
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
      framework: `${framework.name} ${versionOf(dir, framework.pkg)}`,
      node: nodeOf(dir),
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
