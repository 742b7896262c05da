/** The newest file below a folder: how a bench tells whether dist/ is older than src/. */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Newest modification time of any file below `dir`, with its path. */
export function newest(dir: string): { path: string; mtimeMs: number } {
  let best = { path: dir, mtimeMs: 0 }
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    const { mtimeMs } = statSync(path)
    if (mtimeMs > best.mtimeMs) best = { path, mtimeMs }
  }
  return best
}
