/**
 * The service embedded mode renders with: the reference service in this process on
 * 127.0.0.1 (ephemeral port, a fresh random token, plan ent, private networks allowed,
 * in-memory store) with the engine the `engine` option picks (`auto`: the first browser
 * found that starts, else the static engine). Loaded with `import()` only when some page
 * misses the cache, so a remote-mode or warm build never loads playwright-core.
 */
import { STOP_SIGNALS, signalExitCode } from '../../shared/signals.ts'
import { timed } from '../../shared/timings.ts'
import { ConfigurationError, PLUGIN_NAME, describeError } from '../errors.ts'
import type { EngineChoice, EngineName } from '../../shared/engines.ts'
import type { OptionWords } from '../options.ts'

/**
 * The engine's one call, as a renderer that calls it directly makes it: the type of the module
 * this file loads with `import()` (core reaches the engine only that way), not a copy of it.
 */
export type EngineCall = import('../../engine/engine.ts').Engine['generate']

/** What renders a build's pages, as its log says it. */
export interface EmbeddedEngine {
  name: EngineName
  /** The browser (`version` as it says it); null for the static engine. */
  browser: { version: string; executablePath: string; source: string } | null
  /** Browsers found that did not start, and why. */
  failed: { browser: string; reason: string }[]
  /** `auto` found no browser that starts: the static engine renders. */
  fellBack: boolean
  /** Pages rendered at once. */
  workers: number
}

export interface EmbeddedService {
  baseUrl: string
  token: string
  engine: EmbeddedEngine
  /**
   * The engine itself, for a renderer that calls it directly: the static engine's jobs take a
   * few ms, and the service's HTTP, queue and checks around each would be most of a page's
   * cost (engine-renderer.ts). The Chromium engine is reached through the service.
   */
  generate: EngineCall
  /** Stops the service and the browser; safe to call more than once. */
  close(): Promise<void>
}

export interface EmbeddedServiceOptions {
  /** A job's deadline in the service. */
  jobTimeoutMs: number
  /** What renders (`auto`: a browser found that starts, else static). */
  engine: EngineChoice
  /** Pages rendered at once, per engine; unset: as many as the engine says keep it busy (the static engine's `jobsAtOnce`). */
  workers: Partial<Record<EngineName, number>>
  /** The project: where `@sparticuz/chromium` and playwright-core are looked for. */
  root: string
  /** How the failure to start a browser names the way to a service instead. */
  words: OptionWords
  /** Called with a job's id once its end (done or failed) is written: its waiter need not wait for its next check. */
  onJobEnded?: (id: string) => void
}

/** The service's log lines that say a job's end is written. */
const JOB_ENDS = new Set(['job_done', 'job_failed'])

export async function startEmbeddedService(options: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const [{ startEngine }, { startService }, { createToken }] = await timed('embedded: load the engine and service', () =>
    Promise.all([import('../../engine/start-engine.ts'), import('../../service/server.ts'), import('../../service/auth.ts')]),
  )
  // From before the launch: a signal while the browser starts must take it down too.
  const stopSignals = stopOnSignals()
  let started: Awaited<ReturnType<typeof startEngine>>
  try {
    // One tenant, the build: its jobs run on their warm pages, so no spare is opened after them.
    started = await timed('embedded: start the engine', () => startEngine(options.engine, { chromium: { sparesAfterJobs: false }, root: options.root }))
  } catch (error) {
    stopSignals()
    throw new ConfigurationError(
      `${PLUGIN_NAME}: no critical CSS service is configured, so the plugin renders the pages itself in a local Chrome/Chromium, and it cannot start one. ${describeError(error)} Or ${options.words.useService} to use a Critical CSS Generation API instead.`,
    )
  }
  const { engine } = started
  const workers = options.workers[started.name] ?? engine.jobsAtOnce ?? 1
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
        workers,
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
    return {
      baseUrl: service.url,
      token,
      engine: { name: started.name, browser: started.browser, failed: started.failed, fellBack: started.fellBack, workers },
      generate: (input) => engine.generate(input),
      close,
    }
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
