// Installs the framework projects the integration tests build (test/frameworks/<name>): each
// has its own package.json and lock file, so their Vite, React or Svelte versions never meet
// ours. `npm ci` runs only when a lock file changed since the last install, a few projects at
// a time (an install waits on the registry and the disk more than on the CPU); then the
// project gets `node_modules/unplugin-critical-css` linked to this repo, so its config
// imports the package by name, through the exports map, as a user's would (from dist/).
//
//   tsx scripts/frameworks.ts
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { projectEnv } from './node.mjs'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const FRAMEWORKS = join(REPO, 'test', 'frameworks')
const STAMP = '.installed-lock'
const BINS = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin

const AT_ONCE = 4

/** `npm ci` in `dir`; its output is printed in one piece when it ends, so installs side by side stay readable. */
function npmCi(dir: string): Promise<void> {
  const name = relative(REPO, dir)
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: projectEnv(dir) })
    const output: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString('utf8').trim()
      console.error(`${name} (npm ci, ${((Date.now() - started) / 1000).toFixed(0)} s)${text === '' ? '' : `:\n${text}`}`)
      if (code === 0) resolve()
      else reject(new Error(`npm ci failed in ${name} (exit code ${code})`))
    })
  })
}

async function install(dir: string): Promise<void> {
  const lock = readFileSync(join(dir, 'package-lock.json'))
  const hash = createHash('sha256').update(lock).digest('hex')
  const stamp = join(dir, 'node_modules', STAMP)
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
    await npmCi(dir)
    writeFileSync(stamp, hash)
  }
  const link = join(dir, 'node_modules', 'unplugin-critical-css')
  rmSync(link, { recursive: true, force: true })
  symlinkSync(relative(join(dir, 'node_modules'), REPO), link, 'dir')
  // Its commands too, as npm links a dependency's: `next build && critical-css out` must find
  // ours, never fall through `npx` to whatever the registry holds under that name.
  const bins = join(dir, 'node_modules', '.bin')
  mkdirSync(bins, { recursive: true })
  for (const [name, file] of Object.entries(BINS)) {
    const target = join(bins, name)
    rmSync(target, { force: true })
    symlinkSync(relative(bins, join(link, file)), target)
  }
}

// Every project is tried, so one broken lock file does not hide another.
const failed: string[] = []
const projects = existsSync(FRAMEWORKS)
  ? readdirSync(FRAMEWORKS).sort().map((name) => join(FRAMEWORKS, name)).filter((dir) => existsSync(join(dir, 'package-lock.json')))
  : []
const queue = [...projects]
await Promise.all(
  Array.from({ length: AT_ONCE }, async () => {
    for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
      try {
        await install(dir)
      } catch (error) {
        failed.push(error instanceof Error ? error.message : String(error))
      }
    }
  }),
)
if (failed.length > 0) {
  console.error(failed.join('\n'))
  process.exit(1)
}
