/**
 * The sites of the first-paint bench, each built once into the bench cache with no plugin:
 * the Vite playground (static pages), two create-vite apps (react-ts, vue-ts: the page is
 * rendered by its module script) and the quality corpus (static template sites).
 * startbootstrap-creative is measured as issue 35's target names it: with its CDN links
 * replaced by the npm packages they name (bench/quality/vendor.ts).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { playgroundConfig } from '../../playground/vite/vite.config.ts'
import { PAGES as PLAYGROUND_PAGES } from '../../playground/pages.ts'
import { CACHE_DIR, CORPUS, fetchSite, type CorpusEntry } from '../quality/corpus.ts'
import { CREATIVE_VENDORED, vendorCreative } from '../quality/vendor.ts'

export const FCP_DIR = join(CACHE_DIR, 'fcp')

export interface BenchSite {
  /** `playground`, `react-ts`, `vue-ts` or a corpus package name. */
  name: string
  /** Static: the HTML has the content; script: the page's module script renders it. */
  kind: 'static' | 'script'
  /** What the row says it is (version or template). */
  about: string
  /** The built site, as the build left it: never written to. */
  dir: string
  /** Root-relative paths of its pages, `/index.html` first. */
  pages: string[]
}

/** The create-vite apps in bench/apps, by template. */
export const APPS = ['react-ts', 'vue-ts'] as const
export const SITE_NAMES: readonly string[] = ['playground', ...APPS, ...CORPUS.map((entry) => entry.name)]

const appDir = (name: string): string => fileURLToPath(new URL(`../apps/${name}/`, import.meta.url))

/**
 * The app's own npm, as in a shell there: none of the `npm_*` variables `npm run` set for
 * this repo (under them, `npm ci` in the app left its devDependencies out).
 */
const APP_ENV = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), NO_COLOR: '1' }

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'], env: APP_ENV })
}

/** Vite with no plugin at all, the playground's own config otherwise. */
async function buildPlayground(): Promise<BenchSite> {
  const outDir = join(FCP_DIR, 'playground', 'built')
  const { build, version } = await import('vite')
  await build({ ...playgroundConfig({ outDir }), plugins: [], configFile: false, logLevel: 'warn' })
  return { name: 'playground', kind: 'static', about: `Vite ${version}`, dir: outDir, pages: PLAYGROUND_PAGES.map((page) => `/${page}`) }
}

/** `npm ci` once (when node_modules is missing), then the app's own `vite build`, without its type check. */
function buildApp(name: (typeof APPS)[number]): BenchSite {
  const dir = appDir(name)
  if (!existsSync(join(dir, 'node_modules'))) {
    console.error(`  npm ci in bench/apps/${name} …`)
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], dir)
  }
  const outDir = join(FCP_DIR, name, 'built')
  rmSync(outDir, { recursive: true, force: true })
  run('npx', ['--no-install', 'vite', 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], dir)
  const vite = execFileSync('npx', ['--no-install', 'vite', '--version'], { cwd: dir, encoding: 'utf8', env: APP_ENV }).trim().split(/\s+/)[0]
  return { name, kind: 'script', about: `create-vite 9.3.0, ${vite}`, dir: outDir, pages: ['/index.html'] }
}

const VENDORED = 'startbootstrap-creative'

/** A corpus package's dist/ as fetched; the creative one as a vendored copy, written afresh each run. */
function corpusSite(entry: CorpusEntry): BenchSite {
  const site = fetchSite(entry)
  const about = `${entry.name}@${entry.version}`
  if (entry.name !== VENDORED) return { name: entry.name, kind: 'static', about, dir: site.dir, pages: site.pages }
  const dir = join(FCP_DIR, entry.name, 'built')
  vendorCreative(site.dir, dir)
  return { name: entry.name, kind: 'static', about: `${about}, its CDN files from npm (${CREATIVE_VENDORED}), no SB Forms script`, dir, pages: site.pages }
}

/** The sites `only` names (all when undefined), built or fetched; at most `maxPages` pages each. */
export async function prepareSites(only: string[] | undefined, maxPages: number): Promise<BenchSite[]> {
  const unknown = only?.filter((name) => !SITE_NAMES.includes(name)) ?? []
  if (unknown.length) throw new Error(`BENCH_SITES: unknown ${unknown.join(', ')}; the sites are ${SITE_NAMES.join(', ')}`)
  const wanted = (name: string): boolean => !only || only.includes(name)
  const sites: BenchSite[] = []
  if (wanted('playground')) sites.push(await buildPlayground())
  for (const name of APPS) if (wanted(name)) sites.push(buildApp(name))
  for (const entry of CORPUS) if (wanted(entry.name)) sites.push(corpusSite(entry))
  return sites.map((site) => ({ ...site, pages: site.pages.slice(0, maxPages) }))
}
