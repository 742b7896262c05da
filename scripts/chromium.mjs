// Finds a system Chrome or Chromium, and installs Debian's `chromium` when there is none
// and this is a Debian or Ubuntu machine where we are root. Nothing is ever downloaded
// from anywhere but the system's package manager.
//
//   node scripts/chromium.mjs            print the path, installing if needed (exit 1 when impossible)
//   import { findChromium } from ...     the path, or null
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']
const INSTALL_PATHS = [
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
]

/** `CHROME_PATH`, then the usual names on PATH, then the usual install paths. */
export function findChromium(env = process.env) {
  if (env.CHROME_PATH) return existsSync(env.CHROME_PATH) ? env.CHROME_PATH : null
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    for (const name of NAMES) {
      const candidate = join(dir, name)
      if (dir && existsSync(candidate)) return candidate
    }
  }
  return INSTALL_PATHS.find((path) => existsSync(path)) ?? null
}

export const INSTALL_HINT =
  'No Chrome or Chromium found. Install one (Debian/Ubuntu: `apt-get install -y chromium`; macOS: install Google Chrome) or set CHROME_PATH to its executable.'

function canApt() {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  return root && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
}

export function ensureChromium() {
  const found = findChromium()
  if (found) return found
  if (process.env.CHROME_PATH) throw new Error(`CHROME_PATH is set to ${process.env.CHROME_PATH}, which does not exist.`)
  if (!canApt()) throw new Error(INSTALL_HINT)
  console.error('No Chromium found: installing Debian\'s chromium with apt-get …')
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
