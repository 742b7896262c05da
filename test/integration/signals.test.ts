/**
 * Stops when told (issue 30), through real processes: the folder command sent SIGTERM, SIGINT
 * or SIGHUP while its pages are being rendered ends promptly, by that signal, leaves no
 * browser process behind and writes nothing. Before, SIGTERM closed the browser under the
 * engine, which relaunched it and went on: the command exited 0 a minute later with some
 * pages written and others failed. The service, sent SIGTERM while it renders, drains: the job
 * in flight finishes and is kept, new requests get 503, and it exits 0 with no browser left.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { createClient } from '../../src/client.ts'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { tree } from '../fixtures/folders.ts'

const CLI = fileURLToPath(new URL('../../src/cli/critical-css.ts', import.meta.url))
const SERVICE_CLI = fileURLToPath(new URL('../../src/service/cli.ts', import.meta.url))
const TSX = fileURLToPath(new URL('../../node_modules/tsx/dist/esm/index.mjs', import.meta.url))
const PAGES = 8

/** Every process under `pid` (itself excluded), with its command line: read from /proc. */
function descendants(pid: number): Map<number, string> {
  const children = new Map<number, number[]>()
  const commands = new Map<number, string>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)])
      commands.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' '))
    } catch {
      // gone meanwhile
    }
  }
  const found = new Map<number, string>()
  const queue = [...(children.get(pid) ?? [])]
  while (queue.length > 0) {
    const each = queue.shift()!
    found.set(each, commands.get(each) ?? '')
    queue.push(...(children.get(each) ?? []))
  }
  return found
}

/** Whether a process is still there with the same command line (a PID can be reused). */
function alive(pid: number, command: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') === command
  } catch {
    return false
  }
}


