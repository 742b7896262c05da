/**
 * The service's optional peers (better-sqlite3, ioredis, bullmq) are loaded only by the
 * option that needs them; a missing one stops the start naming the option and the install.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

export function requirePeer<T>(name: string, neededFor: string): T {
  try {
    return require(name) as T
  } catch {
    throw new TypeError(`${neededFor} through ${name}: install it with \`npm install ${name}\`.`)
  }
}

/**
 * The installed version of a peer, read before it is loaded (a native addon built for the
 * wrong Node can crash the process as it loads); null when it is not installed. Found from
 * its entry point, since a package's exports may not list its package.json.
 */
export function peerVersion(name: string): string | null {
  let dir: string
  try {
    dir = dirname(require.resolve(name))
  } catch {
    return null
  }
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
      if (manifest.name === name) return manifest.version ?? null
    } catch {
      // no manifest here: look further up
    }
    const up = dirname(dir)
    if (up === dir) return null
    dir = up
  }
}
