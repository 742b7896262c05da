/** A framework project's own stylesheets: below its root, without dependencies, dot folders or the built site. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectSheets } from '../../src/core/project-sheets.ts'

describe('projectSheets', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ucc-project-sheets-'))
    for (const file of ['src/app.css', 'src/lib/kit.CSS', 'styles/b.css', 'node_modules/ui/ui.css', '.svelte-kit/out.css', 'build/_app/x.css', 'src/main.js', 'README.md']) {
      await mkdir(join(root, file, '..'), { recursive: true })
      await writeFile(join(root, file), '')
    }
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('lists the .css files below the root, sorted, leaving out node_modules, dot folders and the built folder', async () => {
    expect((await projectSheets(root, [join(root, 'build')])).map((path) => path.slice(root.length + 1))).toEqual(['src/app.css', 'src/lib/kit.CSS', 'styles/b.css'])
  })
})
