/**
 * Issue 50's bad input, through real processes: a built server that crashes or never listens
 * fails the build with the command and its output, and nothing is written; samples that are
 * no pages (a redirect, a 500, plain text) are left out and named, with no browser started;
 * `strict` fails instead; and a stop signal to the build takes the server down with it.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigurationError, StrictModeError } from '../../src/core/errors.ts'
import { resolveOptions } from '../../src/core/options.ts'
import { renderServerRoutes, type ServerRoutesInput } from '../../src/core/server-routes.ts'
import { MANIFEST_VERSION } from '../../src/runtime/manifest.ts'
import { until } from '../fixtures/until.ts'

const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url))
const APP_SERVER = fileURLToPath(new URL('../../src/core/app-server.ts', import.meta.url))

/** A server as a framework builds one: it listens on PORT and HOST, and writes its pid where PID_FILE says. */
const APP = `import { createServer } from 'node:http'
import { writeFileSync } from 'node:fs'
if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, String(process.pid))
createServer((request, response) => {
  if (request.url === '/moved') return response.writeHead(302, { location: '/elsewhere' }).end()
  if (request.url === '/broken') return response.writeHead(500, { 'content-type': 'text/html' }).end('<h1>oops</h1>')
  if (request.url === '/text') return response.writeHead(200, { 'content-type': 'text/plain' }).end('hello')
  if (request.url === '/page') return response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>page</title><link rel="stylesheet" href="/site.css"><h1 class="title">Hi</h1><p class="far">far</p>')
  if (request.url === '/site.css') return response.writeHead(200, { 'content-type': 'text/css' }).end('.title{min-height:100vh;color:red}.far{color:blue}')
  if (request.url === '/p/1' || request.url === '/p/2') {
    const first = request.url === '/p/1' ? '<h1 class="one">One</h1>' : '<h1 class="two">Two</h1>'
    return response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>p</title><link rel="stylesheet" href="/p.css">' + first + '<p class="far">far</p>')
  }
  if (request.url === '/p.css') return response.writeHead(200, { 'content-type': 'text/css' }).end('.one{min-height:100vh;color:red}.far{color:blue}.two{min-height:100vh;color:green}')
  if (request.url === '/templated') return response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><head><template><p>t</p></template><link rel="stylesheet" href="/site.css"></head><body><h1 class="title">Hi</h1></body>')
  if (request.url === '/bare') return response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>bare</title><style>h1{color:red}</style><h1>Hi</h1>')
  response.writeHead(404).end()
}).listen(Number(process.env.PORT), process.env.HOST)
`

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z')
  } catch {
    return false
  }
}

