/**
 * The `critical-css-service` CLI as a real child process: help, token create/list/revoke
 * against a data dir, and serve (with the stub engine module) answering the project's
 * client, stopping cleanly on SIGTERM. The token is printed once and nowhere else.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installNode } from '../../scripts/node.mjs'
import { createClient } from '../../src/client.ts'

const CLI = fileURLToPath(new URL('../../src/service/cli.ts', import.meta.url))
const ENGINE = fileURLToPath(new URL('../fixtures/stub-engine-module.ts', import.meta.url))
let dataDir: string

function cli(...args: string[]) {
  return cliOn(process.execPath, ...args)
}

function cliOn(node: string, ...args: string[]) {
  const result = spawnSync(node, ['--import', 'tsx', CLI, ...args], { encoding: 'utf8' })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ucc-cli-'))
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

describe('critical-css-service', () => {
  it('prints help for itself and each command', () => {
    expect(cli('--help')).toMatchObject({ code: 0, stdout: expect.stringContaining('token create') })
    expect(cli('serve', '--help').stdout).toContain('--data-dir')
    // The optional peers each mode needs, named before a start fails for want of one.
    expect(cli('serve', '--help').stdout).toMatch(/playwright-core .*Chromium[\s\S]*better-sqlite3 .*--data-dir[\s\S]*ioredis, bullmq .*--redis/)
    expect(cli('token', 'create', '--help').stdout).toContain('--plan free|pro|ent')
    expect(cli('token', 'list', '--help').stdout).toContain('never the tokens')
    expect(cli('token', 'revoke', '--help').stdout).toContain('token revoke ID')
  })

  it('refuses bad usage with exit code 2 and a hint', () => {
    const bad = cli('token', 'create', '--plan', 'gold', '--data-dir', dataDir)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--plan must be one of free, pro, ent')
    expect(cli('frobnicate').code).toBe(2)
    const past = cli('token', 'create', '--plan', 'pro', '--expires', '2020-01-01', '--data-dir', dataDir)
    expect({ code: past.code, stderr: past.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('--expires 2020-01-01 is in the past') })
  })

  it('on Node 20 with better-sqlite3 13 (as this repo installs it), says which to install instead of crashing as it loads', () => {
    const node20 = join(installNode(20), 'bin', 'node')
    const result = cliOn(node20, 'token', 'list', '--data-dir', dataDir)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/better-sqlite3 13\.\d+\.\d+ needs Node 22 or later and crashes as it loads on Node 20\.19\.0: install better-sqlite3 12, `npm install better-sqlite3@\^12`/)
  }, 30_000)

  it('a well-formed command that fails exits 1: revoking a token id that does not exist', () => {
    const revoked = cli('token', 'revoke', 'tok_nope', '--data-dir', dataDir)
    expect({ code: revoked.code, stderr: revoked.stderr }).toEqual({ code: 1, stderr: 'critical-css-service: no token with id tok_nope (see token list)\n' })
  })

  it('creates a token shown once, lists it without the token, serves it, revokes it', async () => {
    const created = cli('token', 'create', '--plan', 'pro', '--quota', '5', '--expires', '2030-01-01', '--data-dir', dataDir)
    expect(created.code).toBe(0)
    const token = created.stdout.trim()
    expect(token).toMatch(/^ccs_[A-Za-z0-9_-]{43}$/)
    const id = /Created (tok_[0-9a-f]+)/.exec(created.stderr)![1]!
    const listed = cli('token', 'list', '--data-dir', dataDir)
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+pro\\s+2030-01-01T00:00:00.000Z\\s+5`))
    expect(listed.stdout).not.toContain(token)

    const server = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--engine', ENGINE, '--allow-private-networks', '--log', 'json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => server.once('close', (code) => resolve(code)))
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 15_000)
        server.stdout.on('data', () => {
          const match = /"event":"listening","url":"([^"]+)"/.exec(output)
          if (match) {
            clearTimeout(timer)
            resolve(match[1]!)
          }
        })
      })
      const client = createClient({ baseUrl: url, token })
      try {
        // A page on loopback, which --allow-private-networks admits: offline, no public name resolves, and one that does not is refused.
        const data = await client.waitForCss(await client.generate('http://127.0.0.1:9/page'), { deadline: Date.now() + 10_000 })
        expect(data.css).toContain('/*http://127.0.0.1:9/page*/')
        expect((await client.usage()).quota.generationsLimit).toBe(5)
      } finally {
        await client.close()
      }
    } finally {
      server.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    expect(output).toContain('"event":"stopping","signal":"SIGTERM"')
    expect(output).toContain('"event":"closed"')
    expect(output).not.toContain(token)

    expect(cli('token', 'revoke', id, '--data-dir', dataDir)).toMatchObject({ code: 0, stdout: `Revoked ${id}.\n` })
    expect(cli('token', 'list', '--data-dir', dataDir).stdout).toMatch(new RegExp(`${id}.*\\d{4}-\\d\\d-\\d\\dT[^ ]+Z\\s*$`, 'm'))
  }, 40_000)
})
