/**
 * Issue 50, remote mode: a server app's routes rendered by a configured service where the
 * app is deployed. The SvelteKit adapter-node app built without us stands for the deployed
 * release (on 127.0.0.1, `siteUrl`); the reference service, with the real Chromium engine,
 * renders the sample URLs there; the build still starts its own server for what this
 * build's pages are. The checks every framework passes hold (test/fixtures/server-route-checks.ts),
 * and a build whose CSS differs from the deployed release's keeps only its own rules.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createClient } from '../../src/client/client.ts'
import type { CriticalCssManifest } from '../../src/runtime.ts'
import { startService } from '../../src/service/server.ts'
import { output } from '../fixtures/frameworks.ts'
import { describeServerRoutes, SAMPLED, VIEWPORTS } from '../fixtures/server-route-checks.ts'
import { buildSvelteKitServerApp, SVELTEKIT_SERVER_APP } from '../fixtures/sveltekit-server-app.ts'

const TOKEN = 'ccs_server_routes_remote_0123456789abcdefghij'
let service: Awaited<ReturnType<typeof startService>>

beforeAll(async () => {
  service = await startService({ tokens: [{ token: TOKEN, plan: 'ent' }], allowPrivateNetworks: true })
})
afterAll(async () => {
  await service?.close()
})

describeServerRoutes(
  { ...SVELTEKIT_SERVER_APP, name: 'SvelteKit 3 (adapter-node), remote mode,', covered: ['/about'], uncovered: ['/posts/nope', '/no-such-page'], service: () => ({ baseUrl: service.url, token: TOKEN }) },
  (apps) => {
    it('asks the service for the sample URLs where the app is deployed, not for the build’s own server', async () => {
      const client = createClient({ baseUrl: service.url, token: TOKEN })
      try {
        const jobs = await client.jobs({ limit: 100 })
        expect(new Set(jobs.map((job) => job.url))).toEqual(new Set(['/', '/about', SAMPLED, '/pricing'].map((path) => `${apps.plain.origin}${path}`)))
      } finally {
        await client.close()
      }
      expect(apps.buildLog).toContain(`rendering 4 server routes where the app is deployed (${apps.plain.origin})`)
      expect(apps.buildLog).not.toContain('serves other stylesheets')
    })

    it('a build whose post header changed keeps its own rules, not the deployed release’s, and says so', async () => {
      const page = join(apps.root, 'src/routes/posts/[slug]/+page.svelte')
      const source = await readFile(page, 'utf8')
      await writeFile(page, source.replace('background: #123b5d', 'background: #c00'))
      try {
        const out = join(apps.root, 'build-other')
        const built = await buildSvelteKitServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': SAMPLED }, baseUrl: service.url, token: TOKEN, siteUrl: `${apps.plain.origin}/` }, { UCC_KIT_OUT: out })
        expect(built.code, output(built)).toBe(0)
        const manifest = JSON.parse(await readFile(join(out, 'server', 'critical-css.json'), 'utf8')) as CriticalCssManifest
        const posts = manifest.routes.find((route) => route.route === '/posts/[slug]')!
        expect(posts.css).toMatch(/\.post-header\{[^}]*background:#c00/)
        expect(posts.css).not.toContain('#123b5d')
        expect(output(built)).toContain(`the deployed site at ${apps.plain.origin}/ serves other stylesheets than this build`)
      } finally {
        await writeFile(page, source)
      }
    }, 180_000)
  },
)
