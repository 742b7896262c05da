/**
 * `critical-css:keep` / `critical-css:drop` comment markers in a project's own CSS, through
 * real builds in embedded mode: Vite's and Rspack's minifiers strip every comment from the
 * stylesheet they emit, so the markers are read from the source files the bundler read;
 * webpack (no CSS minifier by default) and the folder command read them in the built sheets too;
 * a framework integration, which sees only the built folder, in the project's own `.css` files.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { processDirectory } from '../../src/index.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { buildSite, createProject, page, removeProject, type Bundler } from '../fixtures/sites.ts'
import { buildSvelteKitLazyApp, createSvelteKitLazyApp, SVELTEKIT_BASE } from '../fixtures/sveltekit-lazy-app.ts'

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 })

/**
 * The hero is above the fold, the rest is not: a menu state and a modal no first screen shows are
 * marked kept, the hero's heading (above the fold) marked dropped. Rules enough below the fold
 * that the critical CSS stays well under the sheet (a sheet mostly critical is inlined whole).
 */
const MARKED_CSS = `body{margin:0;font-family:system-ui,sans-serif}
.hero{min-height:100vh;display:grid;place-items:center;background:#0b3d91;color:#fff}
/* critical-css:drop */
.hero h1{letter-spacing:.2em;text-transform:uppercase}
.menu{display:none}
/* critical-css:keep */
.menu.is-open{display:block;background:#c00}
/* critical-css:keep start */
.modal{position:fixed;inset:10vh 10vw;background:#fff}
.toast{position:fixed;bottom:1rem;right:1rem}
/* critical-css:keep end */
.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:1rem}
.below{padding:4rem;color:#333}
${Array.from({ length: 40 }, (_, i) => `.card-${i}{padding:${i}px;border:1px solid #ccc;color:#${String(i).padStart(3, '0')}}`).join('\n')}
`

function quiet(): BuildLogger {
  return { info: () => {}, warn: () => {} }
}

/** What every build's critical CSS must show: the marked rules kept or dropped, the rest as the first screen says. */
function expectMarked(css: string): void {
  expect(css).toContain('.hero{')
  expect(css).toContain('.menu.is-open{')
  expect(css).toContain('.modal{')
  expect(css).toContain('.toast{')
  expect(css).not.toContain('h1')
  expect(css).not.toContain('.below')
}

describe.skipIf(!findChromium())('critical-css markers', () => {
  const roots: string[] = []
  afterAll(async () => {
    await Promise.all(roots.map((root) => removeProject(root)))
  })

  for (const bundler of ['vite', 'rspack', 'webpack'] satisfies Bundler[]) {
    const where = bundler === 'webpack' ? 'and in the emitted stylesheet, which keeps its comments' : 'though its minifier strips them from the emitted stylesheet'
    it(`${bundler}: the markers in the source CSS keep and drop their rules, ${where}`, async () => {
      const root = await createProject(bundler)
      roots.push(root)
      await writeFile(join(root, 'src/style.css'), MARKED_CSS)
      const build = await buildSite(bundler, { root })
      expect(build.error).toBeNull()
      const sheets = [...build.files].filter(([file]) => file.endsWith('.css')).map(([, bytes]) => bytes.toString('utf8'))
      expect(sheets).toHaveLength(1)
      // The premise: what the bundler emits says nothing of the markers (webpack's keeps its comments).
      if (bundler !== 'webpack') expect(sheets[0]).not.toContain('critical-css:')
      const css = CRITICAL.exec(build.files.get('index.html')!.toString('utf8'))?.[1] ?? ''
      expectMarked(css)
      expect(build.warnings.filter((line) => line.includes('critical-css:'))).toEqual([])
    })
  }

  it('a framework integration (SvelteKit’s adapter) reads them in the project’s own stylesheets, which its minifier stripped them from', async () => {
    const root = await createSvelteKitLazyApp()
    roots.push(root)
    await writeFile(join(root, 'src/app.css'), MARKED_CSS)
    const build = await buildSvelteKitLazyApp(root, { cache: false, report: false })
    const sheets = [...build.files].filter(([file]) => file.endsWith('.css')).map(([, text]) => text)
    expect(sheets.join('')).toContain('.menu.is-open')
    expect(sheets.join('')).not.toContain('critical-css:')
    expectMarked(CRITICAL.exec(build.files.get(`${SVELTEKIT_BASE.slice(1)}/index.html`)!)?.[1] ?? '')
    expect(`${build.run.stdout}${build.run.stderr}`).not.toContain('critical-css:keep')
  })

  it('the folder command reads them in the built stylesheets', async () => {
    const dist = await mkdtemp(join(tmpdir(), 'ucc-markers-folder-'))
    roots.push(dist)
    await writeFile(join(dist, 'package.json'), '{ "private": true }\n')
    await writeFile(join(dist, 'style.css'), MARKED_CSS)
    await writeFile(join(dist, 'index.html'), page('Home', '<link rel="stylesheet" href="/style.css">\n'))
    await processDirectory(dist, {}, { root: dist, logger: quiet(), env: {} })
    expectMarked(CRITICAL.exec(await readFile(join(dist, 'index.html'), 'utf8'))?.[1] ?? '')
  })
})
