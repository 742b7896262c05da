/**
 * The stylesheet files of a framework project, for the `critical-css:keep` / `drop` markers
 * its minifier strips from the built site: the framework integrations run on the built
 * folder and never see which files the bundler read, so they read the project's own `.css`
 * files, below its root. Dependencies, dot folders (`.svelte-kit`, `.nuxt`, `.output`) and
 * the built folder are not the project's sources.
 */
import { readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { SHEET_FILE } from './build-server.ts'

/** Files listed at most: a root that holds more (a monorepo's) is read this far, in a stable order. */
export const MAX_PROJECT_SHEETS = 1000
/** Folders walked at most, for the same reason. */
const MAX_FOLDERS = 5000

/** The `.css` files below `root` (absolute paths, sorted), leaving out `node_modules`, dot folders and `skip`. */
export async function projectSheets(root: string, skip: readonly string[]): Promise<string[]> {
  const skipped = new Set(skip.map((dir) => resolve(dir)))
  const sheets: string[] = []
  const queue = [resolve(root)]
  for (let walked = 0; queue.length > 0 && walked < MAX_FOLDERS && sheets.length < MAX_PROJECT_SHEETS; walked++) {
    const dir = queue.shift()!
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.') && !skipped.has(path)) queue.push(path)
      } else if (entry.isFile() && SHEET_FILE.test(entry.name) && sheets.length < MAX_PROJECT_SHEETS) {
        sheets.push(path)
      }
    }
  }
  return sheets.sort()
}
