// Finds a system Chrome or Chromium (the engine's own finder), and installs Debian's
// `chromium` when there is none and this is a Debian or Ubuntu machine where we are root.
// Nothing is ever downloaded from anywhere but the system's package manager.
//
//   tsx scripts/chromium.ts      print the path, installing if needed (exit 1 when impossible)
import { execFileSync, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'

function canApt(): boolean {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  return root && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
}

/** The browser's path, after installing Debian's chromium with apt-get where that is possible; throws with an install hint otherwise. */
export function ensureChromium(): string {
  const found = findChromium()
  if (found) return found
  if (process.env.CHROME_PATH) throw new Error(`CHROME_PATH is set to ${process.env.CHROME_PATH}, which does not exist.`)
  if (!canApt()) throw new Error(INSTALL_HINT)
  console.error("No Chromium found: installing Debian's chromium with apt-get …")
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env })
  const installed = findChromium()
  if (!installed) throw new Error(`apt-get installed chromium, but it is not on PATH. ${INSTALL_HINT}`)
  return installed
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureChromium())
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
}
