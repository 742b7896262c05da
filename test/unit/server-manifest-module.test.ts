/**
 * Where a server bundle finds its manifest (core/server-manifest-module.ts): the path written
 * in the placeholder's place points at the manifest from the file that reads it, and every
 * line keeps its length, so the bundle's source map still points where it did.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { manifestPathEdits, serverManifestModule } from '../../src/core/server-manifest-module.ts'
import { MANIFEST_PATH_PLACEHOLDER } from '../../src/runtime/manifest-place.ts'

const lengths = (text: string): number[] => text.split('\n').map((line) => line.length)
/** The string literal's value in `code` after `marker`. */
const literalAfter = (code: string, marker: string): string => JSON.parse(new RegExp(`${marker}("[^"]*")`).exec(code)![1]!) as string

describe('the manifest’s place in a server bundle', () => {
  it('a chunk Vite or Nitro writes gets the path from it, each line as long as it was', () => {
    const plugin = serverManifestModule()
    const chunk = `${plugin.load(`\0virtual:unplugin-critical-css/manifest`)!}const after = 1\n`
    for (const fileName of ['entry.mjs', 'chunks/deep/page.mjs']) {
      const written = plugin.renderChunk(chunk, { fileName })!.code
      expect(lengths(written), fileName).toEqual(lengths(chunk))
      const path = literalAfter(written, 'new URL\\(')
      expect(new URL(path, pathToFileURL(`/srv/server/${fileName}`)).href, fileName).toBe(pathToFileURL('/srv/server/critical-css.json').href)
    }
  })

  it('a file SvelteKit wrote gets the path from it, each line as long as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ucc-manifest-place-'))
    try {
      const code = `const manifestPath = ${JSON.stringify(MANIFEST_PATH_PLACEHOLDER)}; const after = 1;\nexport { after }\n`
      await mkdir(join(dir, 'chunks', 'nested'), { recursive: true })
      await writeFile(join(dir, 'index.js'), code)
      await writeFile(join(dir, 'chunks', 'nested', 'hooks.js'), code)
      await writeFile(join(dir, 'chunks', 'other.js'), 'export const none = 1\n')
      const edits = await manifestPathEdits(dir)
      expect([...edits.keys()].sort()).toEqual([join(dir, 'chunks', 'nested', 'hooks.js'), join(dir, 'index.js')])
      for (const [file, text] of edits) {
        expect(lengths(text), file).toEqual(lengths(code))
        const path = literalAfter(text, 'manifestPath = ').trimEnd()
        expect(new URL(path, pathToFileURL(file)).href, file).toBe(pathToFileURL(join(dir, 'critical-css.json')).href)
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