describe.skipIf(!findChromium() || process.platform !== 'linux')('the folder command stops when told', () => {
  const temps: string[] = []
  // Holds every page's font stylesheet 4 s: with `--third-party wait` the pages stay in the browser meanwhile.
  let slow: Server
  let slowOrigin: string
  let asked = 0

  beforeAll(async () => {
    slow = createServer((_req, res) => {
      asked++
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/css' }).end('.slow{color:#123}'), 4000).unref()
    })
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    slowOrigin = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    slow.closeAllConnections()
    await new Promise<void>((resolve) => slow.close(() => resolve()))
    await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
  })

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal} while pages render: exits within 2 s by ${signal}, leaves no browser process, and writes nothing`, async () => {
      const root = await mkdtemp(join(tmpdir(), 'ucc-signals-'))
      temps.push(root)
      const dist = join(root, 'dist')
      await writeFile(join(root, 'package.json'), '{ "private": true }\n')
      for (let i = 0; i < PAGES; i++) {
        const file = join(dist, i === 0 ? 'index.html' : `p${i}/index.html`)
        await mkdir(dirname(file), { recursive: true })
        await writeFile(file, page(`p${i}`, `<link rel="stylesheet" href="/style.css"><link rel="stylesheet" href="${slowOrigin}/font.css?p=${i}">\n`))
      }
      await writeFile(join(dist, 'style.css'), SITE_CSS)
      const before = await tree(root)

      const askedBefore = asked
      const env: Record<string, string | undefined> = { ...process.env }
      for (const name of ['CRITICAL_CSS_BASE_URL', 'CRITICAL_CSS_API_TOKEN', 'CRITICAL_CSS_SITE_URL']) delete env[name]
      const child = spawn(process.execPath, ['--import', TSX, CLI, 'dist', '--third-party', 'wait', '--no-cache'], { cwd: root, env })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
      // Rendering: the browser has asked the slow host for a page's sheet.
      for (let waited = 0; asked === askedBefore && waited < 60_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(asked).toBeGreaterThan(askedBefore)
      const browsers = [...descendants(child.pid!)].filter(([, command]) => /chrom/i.test(command))
      expect(browsers.length).toBeGreaterThan(0)

      const sent = performance.now()
      child.kill(signal)
      const { code } = await exited
      const tookMs = performance.now() - sent

      // The shell's convention for a process ended by a signal: 128 + its number.
      expect({ code, tookWithin2s: tookMs <= 2000 }).toEqual({ code: 128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal], tookWithin2s: true })
      expect(stderr).toContain(`stopped by ${signal}`)
      // Killed by process group, so none is left a moment later.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(browsers.filter(([pid, command]) => alive(pid, command)).map(([pid]) => pid)).toEqual([])
      expect(await tree(root)).toEqual(before)
    }, 90_000)
  }
})

describe.skipIf(!findChromium() || process.platform !== 'linux')('the service drains when told', () => {
  let root: string
  let site: Server
  let siteOrigin: string
  let asked = 0

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ucc-serve-signal-'))
    // The page's stylesheet takes 3 s: the job is in the browser when the signal comes, and done within the grace.
    site = createServer((req, res) => {
      if (req.url === '/slow.css') {
        asked++
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/css' }).end('body{color:#123}'), 3000).unref()
        return
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(page('drain', '<link rel="stylesheet" href="/slow.css">\n'))
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    site.closeAllConnections()
    await new Promise<void>((resolve) => site.close(() => resolve()))
    await rm(root, { recursive: true, force: true })
  })

  /** `serve` on the data dir, resolved with its URL once its start line is out. */
  async function serve(dataDir: string): Promise<{ child: ReturnType<typeof spawn>; url: string; out: () => string; exited: Promise<number | null> }> {
    const child = spawn(process.execPath, ['--import', TSX, SERVICE_CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--allow-private-networks'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
    for (let waited = 0; !/listening on (\S+)/.test(out) && waited < 30_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    const url = /listening on (\S+)/.exec(out)?.[1]
    if (!url) throw new Error(`no start line: ${out}`)
    return { child, url, out: () => out, exited }
  }

  it('SIGTERM while a page renders: the job finishes and is kept, new requests get 503, it exits 0 with no browser left', async () => {
    const dataDir = join(root, 'data')
    const first = await serve(dataDir)
    // The start line says what an operator checks first, and its token command works as copied.
    const start = first.out().split('\n').find((line) => line.includes('listening on'))!
    expect(start).toMatch(new RegExp(`state: SQLite in ${dataDir} · 2 pages at once on Chromium \\d+\\.[\\d.]+ \\(/.+\\) · fetches public and private addresses`))
    const command = /make a token: critical-css-service (token create .+)$/.exec(start)?.[1]
    expect(command).toBe(`token create --plan pro --data-dir ${dataDir}`)
    const created = spawnSync(process.execPath, ['--import', TSX, SERVICE_CLI, ...command!.split(' ')], { encoding: 'utf8' })
    expect(created.status).toBe(0)
    const token = created.stdout.trim()

    const client = createClient({ baseUrl: first.url, token })
    const askedBefore = asked
    const job = await client.generate(`${siteOrigin}/page`)
    for (let waited = 0; asked === askedBefore && waited < 30_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25))
    expect(asked).toBeGreaterThan(askedBefore)
    const browsers = [...descendants(first.child.pid!)].filter(([, line]) => /chrom/i.test(line))
    expect(browsers.length).toBeGreaterThan(0)

    first.child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    const health = await fetch(`${first.url}/health`)
    expect(health.status).toBe(503)
    expect(await first.exited).toBe(0)
    await client.close()
    expect(first.out()).toMatch(/stopping signal=SIGTERM[\s\S]*job_done[\s\S]*closed/)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(browsers.filter(([pid, line]) => alive(pid, line)).map(([pid]) => pid)).toEqual([])

    // What the drained job made is there for the client after a restart.
    const second = await serve(dataDir)
    const again = createClient({ baseUrl: second.url, token })
    try {
      const data = await again.jobData(job.id)
      expect(data).toMatchObject({ status: 'done' })
      expect(JSON.stringify(data)).toContain('body{color:#123}')
    } finally {
      await again.close()
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }
  }, 90_000)
})
