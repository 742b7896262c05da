/**
 * `npm run demo`: builds playground/vite and playground/webpack with the plugin and prints
 * what it did. Until the embedded service exists, the plugin talks to the test suite's fake
 * service started here on 127.0.0.1, which answers every page with the site's rules above
 * the "Below the fold" comment (a stand-in: it does not render pages).
 */
import { readFile, stat } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { startFakeService } from '../test/fixtures/fake-service.ts'

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

async function standInCss(): Promise<string> {
  const css = await readFile(here('./site/site.css'), 'utf8')
  return css
    .slice(0, css.indexOf('/* Below the fold. */'))
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/@font-face\s*{[^}]*}/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([{}:;,])\s*/g, '$1')
    .trim()
}

async function main(): Promise<void> {
  const token = `demo_${randomBytes(12).toString('hex')}`
  const css = await standInCss()
  const fake = await startFakeService({ tokens: { [token]: { plan: 'pro' } }, behaviour: () => ({ durationMs: 300, css }) })
  process.env.CRITICAL_CSS_BASE_URL = fake.url
  process.env.CRITICAL_CSS_API_TOKEN = token
  process.env.CRITICAL_CSS_SITE_URL = 'https://playground.example'
  console.log(`fake critical CSS service on ${fake.url} (the embedded service replaces it in a later release)\n`)
  try {
    const { build } = await import('vite')
    console.log('── playground/vite')
    await build({ configFile: here('./vite/vite.config.ts') })

    console.log('\n── playground/webpack')
    const webpack = (await import('webpack')).default
    const config = (await import('./webpack/webpack.config.ts')).default
    const stats = await new Promise<import('webpack').Stats>((resolve, reject) => {
      const compiler = webpack(config)
      compiler.run((error, result) => compiler.close(() => (error || !result ? reject(error) : resolve(result))))
    })
    console.log(stats.toString({ colors: process.stdout.isTTY, assets: true, modules: false, logging: 'info', children: false }))
    if (stats.hasErrors()) process.exitCode = 1

    for (const name of ['vite', 'webpack']) {
      const file = here(`./${name}/report.json`)
      const report = JSON.parse(await readFile(file, 'utf8')) as { pages: { file: string; cssBytes: number; outcome: string }[] }
      const sizes = await Promise.all(report.pages.map(async (page) => (await stat(here(`./${name}/dist/${page.file}`))).size))
      console.log(`\n${name}: ${report.pages.filter((page) => page.outcome === 'inlined').length}/${report.pages.length} pages inlined; report ${file}`)
      for (const [index, page] of report.pages.entries()) console.log(`  ${page.file.padEnd(20)} ${page.outcome.padEnd(9)} ${page.cssBytes} B CSS inlined, page now ${sizes[index]} B`)
    }
    console.log(`\n${fake.requests.length} requests to the service.`)
  } finally {
    await fake.close()
  }
}

await main()
