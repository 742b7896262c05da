import { describe, expect, it } from 'vitest'
import { BadRequestError, NetworkError, RateLimitedError, ServerError, TimeoutError, UnauthorizedError } from '../../src/client/errors.ts'
import { backoffDelay, isRetryable, parseRetryAfter, withRetries } from '../../src/client/retry.ts'
import { EPOCH, virtualClock } from '../fixtures/clock.ts'

const rateLimited = (retryAfterMs: number | null): RateLimitedError => new RateLimitedError('429', { status: 429, code: 'rate_limited' }, retryAfterMs)
const server = (status: number): ServerError => new ServerError(String(status), { status, code: 'unavailable' }, null)
const network = (code: string): NetworkError => new NetworkError(code, { status: null, code })

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', EPOCH)).toBe(3000)
    expect(parseRetryAfter(' 120 ', EPOCH)).toBe(120_000)
    expect(parseRetryAfter(['7', '9'], EPOCH)).toBe(7000)
  })

  it('reads an HTTP-date relative to now', () => {
    expect(parseRetryAfter(new Date(EPOCH + 5000).toUTCString(), EPOCH)).toBe(5000)
    expect(parseRetryAfter(new Date(EPOCH - 5000).toUTCString(), EPOCH)).toBe(0)
  })

  it('returns null when absent or unreadable', () => {
    expect(parseRetryAfter(undefined, EPOCH)).toBeNull()
    expect(parseRetryAfter('soon', EPOCH)).toBeNull()
    expect(parseRetryAfter('-1', EPOCH)).toBeNull()
  })
})

describe('backoffDelay', () => {
  it('is full jitter over base·2^attempt, capped at 60 s', () => {
    const half = (): number => 0.5
    expect([0, 1, 2, 5, 6, 7, 20].map((n) => backoffDelay(n, half))).toEqual([500, 1000, 2000, 16_000, 30_000, 30_000, 30_000])
    expect(backoffDelay(3, () => 0)).toBe(0)
    expect(backoffDelay(30, () => 0.999_999)).toBe(59_999)
  })
})

describe('isRetryable', () => {
  it('retries 429, 502, 503, 504 and network faults, nothing else', () => {
    expect(isRetryable(rateLimited(null))).toBe(true)
    expect([500, 501, 502, 503, 504].map((s) => isRetryable(server(s)))).toEqual([false, false, true, true, true])
    expect(['ECONNRESET', 'ECONNREFUSED', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'].every((c) => isRetryable(network(c)))).toBe(true)
    expect(isRetryable(network('ENOTFOUND'))).toBe(false)
    expect(isRetryable(new BadRequestError('400', { status: 400, code: 'invalid_request' }))).toBe(false)
    expect(isRetryable(new UnauthorizedError('401', { status: 401, code: 'unauthorized' }))).toBe(false)
    expect(isRetryable(new Error('plain'))).toBe(false)
  })
})

describe('withRetries', () => {
  function harness(failures: unknown[], options: { deadline?: number; maxRetries?: number } = {}) {
    const clock = virtualClock()
    const waits: number[] = []
    let calls = 0
    const settled = withRetries(
      async () => {
        calls++
        const failure = failures.shift()
        if (failure) throw failure
        return 'ok'
      },
      {
        sleep: clock.sleep,
        now: clock.now,
        random: () => 0.5,
        maxRetries: options.maxRetries ?? 8,
        maxWaitMs: 300_000,
        deadline: options.deadline,
        describe: 'a test call',
        onRetry: ({ waitMs }) => waits.push(waitMs),
      },
    ).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    )
    const result = (): Promise<unknown> => settled.then((outcome) => ('error' in outcome ? Promise.reject(outcome.error) : outcome.value))
    return { clock, waits, result, calls: () => calls }
  }

  it('waits what Retry-After says, else backs off', async () => {
    const h = harness([rateLimited(3000), server(503), network('ECONNRESET')])
    await h.clock.run()
    await expect(h.result()).resolves.toBe('ok')
    // The service's wait does not grow our backoff: the faults after it start at 1 s.
    expect(h.waits).toEqual([3000, 500, 1000])
    expect(h.clock.now() - EPOCH).toBe(4500)
  })

  it('never retries a client error', async () => {
    const h = harness([new BadRequestError('400', { status: 400, code: 'invalid_request' })])
    await h.clock.run()
    await expect(h.result()).rejects.toBeInstanceOf(BadRequestError)
    expect(h.calls()).toBe(1)
  })

  it('gives up after maxRetries faults with the last error', async () => {
    const h = harness([server(503), server(503), server(502)], { maxRetries: 2 })
    await h.clock.run()
    await expect(h.result()).rejects.toMatchObject({ status: 502 })
    expect(h.calls()).toBe(3)
  })

  it('fails at once when the wait would end past the deadline, without sleeping', async () => {
    const h = harness([rateLimited(30_000)], { deadline: EPOCH + 10_000 })
    await h.clock.run()
    const error = await h.result().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as TimeoutError).cause).toBeInstanceOf(RateLimitedError)
    expect(h.clock.now()).toBe(EPOCH)
  })

  it('keeps honouring Retry-After past maxRetries while the deadline allows', async () => {
    const h = harness([rateLimited(1000), rateLimited(1000), rateLimited(1000), rateLimited(1000)], { maxRetries: 1, deadline: EPOCH + 60_000 })
    await h.clock.run()
    await expect(h.result()).resolves.toBe('ok')
    expect(h.calls()).toBe(5)
  })
})
