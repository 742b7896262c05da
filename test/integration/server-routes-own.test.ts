/**
 * Issue 50, a server of one's own: a node:http app that reads the manifest with
 * `readManifest` and answers with `applyCriticalCss`, its routes rendered by the folder
 * command's `--server` (test/fixtures/own-server-app.ts); the checks every framework passes
 * (test/fixtures/server-route-checks.ts). And the command's own words for `--server`: what
 * it cannot take is bad usage, a server that does not start fails naming the command, and
 * nothing is written.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../fixtures/cli.ts'
import { buildOwnServerApp, createOwnServerApp, OWN_SERVER_APP, removeOwnServerApp } from '../fixtures/own-server-app.ts'
import { describeServerRoutes } from '../fixtures/server-route-checks.ts'

describeServerRoutes(OWN_SERVER_APP)

describe('critical-css --server in its own words', () => {
  let root: string
  beforeAll(async () => {
    root = await createOwnServerApp()
    await buildOwnServerApp(root, null)
  })
  afterAll(async () => {
    if (root) await removeOwnServerApp(root)
  })

  // Six runs of the command, each compiling it with tsx first: a loaded machine takes its time.
  it('flags it cannot take: exit 2, saying what goes with what, nothing written', async () => {
    const before = await readdir(join(root, 'build'), { recursive: true })
    for (const [args, said] of [
      [['build/public', '--route', '/'], '--route goes with --server'],
      [['build/public', '--server', 'node build/server.mjs', '--server-out', 'build'], '--server needs the routes to render'],
      [['build/public', '--server', 'node build/server.mjs', '--route', '/'], '--server needs --server-out'],
      [['build/public', '--server', 'node build/server.mjs', '--route', '/', '--server-out', 'build', '--pages', '/'], '--pages is for a folder of pages'],
      [['build/public', '--server', "node 'build/server.mjs", '--route', '/', '--server-out', 'build'], "--server has an unclosed '"],
      [['build/public', '--server', 'node build/server.mjs', '--route', 'posts=/posts/hello', '--server-out', 'build'], '--route'],
    ] as const) {
      const run = await runCli(root, args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr, args.join(' ')).toContain(said)
    }
    expect(await readdir(join(root, 'build'), { recursive: true })).toEqual(before)
  }, 180_000)

  it('a second build with nothing changed takes every sample from the cache and needs no browser; a changed sheet renders again', async () => {
    const args = ['build/public', '--server', 'node build/server.mjs', '--route', '/', '--route', '/posts/:slug=/posts/hello', '--server-out', 'build', '--cache-dir', '.ucc-samples']
    const first = await runCli(root, args)
    expect(first.code, first.stderr).toBe(0)
    const manifest = await readFile(join(root, 'build', 'critical-css.json'), 'utf8')
    // No browser to be had: a build that needed one would fail.
    const again = await runCli(root, args, { CHROME_PATH: '/nonexistent/chrome' })
    expect(again.code, again.stderr).toBe(0)
    expect(await readFile(join(root, 'build', 'critical-css.json'), 'utf8')).toBe(manifest)
    const css = join(root, 'build', 'public', 'posts.css')
    const before = await readFile(css, 'utf8')
    try {
      await writeFile(css, `${before}.post-header h1 { letter-spacing: .05em; }\n`)
      const changed = await runCli(root, args, { CHROME_PATH: '/nonexistent/chrome' })
      expect(changed.code).toBe(1)
      expect(changed.stderr).toContain('CHROME_PATH is set to /nonexistent/chrome')
    } finally {
      await writeFile(css, before)
    }
  }, 180_000)

  it('a server that exits before it listens: exit 1, the command as typed with its env and the server’s own output; nothing written', async () => {
    await writeFile(join(root, 'build', 'broken.mjs'), "console.error('missing DATABASE_URL')\nprocess.exit(3)\n")
    try {
      const before = await readdir(join(root, 'build'), { recursive: true })
      const run = await runCli(root, ['build/public', '--server', 'node build/broken.mjs', '--route', '/', '--server-out', 'build', '--no-cache'])
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/the built server exited before it listened on port \d+ \(exit code 3\)/)
      expect(run.stderr).toMatch(/The command was: PORT=\d+ HOST=127\.0\.0\.1 node build\/broken\.mjs/)
      expect(run.stderr).toContain('missing DATABASE_URL')
      expect(await readdir(join(root, 'build'), { recursive: true })).toEqual(before)
    } finally {
      await rm(join(root, 'build', 'broken.mjs'))
    }
  }, 120_000)
})
