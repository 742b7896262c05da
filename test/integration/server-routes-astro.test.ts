/**
 * Issue 50, Astro 7 end to end: a server app (`output: 'server'`, the node adapter standalone)
 * built with our integration and without it (test/fixtures/server-route-checks.ts has the
 * checks every framework passes). Here too: with \`security.csp\` the policy names the critical
 * style; below a base every route is rendered there; Astro 5 with @astrojs/node 9 too; a post that links a sheet of its own
 * passes through; and a server whose manifest is
 * missing or broken serves its pages as they are.
 */
import { createHash } from 'node:crypto'
import { cp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { applyCriticalCss, loadManifest } from '../../src/runtime.ts'
import { buildAstroServerApp, createAstroServerApp, removeAstroServerApp, SERVER_OUT, startAstroServer } from '../fixtures/astro-server-app.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { output } from '../fixtures/frameworks.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { get, screen } from '../fixtures/running-app.ts'
import { describeServerRoutes, NOT_SAMPLED, SAMPLED, VIEWPORTS } from '../fixtures/server-route-checks.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'
import { until } from '../fixtures/until.ts'

describeServerRoutes(
  {
    name: 'Astro 7 (node adapter, standalone)',
    create: createAstroServerApp,
    remove: removeAstroServerApp,
    build: buildAstroServerApp,
    out: SERVER_OUT,
    manifest: 'server/critical-css.json',
    start: startAstroServer,
    postsRoute: '/posts/[slug]',
    routes: ['/about', '/blog/first-post', '/blog', '/posts/[slug]'],
    covered: ['/about', '/blog'],
    // A post linking a sheet of its own, a 404 of a covered route, a static file, a path no route has.
    uncovered: ['/posts/styled', '/posts/nope', '/robots.txt', '/no-such-page'],
  },
  (apps) => {
    it('on Astro 5 with @astrojs/node 9, a sampled and an unsampled page are the plain app’s with their route’s CSS inserted, and their first screen with every stylesheet held back is the plain app’s loaded one', async () => {
      const root = await createAstroServerApp('astro5')
      const browser = await launchChromium()
      const running: Awaited<ReturnType<typeof startAstroServer>>[] = []
      try {
        const plainOut = join(root, 'dist-plain')
        const plainBuild = await buildAstroServerApp(root, null, { UCC_ASTRO_OUT: plainOut })
        expect(plainBuild.code, output(plainBuild)).toBe(0)
        const built = await buildAstroServerApp(root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': SAMPLED } })
        expect(built.code, output(built)).toBe(0)
        expect(output(built)).toMatch(/4 server routes get critical CSS at request time/)
        const manifest = loadManifest(JSON.parse(await readFile(join(root, SERVER_OUT, 'server', 'critical-css.json'), 'utf8')))
        const plain = await startAstroServer(root, plainOut)
        running.push(plain)
        const app = await startAstroServer(root, SERVER_OUT)
        running.push(app)
        for (const path of [SAMPLED, NOT_SAMPLED, '/about']) {
          const [before, after] = await Promise.all([get(plain, path), get(app, path)])
          expect(after.body.toString('utf8'), path).toMatch(CRITICAL)
          expect(after.body.toString('utf8'), path).toBe(applyCriticalCss(before.body.toString('utf8'), path, manifest))
          const [loaded, first] = await Promise.all([screen(browser, plain, path, VIEWPORTS[0]!, false), screen(browser, app, path, VIEWPORTS[0]!, true)])
          expect(compareScreenshots(loaded, first).differentPixels, `${path} first screen`).toBe(0)
        }
      } finally {
        await Promise.all([...running.map((each) => each.stop()), browser.close()])
        await removeAstroServerApp(root)
      }
    }, 240_000)

    it('a server build that prerenders no page says nothing of pages it has none of: its routes get the CSS', async () => {
      const root = await createAstroServerApp()
      try {
        const index = join(root, 'src', 'pages', 'index.astro')
        await writeFile(index, (await readFile(index, 'utf8')).replace('export const prerender = true', 'export const prerender = false'))
        const built = await buildAstroServerApp(root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': SAMPLED } })
        expect(built.code, output(built)).toBe(0)
        expect(output(built)).toMatch(/5 server routes get critical CSS at request time/)
        expect(output(built)).not.toContain('there is no .html file')
      } finally {
        await removeAstroServerApp(root)
      }
    }, 240_000)

    it('below a `base`, every route is rendered from its page there and its pages get their CSS and a loader that is served', async () => {
      const out = join(apps.root, 'dist-docs')
      const built = await buildAstroServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': `/docs${SAMPLED}` } }, { UCC_ASTRO_BASE: '/docs', UCC_ASTRO_OUT: out })
      expect(built.code, output(built)).toBe(0)
      expect(output(built)).toMatch(/4 server routes get critical CSS at request time: \/about \(from \/docs\/about\), .*\/posts\/\[slug\] \(from \/docs\/posts\/hello\)/)
      const app = await startAstroServer(apps.root, out)
      try {
        for (const path of [`/docs${SAMPLED}`, `/docs${NOT_SAMPLED}`, '/docs/about', '/docs/blog']) {
          const html = (await get(app, path)).body.toString('utf8')
          expect(html, path).toMatch(CRITICAL)
          const loader = /<script src="([^"]*critical-css-loader\.[0-9a-f]{8}\.js)" async><\/script>/.exec(html)?.[1]
          expect(loader, path).toMatch(/^\/docs\//)
          expect((await get(app, loader!)).status, loader).toBe(200)
        }
      } finally {
        await app.stop()
      }
    }, 180_000)

    it('with `security.csp`, the policy Astro sends names the critical style, and the first screen with every stylesheet held back is the plain app’s loaded one', async () => {
      const out = join(apps.root, 'dist-csp')
      const built = await buildAstroServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!] }, { UCC_ASTRO_CSP: '1', UCC_ASTRO_OUT: out })
      expect(built.code, output(built)).toBe(0)
      const app = await startAstroServer(apps.root, out)
      const browser = await launchChromium()
      try {
        const response = await fetch(`${app.origin}/about`)
        const html = await response.text()
        const style = /<style data-critical-css>([\s\S]*?)<\/style>/.exec(html)?.[1]
        expect(style).toBeDefined()
        const hash = `'sha256-${createHash('sha256').update(style!).digest('base64')}'`
        expect(response.headers.get('content-security-policy')).toMatch(new RegExp(`style-src [^;]*${hash.replace(/[+/=]/g, '\\$&')}`))
        const [loaded, first] = await Promise.all([screen(browser, apps.plain, '/about', VIEWPORTS[0]!, false), screen(browser, app, '/about', VIEWPORTS[0]!, true)])
        expect(compareScreenshots(loaded, first).differentPixels).toBe(0)
      } finally {
        await Promise.all([app.stop(), browser.close()])
      }
    }, 120_000)

    it('the post that links a sheet of its own keeps it, as the plain app’s', async () => {
      expect((await get(apps.built, '/posts/styled')).body.toString('utf8')).toContain('href="/extra.css"')
    })

    it('a server whose manifest is missing or broken serves every page as the plain app does, and says so once; no request fails', async () => {
      for (const [name, manifestText] of [['missing', null], ['broken', '{"version":1,']] as const) {
        const copy = join(apps.root, `dist-${name}`)
        await cp(apps.builtOut, copy, { recursive: true })
        const file = join(copy, 'server', 'critical-css.json')
        if (manifestText === null) await rm(file)
        else await writeFile(file, manifestText)
        const app = await startAstroServer(apps.root, copy)
        try {
          for (const path of [SAMPLED, NOT_SAMPLED, SAMPLED]) {
            const [before, after] = await Promise.all([get(apps.plain, path), get(app, path)])
            expect(after.status, `${name} ${path}`).toBe(200)
            expect(after.body.equals(before.body), `${name} ${path}`).toBe(true)
          }
          // Its standard error is another pipe than the answers: the line may come after them.
          const said = (): string[] => app.output().split('\n').filter((line) => line.includes('pages are served without critical CSS'))
          expect(await until(() => said().length > 0, 15_000), name).toBe(true)
          expect(said(), name).toHaveLength(1)
          expect(said()[0]).toContain(file)
        } finally {
          await app.stop()
        }
      }
    })
  },
)
