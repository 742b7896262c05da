import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import HtmlWebpackPlugin from 'html-webpack-plugin'
import MiniCssExtractPlugin from 'mini-css-extract-plugin'
import type { Configuration } from 'webpack'
// The playground imports the source, as a user's config imports 'unplugin-critical-css/webpack'.
import criticalCss from '../../src/webpack.ts'
import type { Options } from '../../src/core/options.ts'
import { PAGES } from '../pages.ts'

/** The site's pages without Vite's module script: webpack injects its own bundle. */
function template(site: string, page: string): string {
  return readFileSync(join(site, page), 'utf8').replace(/\s*<script type="module"[^>]*><\/script>/, '')
}

/** The playground's build; the end-to-end tests build a copy of the site elsewhere with it. */
export function playgroundConfig({
  site = fileURLToPath(new URL('../site/', import.meta.url)),
  outDir = fileURLToPath(new URL('./dist/', import.meta.url)),
  plugin = { report: fileURLToPath(new URL('./report.json', import.meta.url)) },
}: { site?: string; outDir?: string; plugin?: Options } = {}): Configuration {
  return {
    mode: 'production',
    context: site,
    entry: './main.js',
    output: { path: outDir, publicPath: '/', clean: true, assetModuleFilename: 'assets/[name]-[contenthash:8][ext]' },
    module: {
      rules: [
        // The repo's package.json says sideEffects: false (true of the library); a stylesheet import is one.
        { test: /\.css$/, sideEffects: true, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
        { test: /\.woff2$/, type: 'asset/resource' },
      ],
    },
    plugins: [
      ...PAGES.map((page) => new HtmlWebpackPlugin({ filename: page, templateContent: template(site, page), inject: 'head', minify: false })),
      new MiniCssExtractPlugin({ filename: 'assets/[name]-[contenthash:8].css' }),
      // No service configured: embedded mode. Set CRITICAL_CSS_BASE_URL and _API_TOKEN (and _SITE_URL) for a remote service.
      criticalCss(plugin),
    ],
  }
}

export default playgroundConfig()
