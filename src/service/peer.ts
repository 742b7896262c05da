/**
 * The service's optional peers (better-sqlite3, ioredis, bullmq) are loaded only by the
 * option that needs them; a missing one stops the start naming the option and the install.
 */
import { createRequire } from 'node:module'

export function requirePeer<T>(name: string, neededFor: string): T {
  const require = createRequire(import.meta.url)
  try {
    return require(name) as T
  } catch {
    throw new TypeError(`${neededFor} through ${name}: install it with \`npm install ${name}\`.`)
  }
}
