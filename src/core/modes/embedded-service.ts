/**
 * The service embedded mode renders with: the reference service in this process on
 * 127.0.0.1 (ephemeral port, a fresh random token, plan ent, private networks allowed,
 * in-memory store) with the Chromium engine. Loaded with `import()` only when some page
 * misses the cache, so a remote-mode or warm build never loads playwright-core.
 */
import { STOP_SIGNALS, signalExitCode } from '../../shared/signals.ts'
import { timed } from '../../shared/timings.ts'
import { ConfigurationError, PLUGIN_NAME, describeError } from '../errors.ts'
import type { OptionWords } from '../options.ts'

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
  /** How the failure to start a browser names the way to a service instead. */
  words: OptionWords
  /** Called with a job's id once its end (done or failed) is written: its waiter need not wait for its next check. */
  onJobEnded?: (id: string) => void
}

/** The service's log lines that say a job's end is written. */
const JOB_ENDS = new Set(['job_done', 'job_failed'])

export async function startEmbeddedService(options: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const [{ createChromiumEngine }, { startService }, { createToken }] = await timed('embedded: load the engine and service', () =>
    Promise.all([import('../../engine/chromium.ts'), import('../../service/server.ts'), import('../../service/auth.ts')]),
  )
  // From before the launch: a signal while the browser starts must take it down too.
  const stopSignals = stopOnSignals()
  let engine: Awaited<ReturnType<typeof createChromiumEngine>>
  try {
    // One tenant, the build: its jobs run on their warm pages, so no spare is opened after them.
    engine = createChromiumEngine({ sparesAfterJobs: false })
    await timed('embedded: launch the browser', () => engine.ready())
  } catch (error) {
    stopSignals()
    throw new ConfigurationError(
      `${PLUGIN_NAME}: no critical CSS service is configured, so the plugin renders the pages itself in a local Chrome/Chromium, and it cannot start one. ${describeError(error)} Or ${options.words.useService} to use a Critical CSS Generation API instead.`,
    )
  }
  try {
    const token = createToken()
    const start = () =>
      startService({
        host: '127.0.0.1',
        port: 0,
        tokens: [{ token, plan: 'ent' }],
        engine,
        allowPrivateNetworks: true,
        jobTimeoutMs: options.jobTimeoutMs,
        workers: options.workers,
        // Nothing is in flight once the build has every page's answer.
        shutdownGraceMs: 0,
        log: (line) => {
          if (JOB_ENDS.has(String(line.event)) && typeof line.job === 'string') options.onJobEnded?.(line.job)
        },
      })
    const service = await timed('embedded: start the service', start)
    let closed: Promise<void> | null = null
    const close = (): Promise<void> => {
      stopSignals()
      closed ??= service
        .close()
        .catch(() => {})
        .then(() => engine.close().catch(() => {}))
      return closed
    }
    return { baseUrl: service.url, token, close }
  } catch (error) {
    stopSignals()
    await engine.close().catch(() => {})
    throw error
  }
}

/**
 * While the embedded service renders, SIGINT, SIGTERM and SIGHUP (CI cancel, `timeout`,
 * `docker stop`, a closed terminal) end the process at once, as an unhandled signal would:
 * nothing is written after it (a build writes its pages after the render, the folder command
 * its folder all at once), and exiting runs the browser launcher's own exit handler, which
 * kills every browser process group it started. One line says why. A host that handles the
 * signal itself (another listener) decides instead; this one only stops listening then.
 * Returns the way to stop listening.
 */
function stopOnSignals(): () => void {
  const handlers = STOP_SIGNALS.map((signal) => {
    const handler = (): void => {
      process.off(signal, handler)
      if (process.listenerCount(signal) > 0) return
      process.stderr.write(`${PLUGIN_NAME}: stopped by ${signal} while pages were being rendered; no page was written.\n`)
      process.exit(signalExitCode(signal))
    }
    process.on(signal, handler)
    return [signal, handler] as const
  })
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler)
  }
}
