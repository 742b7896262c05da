/** keep/drop RegExps and the stylesheets' markers become the strings they match in the build's own stylesheets. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BuildOutput } from '../../src/core/build-server.ts'
import { ConfigurationError } from '../../src/core/errors.ts'
import { buildSelection } from '../../src/core/build-selection.ts'

function output(files: Record<string, string>): BuildOutput {
  return { read: async (file) => files[file] ?? null, files: async () => Object.keys(files), lazySheets: async () => new Set() }
}

const BUILD = output({
  'assets/app.css': '.menu{display:none}.menu.is-open,.x{display:block}@media (min-width:1px){.modal-backdrop{inset:0}}.ad-top{height:90px}',
  'assets/kit.css': '.menu>.item{color:red}',
  'assets/app.js': 'console.log(".modal-fake{}")',
})

describe('buildSelection', () => {
  it('adds the selectors of the build’s sheets each RegExp matches, as CSS writes them, after the strings and once each', async () => {
    const { selection } = await buildSelection({ selection: { keep: ['.open'], states: ['.dark'] }, selectionPatterns: { keep: [/^\.menu/g, /modal/], drop: [/^\.ad-/] } }, BUILD)
    expect(selection).toEqual({ keep: ['.open', '.menu', '.menu.is-open', '.modal-backdrop', '.menu>.item'], drop: ['.ad-top'], states: ['.dark'] })
  })

  it('without RegExps it is the options’ own; a RegExp that matches nothing adds nothing', async () => {
    const own = { keep: ['.open'] }
    expect(await buildSelection({ selection: own, selectionPatterns: null }, BUILD)).toEqual({ selection: own, notes: [] })
    expect(await buildSelection({ selection: null, selectionPatterns: { keep: [/^\.nothing/], drop: [] } }, BUILD)).toEqual({ selection: null, notes: [] })
  })

  it('refuses RegExps that match more selectors than are sent, naming the option', async () => {
    const many = output({ 'a.css': Array.from({ length: 201 }, (_, i) => `.k${i}{color:red}`).join('') })
    const error = await buildSelection({ selection: null, selectionPatterns: { keep: [/^\.k/], drop: [] } }, many).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toContain("option `keep`: its RegExps match 201 selectors of the build's stylesheets")
  })
})

describe('buildSelection with markers', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ucc-markers-'))
    await mkdir(join(root, 'src'))
    await writeFile(join(root, 'src/menu.css'), '.menu{display:none}\n/* critical-css:keep */\n.menu.is-open{display:block}\n/* critical-css:drop */\n.ad-top{height:90px}\n')
    await writeFile(join(root, 'src/card.module.css'), '/* critical-css:keep */\n.title{font-weight:700}\n')
    await writeFile(join(root, 'src/plain.css'), '.x{display:block}\n')
  })
  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  const withSources = (files: Record<string, string>, sources: string[]): BuildOutput => ({ ...output(files), sourceSheets: async () => sources.map((file) => join(root, file)) })

  it('the markers of the sources the bundler read count as the strings, the build’s sheets’ own too; a source its minifier stripped of them still says', async () => {
    const minified = withSources({ 'assets/app.css': '.menu{display:none}.menu.is-open{display:block}.ad-top{height:90px}._title_x1{font-weight:700}.x{display:block}', 'assets/kit.css': '/*! critical-css:keep */.kit-modal{inset:0}' }, ['src/menu.css', 'src/plain.css'])
    const { selection, notes } = await buildSelection({ selection: { keep: ['.open'] }, selectionPatterns: null }, minified, root)
    expect(selection).toEqual({ keep: ['.open', '.menu.is-open', '.kit-modal'], drop: ['.ad-top'] })
    expect(notes).toEqual([])
  })

  it('a marker naming no rule of the build (a CSS module renamed it) is said, naming its file and the option that takes the built name', async () => {
    const built = withSources({ 'assets/app.css': '._title_x1{font-weight:700}' }, ['src/card.module.css'])
    const { selection, notes } = await buildSelection({ selection: null, selectionPatterns: null }, built, root)
    expect(selection).toBeNull()
    expect(notes).toEqual(["critical CSS: a `critical-css:keep` marker in src/card.module.css names `.title`, which no stylesheet of the build has (renamed by CSS modules or a preprocessor?): nothing is kept for it. The `keep` option takes the built name or a RegExp."])
  })

  it('markers count toward what is sent: past it, the error names them', async () => {
    const many = output({ 'a.css': `/* critical-css:keep start */${Array.from({ length: 201 }, (_, i) => `.k${i}{color:red}`).join('')}` })
    const error = await buildSelection({ selection: null, selectionPatterns: null }, many).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toContain('option `keep`: `critical-css:keep` markers mark 201, 201 with its strings; at most 200 are sent')
  })
})
