/** keep/drop RegExps become the strings they match in the build's own stylesheets. */
import { describe, expect, it } from 'vitest'
import type { BuildOutput } from '../../src/core/build-server.ts'
import { ConfigurationError } from '../../src/core/errors.ts'
import { buildSelection } from '../../src/core/selection-patterns.ts'

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
    const selection = await buildSelection({ selection: { keep: ['.open'], states: ['.dark'] }, selectionPatterns: { keep: [/^\.menu/g, /modal/], drop: [/^\.ad-/] } }, BUILD)
    expect(selection).toEqual({ keep: ['.open', '.menu', '.menu.is-open', '.modal-backdrop', '.menu>.item'], drop: ['.ad-top'], states: ['.dark'] })
  })

  it('without RegExps it is the options’ own; a RegExp that matches nothing adds nothing', async () => {
    const own = { keep: ['.open'] }
    expect(await buildSelection({ selection: own, selectionPatterns: null }, BUILD)).toBe(own)
    expect(await buildSelection({ selection: null, selectionPatterns: { keep: [/^\.nothing/], drop: [] } }, BUILD)).toBeNull()
  })

  it('refuses RegExps that match more selectors than are sent, naming the option', async () => {
    const many = output({ 'a.css': Array.from({ length: 201 }, (_, i) => `.k${i}{color:red}`).join('') })
    const error = await buildSelection({ selection: null, selectionPatterns: { keep: [/^\.k/], drop: [] } }, many).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toContain("option `keep`: its RegExps match 201 selectors of the build's stylesheets")
  })
})
