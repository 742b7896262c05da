/**
 * A built server (Astro's node entry, Nuxt's `.output/server/index.mjs`, a user's start
 * command), started on 127.0.0.1 for the build to render its routes, and stopped when the
 * build is done with it: on success, on failure, on a stop signal, and when the process
 * exits, so no server outlives the build that started it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createConnection, createServer } from 'node:net'
import { SAMPLING_ENV } from '../runtime/manifest-file.ts'
import { STOP_SIGNALS, signalExitCode } from '../shared/signals.ts'
import { ConfigurationError, PLUGIN_NAME } from './errors.ts'

export interface AppServerCommand {
  /** The program: `process.execPath` for a built entry file. */
  command: string
  args: string[]
  cwd: string
  /** The server's env beyond the build's own, given the port it must listen on (`PORT`, `HOST`, `ORIGIN`…). */
  env: (port: number) => Record<string, string>
  /** How long it may take to listen; a server that does not is stopped and the build fails. */
  startTimeoutMs?: number
}

export interface AppServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string
  /** Stops it (SIGTERM, then SIGKILL after a grace); safe more than once. */
  close(): Promise<void>
}

const START_TIMEOUT_MS = 30_000
const STOP_GRACE_MS = 5_000
/** What a failure quotes of the server's own output: its end, where a crash says why. */
const OUTPUT_KEPT = 8_192
const READY_POLL_MS = 50

/** A port on 127.0.0.1 nothing listens on now, for a server to be given. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** The command as a person would run it, with the env it was given. */
export function shownCommand(spec: AppServerCommand, env: Record<string, string>): string {
  const quote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)
  const program = spec.command === process.execPath ? 'node' : spec.command
  return [...Object.entries(env).map(([name, value]) => `${name}=${quote(value)}`), quote(program), ...spec.args.map(quote)].join(' ')
}

export async function startAppServer(spec: AppServerCommand): Promise<AppServer> {
  const port = await freePort()
  const env = spec.env(port)
  const shown = shownCommand(spec, env)
  let output = ''
  // What the server makes of its pages, not what an earlier build's manifest beside it would add (runtime/manifest-file.ts).
  const child: ChildProcess = spawn(spec.command, spec.args, { cwd: spec.cwd, env: { ...process.env, ...env, [SAMPLING_ENV]: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal }
      resolve()
    })
    child.once('error', (error) => {
      keep(Buffer.from(`${error.message}\n`))
      exited ??= { code: null, signal: null }
      resolve()
    })
  })

  // The process's end takes the server with it, whichever way it ends.
  const killNow = (): void => {
    if (exited === null) child.kill('SIGKILL')
  }
  process.on('exit', killNow)
  const signalHandlers = STOP_SIGNALS.map((signal) => {
    const handler = (): void => {
      killNow()
      process.off(signal, handler)
      // Another listener (the embedded service's, the host's) decides how the process ends.
      if (process.listenerCount(signal) > 0) return
      process.stderr.write(`${PLUGIN_NAME}: stopped by ${signal} while the built server was running; it is stopped too, and nothing was written.\n`)
      process.exit(signalExitCode(signal))
    }
    process.on(signal, handler)
    return [signal, handler] as const
  })

  let closing: Promise<void> | null = null
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      if (exited === null) {
        child.kill('SIGTERM')
        const grace = setTimeout(killNow, STOP_GRACE_MS)
        await exit
        clearTimeout(grace)
      }
      process.off('exit', killNow)
      for (const [signal, handler] of signalHandlers) process.off(signal, handler)
    })())

  const failed = async (why: string): Promise<never> => {
    await close()
    const said = output.trim() === '' ? 'It printed nothing.' : `Its output:\n${output.trimEnd()}`
    throw new ConfigurationError(`${PLUGIN_NAME}: the built server ${why}, so its routes got no critical CSS and nothing was written. The command was: ${shown}\n${said}`)
  }

  const deadline = Date.now() + (spec.startTimeoutMs ?? START_TIMEOUT_MS)
  for (;;) {
    if (exited !== null) {
      const { code, signal } = exited as { code: number | null; signal: NodeJS.Signals | null }
      return failed(`exited before it listened on port ${port} (${signal ?? `exit code ${code}`})`)
    }
    if (await listening(port)) break
    if (Date.now() > deadline) return failed(`did not listen on 127.0.0.1:${port} within ${Math.round((spec.startTimeoutMs ?? START_TIMEOUT_MS) / 1000)} s`)
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS))
  }
  return { origin: `http://127.0.0.1:${port}`, close }
}
