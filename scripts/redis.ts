// Finds redis-server (the service's tests on Redis start one on 127.0.0.1), and installs
// Debian's `redis-server` when there is none and this is a Debian or Ubuntu machine where
// we are root. Nothing is downloaded from anywhere but the system's package manager.
//
//   tsx scripts/redis.ts      print its version, installing if needed (exit 1 when impossible)
import { execFileSync, spawnSync } from 'node:child_process'

const HINT = 'The service tests on Redis need redis-server: install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis).'

function version(): string | null {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : null
}

function canApt(): boolean {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  return root && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
}

try {
  let found = version()
  if (!found) {
    if (!canApt()) throw new Error(HINT)
    console.error("No redis-server found: installing Debian's redis-server with apt-get …")
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
    execFileSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'inherit', env })
    found = version()
    if (!found) throw new Error(`apt-get installed redis-server, but it is not on PATH. ${HINT}`)
  }
  console.log(found)
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
}
