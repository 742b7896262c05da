// Finds the static-site generators the real-site tests build with (test/integration/real-sites.test.ts),
// and installs Debian's `hugo` and `mkdocs` when they are missing and this is a Debian or Ubuntu
// machine where we are root. TypeDoc is a devDependency, so npm already put it in node_modules.
// A generator that cannot be had is not an error here: its tests skip and say why, so a laptop
// without root still runs `npm test`. Nothing is downloaded from anywhere but the package managers.
//
//   tsx scripts/site-generators.ts      print each generator's version, installing if needed
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const TYPEDOC = fileURLToPath(new URL('../node_modules/typedoc/bin/typedoc', import.meta.url))

/** Each generator's command and the Debian package that provides it. */
const DEBIAN = { hugo: 'hugo', mkdocs: 'mkdocs' } as const
export type Generator = keyof typeof DEBIAN | 'typedoc'

function canApt(): boolean {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  return root && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0
}

/** The first line the command's version query prints, or null when it does not run. */
function versionOf(command: string, args: readonly string[]): string | null {
  const run = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 })
  if (run.error || run.status !== 0) return null
  return (run.stdout || run.stderr).trim().split('\n')[0] ?? ''
}

// Debian's Hugo (0.111) has only the `version` command: `--version` is an unknown flag there.
const VERSION_ARGS: Record<Generator, readonly string[]> = { hugo: ['version'], mkdocs: ['--version'], typedoc: ['--version'] }

/** The generator's version line, or null when it is not installed (tests use this to decide whether to skip). */
export function generatorVersion(name: Generator): string | null {
  if (name === 'typedoc') return existsSync(TYPEDOC) ? versionOf(process.execPath, [TYPEDOC, ...VERSION_ARGS.typedoc]) : null
  return versionOf(name, VERSION_ARGS[name])
}

/** Why a generator is absent, for a test's skip message. */
export function missingReason(name: Generator): string {
  if (name === 'typedoc') return 'typedoc is not in node_modules (npm install)'
  return `${name} is not on PATH (apt-get install ${DEBIAN[name]}, or run \`tsx scripts/site-generators.ts\` as root)`
}

/** Installs the missing Debian generators where apt-get may be used; returns what could not be had, with why. */
export function ensureSiteGenerators(): Map<Generator, string> {
  const missing = (Object.keys(DEBIAN) as (keyof typeof DEBIAN)[]).filter((name) => generatorVersion(name) === null)
  const absent = new Map<Generator, string>()
  if (missing.length > 0) {
    if (!canApt()) {
      for (const name of missing) absent.set(name, `${missingReason(name)}; not root or no apt-get here, so not installed`)
    } else {
      console.error(`Installing Debian's ${missing.join(' and ')} with apt-get …`)
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
      // A stale package list is the usual reason an install fails on a fresh image.
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
      const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing.map((name) => DEBIAN[name])], { stdio: 'inherit', env })
      for (const name of missing) {
        if (generatorVersion(name) === null) absent.set(name, `apt-get install ${DEBIAN[name]} ${install.status === 0 ? 'ran, but it still does not run' : 'failed'}`)
      }
    }
  }
  if (generatorVersion('typedoc') === null) absent.set('typedoc', missingReason('typedoc'))
  return absent
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const absent = ensureSiteGenerators()
  for (const name of ['hugo', 'mkdocs', 'typedoc'] as const) {
    console.log(`${name}: ${absent.get(name) ?? generatorVersion(name)}`)
  }
  // Never a failure: the tests of an absent generator skip with the reason above.
}
