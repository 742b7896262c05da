/**
 * Writing files so no reader ever sees half of one: each goes to a temp name beside it,
 * then is renamed over the target (a rename within a directory is atomic).
 */
import { randomBytes } from 'node:crypto'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

function tempPathFor(file: string): string {
  return `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`
}

/**
 * Writes every file to its temp name first, then renames them all: a failed write leaves
 * every target as it was. Temp files never outlive the call.
 */
export async function writeFilesAtomic(files: ReadonlyMap<string, string>): Promise<void> {
  const temps: [string, string][] = []
  try {
    for (const [file, text] of files) {
      await mkdir(dirname(file), { recursive: true })
      const temp = tempPathFor(file)
      temps.push([temp, file])
      await writeFile(temp, text)
    }
    for (const [temp, file] of temps) await rename(temp, file)
  } finally {
    await Promise.all(temps.map(([temp]) => rm(temp, { force: true })))
  }
}

export function writeFileAtomic(file: string, text: string): Promise<void> {
  return writeFilesAtomic(new Map([[file, text]]))
}
