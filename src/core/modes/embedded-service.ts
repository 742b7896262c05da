/**
 * The service embedded mode renders with: the reference service in this process on
 * 127.0.0.1 (ephemeral port, a fresh random token, plan ent, private networks allowed,
 * in-memory store) with the Chromium engine. Loaded with `import()` only when some page
 * misses the cache, so a remote-mode or warm build never loads playwright-core.
 */
import { ConfigurationError, PLUGIN_NAME, describeError } from '../errors.ts'

export interface EmbeddedService {
  baseUrl: string
  token: string
  /** Stops the service and the browser; safe to call more than once. */
  close(): Promise<void>
}

export interface EmbeddedServiceOptions {
  /** A job's deadline in the service. */
  jobTimeoutMs: number
  /** Pages rendered at once. */
  workers: number
}

export async function startEmbeddedService(options: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const [{ createChromiumEngine }, { startService }, { createToken }] = await Promise.all([
    import('../../engine/chromium.ts'),
    import('../../service/server.ts'),
    import('../../service/auth.ts'),
  ])
  let engine: Awaited<ReturnType<typeof createChromiumEngine>>
  try {
    engine = createChromiumEngine()
    await engine.ready()
  } catch (error) {
    throw new ConfigurationError(
      `${PLUGIN_NAME}: no critical CSS service is configured, so the plugin renders the pages itself in a local Chrome/Chromium, and it cannot start one. ${describeError(error)} Or set the \`baseUrl\` and \`token\` options to use a Critical CSS Generation API instead.`,
    )
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
    let closed: Promise<void> | null = null
    const close = (): Promise<void> => {
      closed ??= service
        .close()
        .catch(() => {})
        .then(() => engine.close().catch(() => {}))
      return closed
    }
    return { baseUrl: service.url, token, close }
  } catch (error) {
    await engine.close().catch(() => {})
    throw error
  }
}
