/**
 * Embedded mode serves the build it is part of: the files as the bundler holds them at
 * that moment (HTML and CSS from the bundle, before anything is written), other assets
 * and the public dir from their sources, below the bundler's base path, on 127.0.0.1 only.
 */
import { readdir, readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { isHtmlFile, pageFiles, pagesPrefix, pathBelow } from './pages.ts'
import { servedFromBuild } from './site-origin.ts'

/** The build's output as the adapter sees it. */
export interface BuildOutput {
  /** A file of the output (relative, `/` separators) as the bundler holds it now; null when it has none. */
  read(file: string): Promise<string | Uint8Array | null>
  /** Every file of the output (relative, `/` separators), as the bundler holds them now. */
  files(): Promise<readonly string[]>
  /**
   * The output's stylesheets (relative, `/` separators) its scripts may still ask for once a
   * page runs: a lazily loaded chunk's, which its loader links when it finds no `<link>` for it.
   */
  lazySheets(): Promise<ReadonlySet<string>>
  /**
   * The project's stylesheet files the bundler read (absolute paths): where `critical-css:keep`
   * and `critical-css:drop` markers are written before a minifier strips them. Absent: a
   * built folder, whose own stylesheets are all there is.
   */
  sourceSheets?(): Promise<readonly string[]>
  /** Directories whose files are served as they are (Vite's public dir), after the bundle. */
  staticDirs?: readonly string[]
}

export interface BuildServer {
  /** Where the pages are: `http://127.0.0.1:port` + the base path. */
  siteUrl: URL
  /** The file a request path is served from, as the server finds it. */
  find: FileFinder
  close(): Promise<void>
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  wasm: 'application/wasm',
  txt: 'text/plain; charset=utf-8',
  xml: 'application/xml',
  webmanifest: 'application/manifest+json',
}

/** The content type a file is served with, by its extension. */
export function contentTypeOf(file: string): string {
  return TYPES[/\.([a-z0-9]+)$/i.exec(file)?.[1]?.toLowerCase() ?? ''] ?? 'application/octet-stream'
}

const EXTENSION = /\.[a-z0-9]+$/i

/**
 * The build does not change while it is served, and each build gets a server on a new port
 * (a new origin, so nothing cached outlives it): the browser may keep what it fetched, and
 * pages sharing a stylesheet or a font load it once.
 */
const BUILD_CACHE_CONTROL = 'private, max-age=3600'

/**
 * The output files a request path below `prefix` may be, most likely first: a file with an
 * extension is itself, any other path is also the pages it may name. Null outside the
 * prefix, or for a path that climbs out of it.
 */
export function filesForPath(pathname: string, prefix: string): string[] | null {
  const rest = pathBelow(pathname, prefix)
  if (rest === null || rest.split('/').some((segment) => segment === '..' || segment === '.') || /[\\\0]/.test(rest)) return null
  if (rest === '' || rest.endsWith('/') || isHtmlFile(rest)) return pageFiles(rest)
  return EXTENSION.test(rest) ? [rest] : [rest, ...pageFiles(rest)]
}

async function fromDirs(dirs: readonly string[], file: string): Promise<Buffer | null> {
  for (const dir of dirs) {
    const root = resolve(dir)
    const path = resolve(root, ...file.split('/'))
    if (!path.startsWith(root + sep)) continue
    try {
      // A folder, or nothing, at that path fails the read: one call per file, no stat first.
      return await readFile(path)
    } catch {
      // not in this directory
    }
  }
  return null
}

/** What a folder's reads keep, every file together: a site's stylesheets and fonts, read once per page that links them. */
const REMEMBERED_BYTES = 16 * 1024 * 1024

/**
 * `read`, remembering the files read last (the least recently read go first, past
 * {@link REMEMBERED_BYTES}): a folder does not change while it is served, and its pages
 * ask for the same few files again and again.
 */
function remembering(read: (file: string) => Promise<Buffer | null>): (file: string) => Promise<Buffer | null> {
  const kept = new Map<string, { body: Promise<Buffer | null>; bytes: number }>()
  let bytes = 0
  return (file) => {
    const known = kept.get(file)
    if (known) {
      kept.delete(file)
      kept.set(file, known)
      return known.body
    }
    const entry = { body: read(file), bytes: 0 }
    kept.set(file, entry)
    void entry.body.then((body) => {
      if (kept.get(file) !== entry) return
      entry.bytes = body?.length ?? 0
      bytes += entry.bytes
      for (const [oldest, { bytes: size }] of kept) {
        if (bytes <= REMEMBERED_BYTES) break
        kept.delete(oldest)
        bytes -= size
      }
    }, () => kept.delete(file))
    return entry.body
  }
}

/** The output file a request path below `base` is, with its content; null when the build has none. */
export type FileFinder = (pathname: string) => Promise<{ file: string; body: string | Uint8Array } | null>

/** The output file a request path is, for a build served below `base` (what embedded mode serves, and what remote mode compares with the deployed site). */
export function buildFileFinder(output: BuildOutput, base: string): FileFinder {
  return createFileFinder(output, pagesPrefix(base, null))
}

function createFileFinder(output: BuildOutput, prefix: string): FileFinder {
  const staticDirs = output.staticDirs ?? []
  return async (pathname) => {
    for (const file of filesForPath(pathname, prefix) ?? []) {
      const body = (await output.read(file)) ?? (await fromDirs(staticDirs, file))
      if (body !== null) return { file, body }
    }
    return null
  }
}

/**
 * Serves `output` below `base` (a path base; a relative or absolute-URL base serves from `/`).
 * `site`: where the site is deployed; the pages and stylesheets name this server where they name its origin.
 */
export async function serveBuild(output: BuildOutput, base: string, site: URL | null = null): Promise<BuildServer> {
  const prefix = pagesPrefix(base, null)
  const find = createFileFinder(output, prefix)
  let local: URL | null = null
  const served = (file: string, body: string | Uint8Array): Uint8Array => {
    if (site === null || local === null || !/^text\/(?:html|css);/.test(contentTypeOf(file))) return typeof body === 'string' ? Buffer.from(body) : body
    if (typeof body === 'string') return Buffer.from(servedFromBuild(body, site, local))
    // Byte for byte whatever the page's encoding: an origin is ASCII, and latin1 maps every byte to one character and back.
    return Buffer.from(servedFromBuild(Buffer.from(body).toString('latin1'), site, local), 'latin1')
  }
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end()
      return
    }
    const found = await find(new URL(req.url ?? '/', 'http://build.invalid').pathname)
    if (!found) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not in this build')
      return
    }
    const body = served(found.file, found.body)
    res.writeHead(200, { 'content-type': contentTypeOf(found.file), 'content-length': body.byteLength, 'cache-control': BUILD_CACHE_CONTROL })
    res.end(req.method === 'HEAD' ? undefined : body)
  }
  const server = createServer((req, res) => {
    answer(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
      else res.destroy()
    })
  })
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => done())
  })
  const { port } = server.address() as AddressInfo
  local = new URL(prefix, `http://127.0.0.1:${port}`)
  return {
    siteUrl: local,
    find,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
}

