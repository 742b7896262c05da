// Installs the framework projects the integration tests build (test/frameworks/<name>): each
// has its own package.json and lock file, so their Vite, React or Svelte versions never meet
// ours. `npm ci` runs only when a lock file changed since the last install; then the
// project gets `node_modules/unplugin-critical-css` linked to this repo, so its config
// imports the package by name, through the exports map, as a user's would (from dist/).
//
//   tsx scripts/frameworks.ts
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { projectEnv } from './node.mjs'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const FRAMEWORKS = join(REPO, 'test', 'frameworks')
const STAMP = '.installed-lock'
const BINS = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin

function install(dir: string): void {
  const lock = readFileSync(join(dir, 'package-lock.json'))
  const hash = createHash('sha256').update(lock).digest('hex')
  const stamp = join(dir, 'node_modules', STAMP)
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash) {
    console.error(`installing ${relative(REPO, dir)} (npm ci) …`)
    const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit', env: projectEnv(dir) })
    if (result.status !== 0) throw new Error(`npm ci failed in ${relative(REPO, dir)}`)
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
if (existsSync(FRAMEWORKS)) {
  for (const name of readdirSync(FRAMEWORKS).sort()) {
    const dir = join(FRAMEWORKS, name)
    if (!existsSync(join(dir, 'package-lock.json'))) continue
    try {
      install(dir)
    } catch (error) {
      failed.push(error instanceof Error ? error.message : String(error))
    }
  }
}
if (failed.length > 0) {
  console.error(failed.join('\n'))
  process.exit(1)
}
