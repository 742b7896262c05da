/**
 * esbuild: it emits no HTML of its own, so the pages are the HTML files this build put in
 * the outdir (with the `copy` loader, say), taken in `onEnd`: from `outputFiles` with
 * `write: false`, else the metafile's outputs read from disk and written back atomically
 * (all temp files first, then the renames). Files it did not emit are never touched.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import type { OutputFile, PartialMessage, PluginBuild } from 'esbuild'
import { directoryOutput, sheetsNamedByScripts, sourceSheetsOf, type BuildOutput } from '../core/build-server.ts'
import { pagesInMemory } from '../core/run.ts'
import { writeFilesAtomic } from '../core/files.ts'
import { PLUGIN_NAME } from '../core/errors.ts'
import { configEmitsHtml, isHtmlFile } from '../core/pages.ts'
import type { BuildSession } from '../core/session.ts'

const NAME = PLUGIN_NAME
const INFO_LEVELS = new Set(['verbose', 'debug', 'info'])

function outputFile(path: string, text: string): OutputFile {
  const contents = new TextEncoder().encode(text)
  return { path, contents, hash: '', text }
}

/** `write: false` outputs by their path in the outdir. */
function inMemoryFiles(files: readonly OutputFile[], outdir: string): Map<string, Uint8Array> {
  const byName = new Map<string, Uint8Array>()
  for (const file of files) {
    const name = relative(outdir, file.path).split(sep).join('/')
    if (!name.startsWith('../')) byName.set(name, file.contents)
  }
  return byName
}

/** esbuild's output held in memory (`write: false`). */
function memoryOutput(memory: Map<string, Uint8Array>): BuildOutput {
  const read = async (file: string): Promise<Uint8Array | null> => memory.get(file) ?? null
  return { read, files: async () => [...memory.keys()], lazySheets: () => sheetsNamedByScripts([...memory.keys()], read) }
}

/** esbuild writes a page only as an entry point (the `copy` or `file` loader) or from a plugin named for HTML. */
function emitsHtml(options: PluginBuild['initialOptions']): boolean {
  const points = options.entryPoints ?? []
  const entries = Array.isArray(points) ? points.map((point) => (typeof point === 'string' ? point : point.in)) : Object.values(points)
  return configEmitsHtml({ entries, plugins: (options.plugins ?? []).map((plugin) => plugin.name) })
}

export function setupEsbuild(build: PluginBuild, session: BuildSession): void {
  const initial = build.initialOptions
  const root = initial.absWorkingDir ?? process.cwd()
  const outdir = resolve(root, initial.outdir ?? (initial.outfile ? dirname(initial.outfile) : '.'))
  // The metafile names this build's outputs: other HTML lying in the outdir is not ours to edit.
  initial.metafile = true
  let builds = 0
  let enabled = false
  build.onStart(() => {
    builds += 1
    try {
      // A second build of the same context is a watch or serve rebuild.
      enabled = session.enabled({ production: true, watch: builds > 1, pageless: false })
      // A cold build's browser launches while esbuild bundles, when its options say it emits pages.
      if (enabled && emitsHtml(initial)) session.begin(root)
    } catch (error) {
      enabled = false
      return { errors: [{ text: (error as Error).message, pluginName: NAME }] }
    }
    return undefined
  })
  build.onEnd(async (result) => {
    if (!enabled || result.errors.length > 0) {
      await session.release()
      return undefined
    }
    const inMemory = initial.write === false
    const html = new Map<string, string | Uint8Array>()
    const inOutdir = (path: string): string | null => {
      const name = relative(outdir, resolve(root, path)).split(sep).join('/')
      return isHtmlFile(name) && !name.startsWith('../') ? name : null
    }
    if (inMemory) {
      for (const file of result.outputFiles ?? []) {
        const name = inOutdir(file.path)
        if (name !== null) html.set(name, file.contents)
      }
    } else {
      for (const path of Object.keys(result.metafile?.outputs ?? {})) {
        const name = inOutdir(path)
        if (name !== null) html.set(name, await readFile(join(outdir, name)))
      }
    }

    const memory = inMemory ? inMemoryFiles(result.outputFiles ?? [], outdir) : null
    const warnings: PartialMessage[] = []
    const showInfo = INFO_LEVELS.has(initial.logLevel ?? 'warning')
    try {
      const { updated, assets } = await session.run({
        pages: pagesInMemory(html),
        // esbuild's publicPath says where assets load from, not where pages are served.
        base: '/',
        root,
        output: {
          ...(memory ? memoryOutput(memory) : directoryOutput(outdir)),
          // The metafile's inputs are relative to the working directory.
          sourceSheets: async () => sourceSheetsOf(Object.keys(result.metafile?.inputs ?? {}).map((input) => resolve(root, input))),
        },
        logger: {
          info: (message) => {
            if (showInfo) process.stderr.write(`[${NAME}] ${message}\n`)
          },
          warn: (message) => warnings.push({ text: message, pluginName: NAME }),
        },
      })
      if (inMemory && result.outputFiles) {
        // In place: the array is the one the caller of build() receives.
        for (const [index, file] of result.outputFiles.entries()) {
          const name = inOutdir(file.path)
          const text = name === null ? undefined : updated.get(name)
          if (text !== undefined) result.outputFiles[index] = outputFile(file.path, text)
        }
        for (const [name, text] of assets) if (!memory?.has(name)) result.outputFiles.push(outputFile(join(outdir, name), text))
      } else {
        // The pages' files after what they load: renamed in this order.
        await writeFilesAtomic(new Map([...assets, ...updated].map(([name, text]) => [join(outdir, name), text])))
      }
    } catch (error) {
      return { errors: [{ text: (error as Error).message, pluginName: NAME }], warnings }
    }
    return { warnings }
  })
}
