import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import HtmlWebpackPlugin from 'html-webpack-plugin'
import MiniCssExtractPlugin from 'mini-css-extract-plugin'
import type { Configuration } from 'webpack'
// The playground imports the source, as a user's config imports 'unplugin-critical-css/webpack'.
import criticalCss from '../../src/webpack.ts'

const site = fileURLToPath(new URL('../site/', import.meta.url))
const pages = ['index.html', 'pricing/index.html', 'about/index.html']

/** The site's pages without Vite's module script: webpack injects its own bundle. */
function template(page: string): string {
  return readFileSync(site + page, 'utf8').replace(/\s*<script type="module"[^>]*><\/script>/, '')
}

// No service configured: embedded mode. Set CRITICAL_CSS_BASE_URL and _API_TOKEN (and _SITE_URL) for a remote service.
const config: Configuration = {
  mode: 'production',
  context: site,
  entry: './main.js',
  output: { path: fileURLToPath(new URL('./dist/', import.meta.url)), publicPath: '/', clean: true, assetModuleFilename: 'assets/[name]-[contenthash:8][ext]' },
  module: {
    rules: [
      // The repo's package.json says sideEffects: false (true of the library); a stylesheet import is one.
      { test: /\.css$/, sideEffects: true, use: [MiniCssExtractPlugin.loader, 'css-loader'] },
      { test: /\.woff2$/, type: 'asset/resource' },
    ],
  },
  plugins: [
    ...pages.map((page) => new HtmlWebpackPlugin({ filename: page, templateContent: template(page), inject: 'head', minify: false })),
    new MiniCssExtractPlugin({ filename: 'assets/[name]-[contenthash:8].css' }),
    criticalCss({ report: fileURLToPath(new URL('./report.json', import.meta.url)) }),
  ],
}

export default config
