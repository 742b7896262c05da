import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { writeFileAtomic, writeFilesAtomic } from '../../src/core/files.ts'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

it('writes files and leaves no temp file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ucc-files-'))
  dirs.push(dir)
  await writeFileAtomic(join(dir, 'a/b.json'), '{"x":1}')
  expect(await readFile(join(dir, 'a/b.json'), 'utf8')).toBe('{"x":1}')
  expect(await readdir(join(dir, 'a'))).toEqual(['b.json'])
})

it('when one write fails, no target changes and no temp file stays', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ucc-files-'))
  dirs.push(dir)
  await writeFile(join(dir, 'page.html'), 'old')
  await writeFile(join(dir, 'blocker'), 'a file where a folder is needed')
  const files = new Map([
    [join(dir, 'page.html'), 'new'],
    [join(dir, 'blocker/other.html'), 'new'],
  ])
  await expect(writeFilesAtomic(files)).rejects.toThrow()
  expect(await readFile(join(dir, 'page.html'), 'utf8')).toBe('old')
  expect((await readdir(dir)).sort()).toEqual(['blocker', 'page.html'])
})
