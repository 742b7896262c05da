/**
 * Remote mode renders the site where it is deployed. A build whose stylesheets are not the
 * deployed release's must not inline that release's rules (issue 31): a site built and
 * "deployed" on loopback (release A), its hero's background changed, and build B run in
 * remote mode against the reference service, with the real Chromium engine.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { startService } from '../../src/service/server.ts'
import { readStyles } from '../fixtures/html.ts'
import { SITE_PAGES, buildSite, createProject, removeProject, type BuildOutput } from '../fixtures/sites.ts'
import { serveFiles, type StaticServer } from '../fixtures/static-server.ts'

const TOKEN = 'ccs_remote_own_css_0123456789abcdefghijklmnopq'
let service: Awaited<ReturnType<typeof startService>>
let deployed: StaticServer | null = null
const roots: string[] = []

/** Serves a build's output as the deployed site. */
async function deploy(output: BuildOutput): Promise<string> {
  await deployed?.close()
  deployed = await serveFiles(Object.fromEntries([...output.files].map(([file, bytes]) => [`/${file}`, { body: bytes.toString('utf8'), type: file.endsWith('.css') ? 'text/css' : file.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8' }])))
  return `${deployed.origin}/`
}

async function heroBackground(root: string, color: string): Promise<void> {
  const style = join(root, 'src/style.css')
  await writeFile(style, (await readFile(style, 'utf8')).replace(/background:#[0-9a-f]+/, `background:${color}`))
}

function critical(output: BuildOutput, file: string): string {
  return readStyles(output.files.get(file)!.toString('utf8')).critical.join('')
}

describe.skipIf(!findChromium())('remote mode inlines only this build’s CSS', () => {
  beforeAll(async () => {
    service = await startService({ tokens: [{ token: TOKEN, plan: 'ent' }], allowPrivateNetworks: true })
  })
  afterAll(async () => {
    await deployed?.close()
    await service?.close()
    await Promise.all(roots.map(removeProject))
  })

  it('says nothing when the deployed site runs this build, and holds a build with other CSS to its own rules', async () => {
    const root = await createProject('vite')
    roots.push(root)
    await heroBackground(root, '#123')
    const siteUrl = await deploy(await buildSite('vite', { root, withoutPlugin: true }))
    const remote = { baseUrl: service.url, token: TOKEN, siteUrl, cache: false } as const

    // Deployed == build: the service's CSS as it came, nothing said.
    const same = await buildSite('vite', { root, plugin: remote })
    expect(same.error).toBeNull()
    for (const { file } of SITE_PAGES) expect(critical(same, file)).toMatch(/\.hero\{[^}]*background:#123/)
    expect(same.warnings.filter((line) => line.includes('critical CSS'))).toEqual([])

    // Build B changes the hero above the fold; the deployed site still runs A.
    await heroBackground(root, '#c00')
    const other = await buildSite('vite', { root, plugin: remote })
    expect(other.error).toBeNull()
    for (const { file } of SITE_PAGES) {
      const css = critical(other, file)
      expect(css).not.toContain('#123')
      expect(css).toMatch(/\.hero\{[^}]*background:#c00/)
    }
    const told = other.warnings.filter((line) => line.includes('critical CSS'))
    expect(told).toEqual([expect.stringContaining(`the deployed site at ${siteUrl} serves other stylesheets than this build`)])
    expect(told[0]).toMatch(/deploy first, or use embedded mode/)

    // `strict` fails on it, and writes no page.
    const strict = await buildSite('vite', { root, plugin: { ...remote, strict: true } })
    expect(strict.error?.message).toMatch(/serves other stylesheets than this build/)
  }, 120_000)

  it('keeps a result for the stylesheets it was made with: a build whose CSS changed asks again', async () => {
    const root = await createProject('vite')
    roots.push(root)
    await heroBackground(root, '#123')
    const siteUrl = await deploy(await buildSite('vite', { root, withoutPlugin: true }))
    const remote = { baseUrl: service.url, token: TOKEN, siteUrl, report: join(root, 'report.json') }
    const sources = async (): Promise<string[]> => (JSON.parse(await readFile(join(root, 'report.json'), 'utf8')) as { pages: { source: string }[] }).pages.map((page) => page.source)
    expect((await buildSite('vite', { root, plugin: remote })).error).toBeNull()
    expect(await sources()).toEqual(['service', 'service', 'service'])
    expect((await buildSite('vite', { root, plugin: remote })).error).toBeNull()
    expect(await sources()).toEqual(['cache', 'cache', 'cache'])
    // Before, the cache key named the page's URL only: this build took the results made for the other CSS.
    await heroBackground(root, '#c00')
    const other = await buildSite('vite', { root, plugin: remote })
    expect(await sources()).toEqual(['service', 'service', 'service'])
    expect(critical(other, 'index.html')).toMatch(/\.hero\{[^}]*background:#c00/)
  }, 120_000)
})
