/**
 * A server of one's own (a Vite SSR app, Express, Hono, Fastify…): started with the user's
 * command and `PORT`/`HOST` in its env, its routes rendered from the paths they name, and
 * the manifest written where the server reads it (`readManifest` and `applyCriticalCss` or
 * `withCriticalCss` from `unplugin-critical-css/runtime`). The folder command's `--server`.
 */
import { resolve } from 'node:path'
import { routeRank } from '../runtime/routes.ts'
import { existingFolder } from './directory.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'
import { assertRunnable, type ResolvedDirectoryOptions } from './options.ts'
import type { BuildLogger } from './report.ts'
import { renderServerRoutes, sampledRoute, type ServerRoute, type ServerRoutesResult } from './server-routes.ts'

export interface OwnServer {
  /** The program and its arguments, as the user runs the built server (`['node', 'dist/server.js']`). */
  command: readonly string[]
  /** The routes to render, as the server's router names them (`/`, `/posts/[slug]`, `/posts/:slug`); one with parameters needs its `samples`. */
  routes: readonly string[]
  /** The folder the manifest (`critical-css.json`) is written into: where the server reads it. */
  out: string
}

/** The routes, each with the paths it is rendered from: its `samples`, else its own path below the base when it has no parameters. */
function routesOf(routes: readonly string[], base: string, samples: ReadonlyMap<string, readonly string[]>): ServerRoute[] {
  const prefix = base.replace(/\/$/, '')
  return [...new Set(routes)].map((route) => sampledRoute(route, routeRank(route).every((rank) => rank === 1) ? `${prefix}${route}` : null, samples))
}

/** `staticDir`: the folder the server serves its static files from (the stylesheets are read there, the loader script goes there). */
export async function renderOwnServer(staticDir: string, server: OwnServer, { options, base }: ResolvedDirectoryOptions, logger: BuildLogger, root = process.cwd()): Promise<ServerRoutesResult> {
  if (options.enabled === false) return { covered: [], left: [] }
  assertRunnable(options)
  const [command, ...args] = server.command
  if (command === undefined) throw new ConfigurationError(`${PLUGIN_NAME}: no command starts the server.`)
  return renderServerRoutes(options, {
    server: { command, args, cwd: resolve(root), env: (port) => ({ PORT: String(port), HOST: '127.0.0.1' }) },
    routes: routesOf(server.routes, base, options.samples),
    staticDir: await existingFolder(staticDir, 'the folder your server serves its static files from'),
    base,
    serverDir: await existingFolder(server.out, 'the folder your server reads its critical CSS manifest from'),
    root: resolve(root),
    logger,
  })
}
