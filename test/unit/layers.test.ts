/**
 * The house's arrows, read from the source: each folder of src/ imports only the folders
 * below it, and what a remote-mode build loads never reaches the browser or SQLite.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** What each folder may import statically, besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  // Helpers every layer needs (abortable waits): the floor, importing nothing of ours.
  shared: [],
  contract: [],
  html: [],
  // The engine skips the critical style the inliner marks (html/outline.ts) when it reads a page's sheets.
  engine: ['contract', 'html', 'shared'],
  client: ['contract', 'shared'],
  service: ['engine', 'contract', 'shared'],
  // A server route's manifest has one home, its reader (runtime/manifest.ts); the build writes it.
  core: ['client', 'html', 'contract', 'shared', 'runtime'],
  adapters: ['core', 'html'],
  integrations: ['core'],
  // Request time in a server's bundle (design.md): the inliner and nothing that starts a browser or talks to a service.
  runtime: ['html', 'shared'],
  // The floor too: the command suggests the flag a typo meant with the helper options use (shared/did-you-mean.ts).
  cli: ['core', 'html', 'shared'],
  // Entry files (src/*.ts) re-export any layer.
  '.': ['adapters', 'integrations', 'core', 'client', 'html', 'contract', 'service', 'engine', 'shared', 'runtime'],
}
/** Dynamic `import()` may reach further down: embedded mode loads the service and engine only when it renders. */
const DYNAMIC_ALLOWED: Record<string, readonly string[]> = { core: ['service', 'engine'] }

interface Import {
  from: string
  specifier: string
  dynamic: boolean
  typeOnly: boolean
}

const STATIC_IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8')
  const found: Import[] = []
  for (const match of text.matchAll(STATIC_IMPORT)) found.push({ from: file, specifier: match[3]!, dynamic: false, typeOnly: match[2] !== undefined })
  for (const match of text.matchAll(DYNAMIC_IMPORT)) found.push({ from: file, specifier: match[1]!, dynamic: true, typeOnly: false })
  return found
}

function layerOf(file: string): string {
  const rest = relative(SRC, file).split(/[\\/]/)
  return rest.length === 1 ? '.' : rest[0]!
}

const files = sourceFiles(SRC)

describe('layers', () => {
  it('reads the imports it judges', () => {
    // A regex that stopped matching would pass every rule below.
    const local = files.flatMap(importsOf).filter((entry) => entry.specifier.startsWith('.'))
    expect(local.length).toBeGreaterThan(100)
    expect(local.some((entry) => entry.dynamic)).toBe(true)
  })

  it('every import points down (or sideways within a folder)', () => {
    const wrong: string[] = []
    for (const file of files) {
      const layer = layerOf(file)
      for (const entry of importsOf(file)) {
        if (!entry.specifier.startsWith('.')) continue
        const target = layerOf(resolve(dirname(file), entry.specifier))
        if (target === layer) continue
        const allowed = [...(ALLOWED[layer] ?? []), ...(entry.dynamic ? (DYNAMIC_ALLOWED[layer] ?? []) : [])]
        if (!allowed.includes(target)) wrong.push(`${relative(SRC, file)} → ${entry.specifier} (${layer} may not import ${target})`)
      }
    }
    expect(wrong).toEqual([])
  })

  it('no module imports itself back through others (type-only and dynamic imports included)', () => {
    const graph = new Map(files.map((file) => [file, importsOf(file).filter((entry) => entry.specifier.startsWith('.')).map((entry) => resolve(dirname(file), entry.specifier))]))
    // Tarjan's strongly connected components: a component of more than one module is a circle.
    const index = new Map<string, number>()
    const low = new Map<string, number>()
    const stack: string[] = []
    const circles: string[][] = []
    const visit = (file: string): void => {
      index.set(file, index.size)
      low.set(file, index.get(file)!)
      stack.push(file)
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue
        if (!index.has(next)) {
          visit(next)
          low.set(file, Math.min(low.get(file)!, low.get(next)!))
        } else if (stack.includes(next)) {
          low.set(file, Math.min(low.get(file)!, index.get(next)!))
        }
      }
      if (low.get(file) !== index.get(file)) return
      const component: string[] = []
      for (let member = stack.pop()!; ; member = stack.pop()!) {
        component.push(relative(SRC, member))
        if (member === file) break
      }
      if (component.length > 1) circles.push(component.sort())
    }
    for (const file of graph.keys()) if (!index.has(file)) visit(file)
    expect(circles).toEqual([])
  })

  it('a remote-mode build loads neither playwright-core nor better-sqlite3', () => {
    // Everything the plugin's entries load without a dynamic import(): type-only imports are erased.
    const seen = new Set<string>()
    const heavy: string[] = []
    const visit = (file: string, path: string[]): void => {
      if (seen.has(file)) return
      seen.add(file)
      for (const entry of importsOf(file)) {
        if (entry.dynamic || entry.typeOnly) continue
        if (!entry.specifier.startsWith('.')) {
          if (/^(playwright-core|better-sqlite3)(\/|$)/.test(entry.specifier)) heavy.push([...path, relative(SRC, file), entry.specifier].join(' → '))
          continue
        }
        visit(resolve(dirname(file), entry.specifier), [...path, relative(SRC, file)])
      }
    }
    for (const entry of ['index.ts', 'vite.ts', 'webpack.ts', 'rspack.ts', 'rollup.ts', 'rolldown.ts', 'esbuild.ts', 'client.ts']) visit(join(SRC, entry), [])
    expect(seen.size).toBeGreaterThan(20)
    expect(heavy).toEqual([])
  })
})
