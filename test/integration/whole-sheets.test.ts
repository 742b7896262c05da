/// <reference lib="dom" />
/**
 * Issue 35, nothing sent twice: where a page's critical CSS is nearly all of its stylesheet
 * (a small app's one sheet), the folder command puts the sheet inline whole where its link
 * was, and the page asks for no CSS at all; its `url()`s still find their files. A page whose
 * sheet is mostly below the fold, or whose link the page's own code looks for, keeps the critical
 * CSS and the deferred link. So does one the site's scripts name (issue 49): a lazily loaded
 * chunk asks for it, and a link it adds then would come after the inlined sheets.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { processDirectory } from '../../src/index.ts'
import { LOADER_FILE } from '../../src/html/loader.ts'
import type { BuildLogger } from '../../src/core/report.ts'
import { launchChromium } from '../fixtures/browser.ts'
import { CRITICAL } from '../fixtures/html.ts'
import { SITE_CSS, page } from '../fixtures/sites.ts'
import { serveFiles } from '../fixtures/static-server.ts'

/** All of it paints the first screen: the hero, its background image next to the sheet, the body's margin. */
const APP_CSS = 'body{margin:0;font-family:system-ui,sans-serif}.hero{min-height:100vh;display:grid;place-items:center;background:#0b3d91 url(img/dot.svg);color:#fff}\n'
const DOT = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="2" height="2" fill="#fff"/></svg>'

const temps: string[] = []
let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

function quiet(): BuildLogger & { infos: string[] } {
  const infos: string[] = []
  return { infos, info: (message) => infos.push(message), warn: () => {} }
}

/**
 * `app/index.html` links its one sheet relatively; `site.html` links the fixture site's sheet, mostly below the fold; `react.html` the app's sheet,
 * marked as React marks it; `shop.html` a sheet as critical as the app's, which a chunk of the site's code names as a dependency it loads.
 */
async function folder(): Promise<{ root: string; dist: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ucc-whole-'))
  temps.push(root)
  const dist = join(root, 'dist')
  const files: Record<string, string> = {
    'app/index.html': page('app', '<link rel="stylesheet" href="../css/app.css">\n'),
    'css/app.css': APP_CSS,
    'css/img/dot.svg': DOT,
    'site.html': page('site', '<link rel="stylesheet" href="/style.css">\n'),
    // React (Next.js's app router) hydrates against its own stylesheet links: this one must stay a link.
    'react.html': page('react', '<link rel="stylesheet" href="/css/app.css" data-precedence="next">\n'),
    'style.css': SITE_CSS,
    'shop.html': page('shop', '<link rel="stylesheet" href="/assets/kit-4f2a.css">\n<script type="module" src="/assets/shop-9c1d.js"></script>\n'),
    'assets/kit-4f2a.css': APP_CSS,
    'assets/shop-9c1d.js': 'const deps = ["assets/kit-4f2a.css"]; export const load = () => import("./cart-77aa.js").then((m) => m.render(deps));\n',
    'assets/cart-77aa.js': 'export function render() {}\n',
  }
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dist, file)), { recursive: true })
    await writeFile(join(dist, file), text)
  }
  await writeFile(join(root, 'package.json'), '{ "private": true }\n')
  return { root, dist }
}

describe('a stylesheet the critical CSS is nearly all of', () => {
  it('is inlined whole in its link’s place: no CSS request, its image found, the report says so; a mostly-below-the-fold sheet is deferred as before', async () => {
    const { root, dist } = await folder()
    const logger = quiet()
    const { report } = await processDirectory(dist, {}, { root, logger, env: {} })
    const app = await readFile(join(dist, 'app/index.html'), 'utf8')
    // The sheet's text, its image named from the page (the page links relatively), and nothing else added.
    expect(app).toBe(page('app', `<style>${APP_CSS.replace('url(img/dot.svg)', 'url(../css/img/dot.svg)')}</style>\n`))
    const byFile = new Map(report.pages.map((entry) => [entry.file, entry]))
    expect(byFile.get('app/index.html')).toMatchObject({ outcome: 'inlined', inlinedWhole: ['../css/app.css'] })
    expect(logger.infos.join('\n')).toMatch(/app\/.*inlined \(1 stylesheet whole: the critical CSS was nearly all of it\)/)

    const site = await readFile(join(dist, 'site.html'), 'utf8')
    expect(byFile.get('site.html')).toMatchObject({ outcome: 'inlined', inlinedWhole: [] })
    expect(CRITICAL.exec(site)?.[1]).toContain('.hero{')
    expect(site).toContain('data-critical-css-media')
    expect(existsSync(join(dist, LOADER_FILE))).toBe(true)
    const react = await readFile(join(dist, 'react.html'), 'utf8')
    expect(byFile.get('react.html')).toMatchObject({ outcome: 'inlined', inlinedWhole: [] })
    expect(react).toContain('data-precedence="next"')
    expect(CRITICAL.exec(react)?.[1]).toContain('.hero{')
    const shop = await readFile(join(dist, 'shop.html'), 'utf8')
    expect(byFile.get('shop.html')).toMatchObject({ outcome: 'inlined', inlinedWhole: [] })
    expect(shop).toContain('href="/assets/kit-4f2a.css"')
    expect(CRITICAL.exec(shop)?.[1]).toContain('.hero{')

    // A second run over its own output finds nothing to defer and changes nothing, cache or not.
    for (const cache of [undefined, false] as const) {
      const again = await processDirectory(dist, cache === false ? { cache } : {}, { root, logger: quiet(), env: {} })
      expect(again.written).toEqual([])
      expect(await readFile(join(dist, 'app/index.html'), 'utf8')).toBe(app)
    }

    const files = { '/app/index.html': app, '/css/app.css': APP_CSS, '/css/img/dot.svg': DOT }
    const server = await serveFiles(files)
    const context = await browser.newContext({ viewport: { width: 800, height: 600 } })
    try {
      const tab = await context.newPage()
      await tab.goto(`${server.origin}/app/index.html`, { waitUntil: 'load' })
      const hero = await tab.evaluate(() => {
        const style = getComputedStyle(document.querySelector('.hero')!)
        return { color: style.backgroundColor, image: style.backgroundImage }
      })
      expect(hero.color).toBe('rgb(11, 61, 145)')
      expect(hero.image).toBe(`url("${server.origin}/css/img/dot.svg")`)
      // The image is asked for because the hero paints it; the stylesheet never is.
      expect(server.requests).toContain('/css/img/dot.svg')
      expect(server.requests.filter((path) => path.endsWith('.css'))).toEqual([])
    } finally {
      await context.close()
      await server.close()
    }
  }, 120_000)
})
