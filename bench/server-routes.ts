/**
 * Server-rendered pages (issue 50): first contentful paint with every stylesheet 1.5 s late,
 * the app built with our integration beside the same app built without it (the peer), for
 * Astro 7 (node adapter), Nuxt 4 (`nuxt build`) and SvelteKit 3 (adapter-node), on a page its route was sampled from and
 * on one it was not. Each app runs as a user runs it; a proxy on 127.0.0.1 in front of it
 * holds every `.css` answer 1.5 s. Median of 5 loads, each in a fresh browser context.
 *
 *   npm run bench:server-routes
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { rename } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { INSTALL_HINT, findChromium } from '../src/engine/find-browsers.ts'
import { createLoader } from './fcp/browser.ts'
import { buildAstroServerApp, createAstroServerApp, removeAstroServerApp, SERVER_OUT, startAstroServer } from '../test/fixtures/astro-server-app.ts'
import { buildNuxtServerApp, createNuxtServerApp, removeNuxtServerApp, startNuxtServer } from '../test/fixtures/nuxt-server-app.ts'
import { buildSvelteKitServerApp, createSvelteKitServerApp, removeSvelteKitServerApp, startSvelteKitServer } from '../test/fixtures/sveltekit-server-app.ts'
import type { RunningApp } from '../test/fixtures/running-app.ts'
import type { Options } from '../src/core/options.ts'
import type { CommandResult } from '../test/fixtures/frameworks.ts'

const SHEET_DELAY_MS = 1500
const LOADS = 5
const PAGES = ['/posts/hello', '/posts/not-sampled']

interface App {
  name: string
  create(): Promise<string>
  remove(root: string): Promise<void>
  build(root: string, options: Options | null): Promise<CommandResult>
  out: string
  start(root: string, out: string): Promise<RunningApp>
  postsRoute: string
}

const APPS: App[] = [
  { name: 'Astro 7.3.5 + @astrojs/node', create: createAstroServerApp, remove: removeAstroServerApp, build: buildAstroServerApp, out: SERVER_OUT, start: startAstroServer, postsRoute: '/posts/[slug]' },
  { name: 'Nuxt 4.5.2 (nuxt build)', create: createNuxtServerApp, remove: removeNuxtServerApp, build: buildNuxtServerApp, out: '.output', start: startNuxtServer, postsRoute: '/posts/:slug()' },
  { name: 'SvelteKit 3.2.0 + adapter-node 6.0.2', create: createSvelteKitServerApp, remove: removeSvelteKitServerApp, build: buildSvelteKitServerApp, out: 'build', start: startSvelteKitServer, postsRoute: '/posts/[slug]' },
]

/** A proxy to `origin` that holds every stylesheet's answer `SHEET_DELAY_MS`. */
function slowSheets(origin: string): Promise<Server & { url: string }> {
  const target = new URL(origin)
  const server = createServer((incoming, outgoing) => {
    const forward = request({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
      const send = (): void => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      }
      if (/\.css(?:\?|$)/.test(incoming.url ?? '')) setTimeout(send, SHEET_DELAY_MS)
      else send()
    })
    forward.on('error', () => outgoing.destroy())
    incoming.pipe(forward)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))))
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const executablePath = findChromium()
if (!executablePath) throw new Error(INSTALL_HINT)
// The browser as a user has it: no flags, no resolver rules (every request goes to 127.0.0.1 anyway).
const loader = await createLoader(executablePath, [])
console.log(`server routes: first contentful paint (ms) with every stylesheet ${SHEET_DELAY_MS} ms late, median of ${LOADS}; Chromium ${loader.version}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}\n`)
console.log('| app | page | without the plugin | **with the plugin** |')
console.log('|---|---|---|---|')
for (const app of APPS) {
  const root = await app.create()
  const running: (RunningApp | (Server & { url: string }))[] = []
  try {
    const off = await app.build(root, null)
    if (off.code !== 0) throw new Error(`${app.name}: plain build failed:\n${off.stderr}`)
    await rename(join(root, app.out), join(root, 'plain-build'))
    const on = await app.build(root, { cache: false, samples: { [app.postsRoute]: PAGES[0]! } })
    if (on.code !== 0) throw new Error(`${app.name}: build failed:\n${on.stderr}`)
    const plain = await app.start(root, join(root, 'plain-build'))
    const built = await app.start(root, join(root, app.out))
    const [plainProxy, builtProxy] = await Promise.all([slowSheets(plain.origin), slowSheets(built.origin)])
    running.push(plain, built, plainProxy, builtProxy)
    for (const page of PAGES) {
      const fcp = async (origin: string): Promise<string> => {
        const times: number[] = []
        for (let i = 0; i < LOADS; i++) {
          const { fcp: time } = await loader.load(`${origin}${page}`, { expectScript: false, timeoutMs: 15_000, shoot: false, sheets: [] })
          if (time !== null) times.push(time)
        }
        return times.length === LOADS ? String(Math.round(median(times))) : `${LOADS - times.length} of ${LOADS} did not paint`
      }
      const label = page === PAGES[0] ? `${page} (sampled)` : `${page} (not sampled)`
      console.log(`| ${app.name} | ${label} | ${await fcp(plainProxy.url)} | **${await fcp(builtProxy.url)}** |`)
    }
  } finally {
    for (const each of running) await ('stop' in each ? each.stop() : new Promise<void>((resolve) => each.close(() => resolve())))
    await app.remove(root)
  }
}
await loader.close()
