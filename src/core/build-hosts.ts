/**
 * Where a build runs, as far as it can tell (the hosts' own env vars, a container's marker
 * files), and the one step that brings a browser there: what the warning says when a build
 * falls back to the static engine. docs/where-you-build.md says the same per host, at length.
 */
import { existsSync } from 'node:fs'
import { hostname } from 'node:os'

type Env = Readonly<Record<string, string | undefined>>

export interface BuildHost {
  /** Where, as the warning says it: `on Vercel`, `in a container`. */
  where: string
  /** The one step that brings the Chromium engine here. */
  step: string
}

const SPARTICUZ_INSTALL = '`npm i -D @sparticuz/chromium`'
const SPARTICUZ = `${SPARTICUZ_INSTALL} (a Chromium for Linux x64 build images; found and used when it is installed)`
const DEBIAN = '`apt-get install -y chromium` (Debian/Ubuntu)'

/** The host this build runs on, by its own markers; a generic answer where none says. */
export function buildHost(env: Env = process.env, exists: (path: string) => boolean = existsSync, host: string = hostname()): BuildHost {
  if (env.VERCEL) return { where: 'on Vercel', step: SPARTICUZ }
  if (env.NETLIFY === 'true') return { where: 'on Netlify', step: SPARTICUZ }
  if (env.CF_PAGES === '1') return { where: 'on Cloudflare Pages', step: `${SPARTICUZ}, or render with a Critical CSS service (CRITICAL_CSS_BASE_URL)` }
  if (env.GITHUB_ACTIONS === 'true') return { where: 'on GitHub Actions', step: `run on \`ubuntu-latest\` (x64 runners have Chrome); in a container job, ${DEBIAN} in its image` }
  if (env.GITLAB_CI === 'true') return { where: 'on GitLab CI', step: `use a job image with Chromium, or ${DEBIAN} in \`before_script\`` }
  // BuildKit's RUN steps have no /.dockerenv; its default hostname says it.
  if (exists('/.dockerenv') || exists('/run/.containerenv') || host === 'buildkitsandbox') return { where: 'in a container', step: `\`RUN apt-get update && apt-get install -y chromium\` in the Dockerfile (node images are Debian; Alpine: \`apk add chromium\`)` }
  return { where: 'on this machine', step: `install Chrome or Chromium (${DEBIAN}; macOS: Google Chrome), ${SPARTICUZ_INSTALL} on Linux x64, or set CHROME_PATH` }
}