const SCRIPT_FILE = /\.m?js$/i
/** A stylesheet of the output, by its name. */
export const SHEET_FILE = /\.css$/i

/** The stylesheet files on disk among a bundler's module ids (a query or a virtual `\0` id is something else). */
export function sourceSheetsOf(ids: Iterable<string>): string[] {
  return [...ids].filter((id) => isAbsolute(id) && SHEET_FILE.test(id) && !id.includes('\0'))
}

/**
 * Of `files` (an output's, relative), the stylesheets a script among them names by file name:
 * a bundler's code names what a chunk it loads later needs, whatever path it puts before it.
 * A script that names one for another reason only keeps that sheet's link.
 */
export async function sheetsNamedByScripts(files: readonly string[], read: BuildOutput['read']): Promise<Set<string>> {
  const sheets = files.filter((file) => SHEET_FILE.test(file))
  const named = new Set<string>()
  if (sheets.length === 0) return named
  for (const script of files.filter((file) => SCRIPT_FILE.test(file))) {
    const body = await read(script)
    if (body === null) continue
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8')
    for (const sheet of sheets) if (!named.has(sheet) && text.includes(sheet.slice(sheet.lastIndexOf('/') + 1))) named.add(sheet)
  }
  return named
}

/** A directory on disk as a build output (a built folder, esbuild writing its outdir). */
export function directoryOutput(dir: string): BuildOutput {
  const read = remembering((file) => fromDirs([dir], file))
  const files = async (): Promise<string[]> => {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true })
    return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
  }
  return { read, files, lazySheets: async () => sheetsNamedByScripts(await files(), read) }
}
