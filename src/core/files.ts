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
 * Files written ahead, each to its temp name as soon as it is known, and put in place all at
 * once: a folder of thousands of pages need not hold them in memory until the run ends, and
 * no target changes before `commit`. Whatever happens, `discard` leaves no temp file.
 */
export interface StagedFiles {
  /** Writes `text` to `file`'s temp name; the target is untouched. A file staged again replaces its earlier text. */
  stage(file: string, text: string): Promise<void>
  /** Renames every staged file over its target, in the order they were first staged. */
  commit(): Promise<void>
  /** Removes the temp files not committed. */
  discard(): Promise<void>
}

export function stagedFiles(): StagedFiles {
  const temps = new Map<string, string>()
  let discarded = false
  return {
    async stage(file, text) {
      if (discarded) throw new Error('the files written ahead were discarded')
      const known = temps.get(file)
      const temp = known ?? tempPathFor(file)
      // Known before the first await: a file staged twice at once still has one temp name.
      temps.set(file, temp)
      if (known === undefined) await mkdir(dirname(file), { recursive: true })
      await writeFile(temp, text)
      // Discarded while it was written (another page stopped the run): its temp goes too.
      if (discarded) await rm(temp, { force: true }).catch(() => {})
    },
    async commit() {
      for (const [file, temp] of temps) {
        await rename(temp, file)
        temps.delete(file)
      }
    },
    async discard() {
      discarded = true
      // Never throws: it runs on the way out of a failure, whose error is the one to see.
      await Promise.allSettled([...temps.values()].map((temp) => rm(temp, { force: true })))
      temps.clear()
    },
  }
}

/**
 * Writes every file to its temp name first, then renames them all: a failed write leaves
 * every target as it was. Temp files never outlive the call.
 */
export async function writeFilesAtomic(files: ReadonlyMap<string, string>): Promise<void> {
  const staged = stagedFiles()
  try {
    for (const [file, text] of files) await staged.stage(file, text)
    await staged.commit()
  } finally {
    await staged.discard()
  }
}

export function writeFileAtomic(file: string, text: string): Promise<void> {
  return writeFilesAtomic(new Map([[file, text]]))
}
