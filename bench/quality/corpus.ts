/**
 * The corpus: real template sites from the npm registry, fetched with `npm pack` at bench
 * time into `node_modules/.cache/critical-css-bench/` (never committed), and the shapes
 * site committed beside this file; all served from 127.0.0.1 by a small static server.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { contentTypeOf } from '../../src/core/build-server.ts'

export const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/critical-css-bench/', import.meta.url))

export interface CorpusEntry {
  name: string
  version: string
}

/** Pinned, so that figures from different days compare. */
export const CORPUS: readonly CorpusEntry[] = [
  { name: 'startbootstrap-creative', version: '7.0.7' },
  { name: 'startbootstrap-sb-admin', version: '7.0.7' },
  { name: 'startbootstrap-simple-sidebar', version: '6.0.6' },
  { name: 'html5-boilerplate', version: '9.0.1' },
]

/**
 * Pages in the shapes issue 34 names (bench/quality/shapes/, one shape a page): each first
 * screen depends on a rule, sheet or value that a critical CSS judged by what is above the
 * fold can miss. Not in {@link CORPUS}, which the first-paint bench also renders.
 */
export const SHAPES = { name: 'shapes', dir: fileURLToPath(new URL('./shapes/', import.meta.url)) } as const

/** The quality bench's sites: the template packages, then the shapes. */
export const QUALITY_SITES: readonly string[] = [...CORPUS.map((entry) => entry.name), SHAPES.name]

export interface Site extends CorpusEntry {
  /** The built site: `dist/` of the package, or the shapes' folder. */
  dir: string
  /** Root-relative paths of its pages, `/index.html` first. */
  pages: string[]
}

/** Packs and unpacks the package unless this version is already in the cache. */
export function fetchSite(entry: CorpusEntry, maxPages = Infinity): Site {
  const packageDir = join(CACHE_DIR, entry.name)
  const manifest = join(packageDir, 'package.json')
  const cached = existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version === entry.version
  if (!cached) {
    rmSync(packageDir, { recursive: true, force: true })
    mkdirSync(packageDir, { recursive: true })
    const out = execFileSync('npm', ['pack', `${entry.name}@${entry.version}`, '--pack-destination', CACHE_DIR, '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    const tarball = join(CACHE_DIR, out.trim().split('\n').at(-1)!)
    execFileSync('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1'])
    rmSync(tarball)
  }
  const dir = join(packageDir, 'dist')
  if (!existsSync(dir)) throw new Error(`${entry.name}@${entry.version} has no dist/ folder`)
  return { ...entry, dir, pages: pagesOf(dir).slice(0, maxPages) }
}

/** A quality site by name: a corpus package (fetched as {@link fetchSite} does) or the shapes. */
export function qualitySite(name: string, maxPages = Infinity): Site {
  const entry = CORPUS.find((candidate) => candidate.name === name)
  if (entry) return fetchSite(entry, maxPages)
  if (name !== SHAPES.name) throw new Error(`no quality site ${name}; the sites are ${QUALITY_SITES.join(', ')}`)
  return { name, version: contentHash(SHAPES.dir), dir: SHAPES.dir, pages: pagesOf(SHAPES.dir).slice(0, maxPages) }
}

function pagesOf(dir: string): string[] {
  return htmlFiles(dir)
    .map((file) => `/${relative(dir, file).split(sep).join('/')}`)
    .sort((a, b) => Number(b === '/index.html') - Number(a === '/index.html') || a.localeCompare(b))
}

/** What a committed site has for a version: its files' hash, so figures say which edition of it they measured. */
function contentHash(dir: string): string {
  const hash = createHash('sha256')
  for (const file of allFiles(dir).sort()) hash.update(relative(dir, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex').slice(0, 8)
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? allFiles(join(dir, entry.name)) : [join(dir, entry.name)]))
}

function htmlFiles(dir: string): string[] {
  return allFiles(dir).filter((file) => file.endsWith('.html'))
}

export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  origin: string
  close(): Promise<void>
}

/** Serves `dir` on an ephemeral loopback port; `/` and folders answer with their index.html. */
export async function serveStatic(dir: string): Promise<StaticServer> {
  const root = resolve(dir)
  const server = createServer((req, res) => {
    let pathname: string
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname)
    } catch {
      res.writeHead(400).end()
      return
    }
    let file = resolve(root, `.${pathname}`)
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end()
      return
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html')
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    const stat = statSync(file)
    // Validators as nginx or sirv send them.
    res.writeHead(200, {
      'content-type': contentTypeOf(file),
      'content-length': stat.size,
      'cache-control': 'no-cache',
      'last-modified': stat.mtime.toUTCString(),
      etag: `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`,
    })
    if (req.method === 'HEAD') res.end()
    else createReadStream(file).pipe(res)
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}
