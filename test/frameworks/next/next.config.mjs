import { fileURLToPath } from 'node:url'

// A static export (`output: 'export'` writes the site to out/), built as a user would with
// `next build && critical-css out`. NEXT_BASE_PATH=/docs builds the basePath variant.
// The build id is fixed so two builds of the same sources write the same bytes (by default
// Next makes a random one per build, which lands in every page and in a folder name).
const basePath = process.env.NEXT_BASE_PATH ?? ''

/** @type {import('next').NextConfig} */
export default {
  output: 'export',
  basePath,
  generateBuildId: () => 'ucc-fixture',
  images: { unoptimized: true },
  // This project, not the repo around it (whose lock file Next would otherwise take for the workspace's).
  turbopack: { root: fileURLToPath(new URL('.', import.meta.url)) },
}
