/**
 * Embedded mode: no service is configured, so the build brings its own. The reference
 * service starts in this process on 127.0.0.1 (ephemeral port, a fresh random token, plan
 * ent, private networks allowed, in-memory store) with the Chromium engine, and the build
 * output is served beside it; the pages then go through the same client as in remote mode.
 * The service and the engine are loaded with `import()`, so a remote-mode build never loads
 * playwright-core.
 */
import { serveBuild, type BuildOutput } from './build-server.ts'
import { ConfigurationError } from './errors.ts'
import { ENV } from './options.ts'

export interface EmbeddedService {
  baseUrl: string
  token: string
  /** Where the build's pages are served. */
  siteUrl: URL
  /** Stops the service, the browser and the build server; safe to call more than once. */
  close(): Promise<void>
}

export interface EmbeddedOptions {
  output: BuildOutput
  /** The bundler's base / publicPath. */
  base: string
  /** A job's deadline in the service. */
  jobTimeoutMs: number
  /** Pages rendered at once. */
  workers: number
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedService> {
  const [{ createChromiumEngine }, { startService }, { createToken }] = await Promise.all([
    import('../engine/chromium.ts'),
    import('../service/server.ts'),
    import('../service/auth.ts'),
  ])
  const why = `no critical CSS service is configured (${ENV.baseUrl} or the \`baseUrl\` option), so the plugin renders the pages itself in a local Chrome/Chromium`
  let engine: Awaited<ReturnType<typeof createChromiumEngine>>
  try {
    engine = createChromiumEngine()
    await engine.ready()
  } catch (error) {
    throw new ConfigurationError(`unplugin-critical-css: ${why}, and it cannot start one. ${reason(error)}`)
  }
  const closers: (() => Promise<void>)[] = [() => engine.close()]
  const close = async (): Promise<void> => {
    const pending = closers.splice(0).reverse()
    for (const closer of pending) await closer().catch(() => {})
  }
  try {
    const token = createToken()
    const service = await startService({
      host: '127.0.0.1',
      port: 0,
      tokens: [{ token, plan: 'ent' }],
      engine,
      allowPrivateNetworks: true,
      jobTimeoutMs: options.jobTimeoutMs,
      workers: options.workers,
      // Nothing is in flight once the build has every page's answer.
      shutdownGraceMs: 0,
    })
    closers.push(() => service.close())
    const site = await serveBuild(options.output, options.base)
    closers.push(() => site.close())
    return { baseUrl: service.url, token, siteUrl: site.siteUrl, close }
  } catch (error) {
    await close()
    throw error
  }
}
