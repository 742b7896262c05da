/**
 * Issue 50, Nuxt 4 end to end: a server build (`nuxt build`, Nitro's node-server preset) with
 * our module and without it (test/fixtures/server-route-checks.ts has the checks every
 * framework passes): the Nitro plugin gives each page of a covered route its CSS, and an
 * error page of a covered route, a payload and a file go out as Nitro made them. Under a
 * nonce policy as nuxt-security sets one, what the plugin adds carries the request's nonce;
 * below an `app.baseURL`, pages get their CSS and the loader is found there; another preset
 * gets none, and the log says why.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { launchChromium } from '../fixtures/browser.ts'
import { output } from '../fixtures/frameworks.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { buildNuxtServerApp, createNuxtServerApp, removeNuxtServerApp, startNuxtServer } from '../fixtures/nuxt-server-app.ts'
import { screen } from '../fixtures/running-app.ts'
import { describeServerRoutes, NOT_SAMPLED, SAMPLED, VIEWPORTS } from '../fixtures/server-route-checks.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'

describeServerRoutes(
  {
    name: 'Nuxt 4 (nuxt build, node-server)',
    create: createNuxtServerApp,
    remove: removeNuxtServerApp,
    build: buildNuxtServerApp,
    out: '.output',
    manifest: 'server/critical-css.json',
    start: startNuxtServer,
    postsRoute: '/posts/:slug()',
    routes: ['/posts/:slug()', '/about', '/pricing', '/'],
    covered: ['/about', '/'],
    uncovered: ['/posts/nope', '/no-such-page', '/posts/hello/_payload.json'],
  },
  (apps) => {
    it('with another Nitro preset, the build says its pages rendered per request get no critical CSS and why, and writes no manifest', async () => {
      const root = await createNuxtServerApp()
      try {
        const built = await buildNuxtServerApp(root, { cache: false, samples: { '/posts/:slug()': SAMPLED } }, { NITRO_PRESET: 'vercel' })
        expect(built.code, output(built)).toBe(0)
        // Nitro's logger drops the message's backticks.
        expect(output(built)).toMatch(/critical CSS: with Nitro's `?vercel`? preset, pages rendered per request get no critical CSS: the build renders them by starting the server it built, which the `?node-server`? preset makes \(`?nitro: \{ preset: 'node-server' \}`?\); prerendered pages got theirs\./)
        expect(output(built)).not.toContain('critical CSS: rendering')
        // The preset's output (the fixture's `.output`, in Vercel's shape) has no manifest anywhere in it.
        const written = await readdir(join(root, '.output'), { recursive: true })
        expect(written.some((file) => file.endsWith('.func') || file.endsWith('index.html'))).toBe(true)
        expect(written.filter((file) => file.endsWith('critical-css.json'))).toEqual([])
      } finally {
        await removeNuxtServerApp(root)
      }
    }, 180_000)

    it('with nuxt-security’s nonce (event.context.security.nonce, scripts only by it), the style and the loader carry the request’s nonce, and the page paints and loads as the plain app’s', async () => {
      const app = await startNuxtServer(apps.root, apps.builtOut, { UCC_NUXT_NONCE: '1' })
      const browser = await launchChromium()
      try {
        const response = await fetch(`${app.origin}${SAMPLED}`)
        const nonce = /'nonce-([^']+)'/.exec(response.headers.get('content-security-policy') ?? '')?.[1]
        expect(nonce).toBeDefined()
        const html = await response.text()
        expect(html).toContain(`<style data-critical-css nonce="${nonce}">`)
        expect(/<script src="[^"]*critical-css-loader\.[0-9a-f]{8}\.js" async nonce="([^"]*)"><\/script>/.exec(html)?.[1]).toBe(nonce)
        const [loaded, first] = await Promise.all([screen(browser, apps.plain, SAMPLED, VIEWPORTS[0]!, false), screen(browser, app, SAMPLED, VIEWPORTS[0]!, true)])
        expect(compareScreenshots(loaded, first).differentPixels, 'first screen').toBe(0)
        // Waits until the loader has given every deferred link its media back: only a script with the nonce runs.
        const [before, after] = await Promise.all([screen(browser, apps.plain, SAMPLED, VIEWPORTS[0]!, false, true), screen(browser, app, SAMPLED, VIEWPORTS[0]!, false, true)])
        expect(compareScreenshots(before, after).differentPixels, 'loaded').toBe(0)
      } finally {
        await Promise.all([app.stop(), browser.close()])
      }
    }, 120_000)

    it('below `app.baseURL`, every page of a covered route gets its CSS and the loader it names is served; the first screen with every stylesheet held back is the page’s loaded one', async () => {
      const out = join(apps.root, '.output-shop')
      const built = await buildNuxtServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/:slug()': `/shop${SAMPLED}` } }, { UCC_NUXT_BASE: '/shop/', UCC_NUXT_OUT: out })
      expect(built.code, output(built)).toBe(0)
      const app = await startNuxtServer(apps.root, out)
      const browser = await launchChromium()
      try {
        for (const path of [`/shop${SAMPLED}`, `/shop${NOT_SAMPLED}`, '/shop/about']) {
          const html = await (await fetch(`${app.origin}${path}`)).text()
          expect(html, path).toMatch(CRITICAL)
          const loader = /<script src="([^"]*critical-css-loader\.[0-9a-f]{8}\.js)" async><\/script>/.exec(html)?.[1]
          expect(loader, path).toMatch(/^\/shop\//)
          const script = await fetch(new URL(loader!, `${app.origin}${path}`))
          expect(script.status, loader).toBe(200)
          const [loaded, first] = await Promise.all([screen(browser, app, path, VIEWPORTS[0]!, false), screen(browser, app, path, VIEWPORTS[0]!, true)])
          expect(compareScreenshots(loaded, first).differentPixels, path).toBe(0)
        }
      } finally {
        await Promise.all([app.stop(), browser.close()])
      }
    }, 240_000)
  },
)
