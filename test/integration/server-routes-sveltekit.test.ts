/**
 * Issue 50, SvelteKit 3 end to end: an adapter-node app built with our adapter wrapper and
 * the one-line `handle`, and without them (test/fixtures/server-route-checks.ts has the
 * checks every framework passes): the handle gives each page of a covered route its CSS, and
 * an error page of a covered route, a page's data and a path no route has go out as kit made
 * them. With kit's CSP nonces, what the runtime adds carries the nonce kit gave the response;
 * with its hashes, the policy kit sends names the critical style's;
 * below a `paths.base`, every route is rendered there.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { expect, it } from 'vitest'
import { launchChromium } from '../fixtures/browser.ts'
import { output } from '../fixtures/frameworks.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { screen, type RunningApp } from '../fixtures/running-app.ts'
import { describeServerRoutes, SAMPLED, VIEWPORTS } from '../fixtures/server-route-checks.ts'
import { compareScreenshots } from '../fixtures/site-view.ts'
import { buildSvelteKitServerApp, startSvelteKitServer, SVELTEKIT_SERVER_APP } from '../fixtures/sveltekit-server-app.ts'

/**
 * `path` of `app` as the plain app's: its first screen with every stylesheet held back is the
 * plain page's loaded one, and once the loader has given every deferred link its media back,
 * its loaded page is the plain one.
 */
async function paintsAndLoadsAsPlain(browser: Browser, plain: RunningApp, app: RunningApp, path: string): Promise<void> {
  const [loaded, first] = await Promise.all([screen(browser, plain, path, VIEWPORTS[0]!, false), screen(browser, app, path, VIEWPORTS[0]!, true)])
  expect(compareScreenshots(loaded, first).differentPixels, `${path} first screen`).toBe(0)
  const [before, after] = await Promise.all([screen(browser, plain, path, VIEWPORTS[0]!, false, true), screen(browser, app, path, VIEWPORTS[0]!, false, true)])
  expect(compareScreenshots(before, after).differentPixels, `${path} loaded`).toBe(0)
}

describeServerRoutes(
  SVELTEKIT_SERVER_APP,
  (apps) => {
    /** Builds the app with kit's `csp` in `mode` into its own folder, starts it, and hands `check` the server and a browser. */
    async function withCsp(mode: 'nonce' | 'hash', check: (app: RunningApp, browser: Browser) => Promise<void>): Promise<void> {
      const out = join(apps.root, `build-csp-${mode}`)
      const built = await buildSvelteKitServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': SAMPLED } }, { UCC_KIT_CSP: mode, UCC_KIT_OUT: out })
      expect(built.code, output(built)).toBe(0)
      const app = await startSvelteKitServer(apps.root, out)
      const browser = await launchChromium()
      try {
        await check(app, browser)
      } finally {
        await Promise.all([app.stop(), browser.close()])
      }
    }

    it('with kit’s CSP nonces (scripts only by nonce), the style and the loader script carry the nonce of their response, and the page paints and loads as the plain app’s', async () => {
      await withCsp('nonce', async (app, browser) => {
        for (const path of [SAMPLED, '/about']) {
          const response = await fetch(`${app.origin}${path}`)
          const nonce = /'nonce-([^']+)'/.exec(response.headers.get('content-security-policy') ?? '')?.[1]
          expect(nonce, path).toBeDefined()
          const html = await response.text()
          expect(html, path).toContain(`<style data-critical-css nonce="${nonce}">`)
          expect(/<script src="[^"]*critical-css-loader\.[0-9a-f]{8}\.js" async nonce="([^"]*)"><\/script>/.exec(html)?.[1], path).toBe(nonce)
          // Only a script with the nonce runs: the loaded page is the plain app's once the loader ran.
          await paintsAndLoadsAsPlain(browser, apps.plain, app, path)
        }
      })
    }, 180_000)

    it('with kit’s CSP hashes (inline styles only by hash), the policy kit sends names the critical style’s hash, and the page paints and loads as the plain app’s', async () => {
      await withCsp('hash', async (app, browser) => {
        for (const path of [SAMPLED, '/posts/not-sampled']) {
          const response = await fetch(`${app.origin}${path}`)
          const html = await response.text()
          const style = /<style data-critical-css>([^<]*)<\/style>/.exec(html)?.[1]
          expect(style, path).toBeDefined()
          const styleSrc = (response.headers.get('content-security-policy') ?? '').split(';').find((directive) => directive.trim().startsWith('style-src'))
          expect(styleSrc, path).toContain(`'sha256-${createHash('sha256').update(style!).digest('base64')}'`)
          await paintsAndLoadsAsPlain(browser, apps.plain, app, path)
        }
      })
    }, 180_000)

    it('a server built without the handle renders nothing, writes no manifest, and the log gives the line to add', async () => {
      const out = join(apps.root, 'build-no-handle')
      const built = await buildSvelteKitServerApp(apps.root, { cache: false }, { UCC_KIT_OUT: out }, false)
      expect(built.code, output(built)).toBe(0)
      expect(output(built)).toContain("Add `export { handle } from 'unplugin-critical-css/sveltekit/handle'` to src/hooks.server.js")
      expect(output(built)).not.toContain('critical CSS: rendering')
      expect(existsSync(join(out, 'server', 'critical-css.json'))).toBe(false)
    }, 120_000)

    it('below `paths.base`, every route is rendered from its page there (the start page at the base with its slash) and its pages get their CSS and a loader that is served', async () => {
      const out = join(apps.root, 'build-shop')
      const built = await buildSvelteKitServerApp(apps.root, { cache: false, viewports: [VIEWPORTS[0]!], samples: { '/posts/[slug]': `/shop${SAMPLED}` } }, { UCC_KIT_BASE: '/shop', UCC_KIT_OUT: out })
      expect(built.code, output(built)).toBe(0)
      expect(output(built)).toContain('4 server routes get critical CSS at request time: / (from /shop/), /about (from /shop/about)')
      const app = await startSvelteKitServer(apps.root, out)
      try {
        for (const path of ['/shop/', `/shop${SAMPLED}`, '/shop/posts/not-sampled', '/shop/about']) {
          const html = await (await fetch(`${app.origin}${path}`)).text()
          expect(html, path).toMatch(CRITICAL)
          const loader = /<script src="([^"]*critical-css-loader\.[0-9a-f]{8}\.js)" async><\/script>/.exec(html)?.[1]
          expect(loader, path).toMatch(/^\/shop\//)
          expect((await fetch(new URL(loader!, `${app.origin}${path}`))).status, loader).toBe(200)
        }
      } finally {
        await app.stop()
      }
    }, 180_000)
  },
)