describe('server routes: bad input', () => {
  let dir: string
  let lines: string[]
  const logger = { info: (line: string) => lines.push(`info ${line}`), warn: (line: string) => lines.push(`warn ${line}`) }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ucc-server-routes-'))
    await writeFile(join(dir, 'app.mjs'), APP)
    await writeFile(join(dir, 'crash.mjs'), "console.error('boom: EADDRINUSE on the session store'); process.exit(3)\n")
    await writeFile(join(dir, 'idle.mjs'), "if (process.env.PID_FILE) (await import('node:fs')).writeFileSync(process.env.PID_FILE, String(process.pid))\nsetInterval(() => {}, 1000)\n")
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** A build's folders, empty: the server's and the static files'. */
  async function input(script: string, routes: ServerRoutesInput['routes'], extra: Record<string, string> = {}): Promise<ServerRoutesInput> {
    lines = []
    const out = await mkdtemp(join(dir, 'out-'))
    await mkdir(join(out, 'server'))
    await mkdir(join(out, 'client'))
    return {
      server: { command: process.execPath, args: [join(dir, script)], cwd: dir, env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', ...extra }), startTimeoutMs: 3_000 },
      routes,
      staticDir: join(out, 'client'),
      base: '/',
      serverDir: join(out, 'server'),
      root: dir,
      logger,
    }
  }

  async function written(given: ServerRoutesInput): Promise<string[]> {
    return [...(await readdir(given.serverDir)), ...(await readdir(given.staticDir))]
  }

  it('a server that exits before it listens fails the build with the command and its output, and nothing is written', async () => {
    const given = await input('crash.mjs', [{ route: '/', samples: ['/'] }])
    const error = await renderServerRoutes(resolveOptions({}), given).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    const message = (error as Error).message
    expect(message).toMatch(/the built server exited before it listened on port \d+ \(exit code 3\)/)
    expect(message).toMatch(/The command was: PORT=\d+ HOST=127\.0\.0\.1 node \S+crash\.mjs/)
    expect(message).toContain('boom: EADDRINUSE on the session store')
    expect(await written(given)).toEqual([])
  })

  it('a server that never listens fails the build once its start time is up, and is stopped', async () => {
    const pidFile = join(dir, 'idle.pid')
    const given = await input('idle.mjs', [{ route: '/', samples: ['/'] }], { PID_FILE: pidFile })
    const error = await renderServerRoutes(resolveOptions({}), given).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toMatch(/did not listen on 127\.0\.0\.1:\d+ within 3 s.*It printed nothing\./s)
    expect(alive(Number(readFileSync(pidFile, 'utf8')))).toBe(false)
    expect(await written(given)).toEqual([])
  })

  it('samples that are no pages, link no stylesheet or are no page the runtime reads are left out and named, a route without a sample too, a sample of no route is warned about, and no browser starts for them', async () => {
    const given = await input('app.mjs', [
      { route: '/old', samples: ['/moved'] },
      { route: '/broken', samples: ['/broken'] },
      { route: '/text', samples: ['/text'] },
      { route: '/bare', samples: ['/bare'] },
      { route: '/templated', samples: ['/templated'] },
      { route: '/blog/[slug]', samples: [] },
    ])
    const result = await renderServerRoutes(resolveOptions({ samples: { '/blog/[id]': '/blog/1' } }), given)
    expect(result.covered).toEqual([])
    expect(result.left).toEqual([
      { route: '/old', why: 'its sample /moved redirects (302) to /elsewhere' },
      { route: '/broken', why: 'its sample /broken answers 500' },
      { route: '/text', why: 'its sample /text answers text/plain, not HTML' },
      { route: '/bare', why: 'its sample /bare links no stylesheet, so nothing holds up its first paint' },
      { route: '/templated', why: 'its sample /templated is not a page the runtime reads at request time (a head of meta, link, base, title, style, script and noscript elements, a body without <link>), so its pages would be sent without it' },
      { route: '/blog/[slug]', why: 'it has parameters and no sample URL (the `samples` option)' },
    ])
    expect(lines.filter((line) => line.startsWith('warn'))).toEqual([
      'warn critical CSS: `samples` names /blog/[id], which is no route the server renders (/old, /broken, /text, /bare, /templated, /blog/[slug]).',
      ...result.left.map(({ route, why }) => `warn critical CSS: server route ${route} is left as it is: ${why}.`),
    ])
    expect(lines.some((line) => /Chromium/.test(line))).toBe(false)
    // A manifest with no route: every response passes through as it is.
    expect(JSON.parse(readFileSync(join(given.serverDir, 'critical-css.json'), 'utf8'))).toMatchObject({ version: MANIFEST_VERSION, routes: [] })
    expect(await readdir(given.staticDir)).toEqual([])
  })

  it('with `preload: \'body\'`, which moves the stylesheets to the body’s end where the runtime edits nothing, a route is left out and named, and no browser starts', async () => {
    const given = await input('app.mjs', [{ route: '/page', samples: ['/page'] }])
    const result = await renderServerRoutes(resolveOptions({ preload: 'body' }), given)
    expect(result).toEqual({ covered: [], left: [{ route: '/page', why: "preload 'body' moves its stylesheets to the body's end, which pages rendered per request do not get (the default 'loader' serves them)" }] })
    expect(lines.some((line) => /Chromium/.test(line))).toBe(false)
  })

  it('a manifest the server would refuse (a route that is no path) fails the build after the render, and nothing is written', async () => {
    const given = await input('app.mjs', [{ route: 'page', samples: ['/page'] }])
    const error = await renderServerRoutes(resolveOptions({ viewports: [{ width: 800, height: 600 }] }), given).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toMatch(/the server routes' manifest would not load \(The critical CSS manifest routes\[0\]\.route is not a path starting with \/.*\), so nothing was written/)
    expect(await written(given)).toEqual([])
  }, 60_000)

  it('a route with two samples gets the CSS of both, in the stylesheet’s order, and nothing below either’s first screen', async () => {
    const given = await input('app.mjs', [{ route: '/p/[id]', samples: ['/p/2', '/p/1'] }])
    const result = await renderServerRoutes(resolveOptions({ viewports: [{ width: 800, height: 600 }] }), given)
    expect(result).toEqual({ covered: [{ route: '/p/[id]', samples: ['/p/2', '/p/1'] }], left: [] })
    const manifest = JSON.parse(readFileSync(join(given.serverDir, 'critical-css.json'), 'utf8')) as { routes: { route: string; css: string }[] }
    const css = manifest.routes[0]!.css
    expect(css).toMatch(/^\.one\{[^}]*\}\.two\{[^}]*\}$/)
    expect(lines).toContain('info critical CSS: 1 server route gets critical CSS at request time: /p/[id] (from /p/2, /p/1)')

    // Samples that link other sheets than each other are no one route's pages.
    const other = await input('app.mjs', [{ route: '/p/[id]', samples: ['/p/1', '/page'] }])
    const apart = await renderServerRoutes(resolveOptions({ viewports: [{ width: 800, height: 600 }] }), other)
    expect(apart.left).toEqual([{ route: '/p/[id]', why: "its samples link different stylesheets (/p/1: /p.css; /page: /site.css), and a route's pages get one set" }])
  }, 60_000)

  it('with `strict`, a route left out fails the build, and nothing is written', async () => {
    const given = await input('app.mjs', [{ route: '/old', samples: ['/moved'] }])
    const error = await renderServerRoutes(resolveOptions({ strict: true }), given).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StrictModeError)
    expect((error as Error).message).toContain('/old (its sample /moved redirects (302) to /elsewhere)')
    expect(await written(given)).toEqual([])
  })

  it('a stop signal to the build stops the server it started, and the build ends by that signal', async () => {
    const pidFile = join(dir, 'app.pid')
    const script = join(dir, 'build.mts')
    await writeFile(
      script,
      `import { startAppServer } from ${JSON.stringify(APP_SERVER)}
await startAppServer({ command: process.execPath, args: [${JSON.stringify(join(dir, 'app.mjs'))}], cwd: ${JSON.stringify(dir)}, env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', PID_FILE: ${JSON.stringify(pidFile)} }) })
console.log('listening')
setInterval(() => {}, 1000)
`,
    )
    const build = spawn(process.execPath, ['--import', TSX, script], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    build.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    await new Promise<void>((resolve, reject) => {
      build.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve())
      build.once('exit', () => reject(new Error(`the build ended before its server listened: ${stderr}`)))
    })
    const server = Number(readFileSync(pidFile, 'utf8'))
    expect(alive(server)).toBe(true)
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => build.once('exit', (code, signal) => resolve({ code, signal })))
    build.kill('SIGTERM')
    expect(await ended).toEqual({ code: 143, signal: null })
    expect(stderr).toContain('stopped by SIGTERM while the built server was running')
    // SIGKILLed as the build exits; gone once the kernel has delivered it.
    expect(await until(() => !alive(server), 15_000)).toBe(true)
  }, 60_000)
})
