/**
 * One HTTP exchange through undici: send, read the whole body, parse JSON. Knows nothing
 * about the API's meaning; failures without an answer become a NetworkError (or the
 * caller's abort reason, or a TimeoutError at the deadline).
 */
import { Agent, request, type Dispatcher } from 'undici'
import { DONE } from '../shared/abortable.ts'
import { CriticalCssError, InvalidResponseError, NetworkError, TimeoutError, formatSeconds } from './errors.ts'
import type { Now, Sleep } from './retry.ts'

export type Headers = Record<string, string | string[] | undefined>

export interface Answer {
  status: number
  headers: Headers
  /** The parsed JSON body; undefined when the body was empty or not JSON. */
  json: unknown
  /** True when there was a body and it was not JSON. */
  notJson: boolean
}

export interface Exchange {
  method: 'GET' | 'POST'
  url: string
  headers: Record<string, string>
  body?: string | undefined
  signal?: AbortSignal | undefined
  deadline?: number | undefined
  /** What is being sent, for messages: `POST /api/critical-css/generate`. */
  describe: string
  /** Longest wait for the headers, and for the whole body after them (ms). */
  timeoutMs: number
}

/** Answers bigger than this are refused: critical CSS is kilobytes, not gigabytes. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024

export function createAgent(): Agent {
  return new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: 16,
    maxResponseSize: MAX_ANSWER_BYTES,
  })
}

/** The system or undici error code of a failed exchange (`ECONNREFUSED`, `UND_ERR_SOCKET`, …). */
function errorCode(error: unknown): string {
  const seen = new Set<unknown>()
  let current: unknown = error
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current)
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    const nested = (current as { errors?: unknown[] }).errors
    if (Array.isArray(nested) && nested.length > 0) {
      current = nested[0]
      continue
    }
    current = (current as { cause?: unknown }).cause
  }
  return 'ENETWORK'
}

/** Codes of failures where the request certainly never reached the service. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

export function reachedService(error: unknown): boolean {
  return !(error instanceof NetworkError && NEVER_SENT.has(error.code))
}

/**
 * The whole body as text, within `timeoutMs` from the headers (a body that drips a byte at a
 * time never trips undici's per-chunk timeout) and within the answer cap, whatever dispatcher
 * carries it (the cap of our own agent does not hold for a caller's).
 */
async function readBody(response: Dispatcher.ResponseData, message: Exchange, clock: { sleep: Sleep }, controller: AbortController): Promise<string> {
  const timer = new AbortController()
  let late = false
  clock.sleep(message.timeoutMs, timer.signal).then(
    () => {
      late = true
      controller.abort()
    },
    () => {
      // Read in time.
    },
  )
  const chunks: Buffer[] = []
  let bytes = 0
  try {
    for await (const chunk of response.body) {
      bytes += (chunk as Buffer).length
      if (bytes > MAX_ANSWER_BYTES) {
        controller.abort()
        throw new InvalidResponseError(`The critical CSS service answered ${message.describe} with more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB; the client reads no answer that large.`, {
          status: response.statusCode,
          code: 'invalid_response',
        })
      }
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (late && !message.signal?.aborted) {
      throw new NetworkError(`Could not complete ${message.describe}: its answer took longer than \`requestTimeoutMs\` (${formatSeconds(message.timeoutMs)}) to arrive.`, {
        status: null,
        code: 'UND_ERR_BODY_TIMEOUT',
      })
    }
    throw error
  } finally {
    timer.abort(DONE)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export async function exchange(dispatcher: Dispatcher, origin: string, message: Exchange, clock: { now: Now; sleep: Sleep }): Promise<Answer> {
  const controller = new AbortController()
  const onCallerAbort = (): void => controller.abort(message.signal?.reason)
  message.signal?.addEventListener('abort', onCallerAbort, { once: true })
  const deadlineTimer = new AbortController()
  let deadlinePassed = false
  if (message.deadline !== undefined) {
    clock.sleep(Math.max(0, message.deadline - clock.now()), deadlineTimer.signal).then(
      () => {
        deadlinePassed = true
        controller.abort()
      },
      () => {
        // Answered first.
      },
    )
  }
  try {
    const response = await request(message.url, {
      dispatcher,
      method: message.method,
      headers: message.headers,
      body: message.body,
      signal: controller.signal,
      // Per request, so they hold for a dispatcher passed in as well.
      headersTimeout: message.timeoutMs,
      bodyTimeout: message.timeoutMs,
    })
    const text = await readBody(response, message, clock, controller)
    let json: unknown
    let notJson = false
    if (text.length > 0) {
      try {
        json = JSON.parse(text)
      } catch {
        notJson = true
      }
    }
    return { status: response.statusCode, headers: response.headers, json, notJson }
  } catch (error) {
    if (message.signal?.aborted) throw message.signal.reason
    if (error instanceof CriticalCssError) throw error
    if (deadlinePassed) {
      throw new TimeoutError(`Gave up on ${message.describe}: the deadline passed before the service answered`, { status: null, code: 'timeout' })
    }
    const code = errorCode(error)
    throw new NetworkError(`Could not complete ${message.describe} at ${origin} (${code}).`, {
      status: null,
      code,
      ...(NEVER_SENT.has(code) ? { hint: "Check that `baseUrl` is the service's address and that the service is running." } : {}),
    })
  } finally {
    deadlineTimer.abort(DONE)
    message.signal?.removeEventListener('abort', onCallerAbort)
  }
}
