/**
 * Never silent: a Vite client build that emits no HTML page (a framework that writes its
 * pages after the bundler, a JS-only build) says so once, naming the framework's way in
 * when its plugins tell which one it is.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, createLogger, type Plugin } from 'vite'
import { afterAll, describe, expect, it } from 'vitest'
import criticalCss from '../../src/vite.ts'

const roots: string[] = []
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

async function buildWithoutHtml(extra: Plugin[]): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-no-pages-'))
  roots.push(root)
  await writeFile(join(root, 'main.js'), "console.log('no page here')\n")
  const warnings: string[] = []
  const logger = createLogger('warn', { allowClearScreen: false })
  logger.warn = (message) => void warnings.push(message)
  await build({
    root,
    configFile: false,
    customLogger: logger,
    logLevel: 'warn',
    build: { outDir: join(root, 'dist'), rollupOptions: { input: join(root, 'main.js') } },
    plugins: [...extra, criticalCss({ cache: false })],
  })
  return warnings.filter((line) => line.includes('critical CSS'))
}

describe('a client build with no HTML page', () => {
  it('says so once, with the folder command', async () => {
    const warnings = await buildWithoutHtml([])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/no HTML page, so no page got critical CSS/)
    expect(warnings[0]).toMatch(/critical-css <output dir>/)
  })

  it('names the framework its plugins belong to, and what to run instead', async () => {
    // VitePress's own plugin is named `vitepress`; its pages are rendered after the client build.
    const warnings = await buildWithoutHtml([{ name: 'vitepress' }])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/VitePress writes its pages after the bundler: set `buildEnd: criticalCss\(\)` in \.vitepress\/config, with `import criticalCss from 'unplugin-critical-css\/vitepress'`/)
  })
})
