/**
 * Reading usage, which sets the pacer's limit whenever it is read, and the one way the pace
 * is learnt: before the first generate (to learn the pace before spending the plan's
 * requests) or when a caller asks for it, once, unless the `rateLimit` option states it.
 * Any usage read teaches it, the caller's own included. It is read once more before the
 * first 402 becomes an error (so the message can say when the quota resets or when the
 * subscription ended).
 */
import { API_PATHS, parseUsage, type Usage } from '../contract/api-contract.ts'
import { NotFoundError } from './errors.ts'
import { paceFromUsage } from './pace.ts'
import type { Answered, Call, Clock, PaymentExplainer } from './request.ts'
import type { PaceLimit } from './rate-window.ts'
import { PRIORITY, type Pacer } from './scheduler.ts'
import { settleWithin } from './scope.ts'
import type { RequestOptions } from './types.ts'

export interface UsageDeps {
  send: (spec: Call<Usage>) => Promise<Answered<Usage>>
  pacer: Pacer
  clock: Clock
  /** The caller pinned the pace (`rateLimit`): nothing to learn before the first generate. */
  pacePinned: boolean
}

export class UsageReader implements PaymentExplainer {
  private latest: Usage | null = null
  /** The read before the first generate, shared by every generate that waits for it. */
  private beforeGenerate: Promise<void> | null = null
  private explainedPaymentRequired = false

  constructor(private readonly deps: UsageDeps) {}

  /** The usage read most recently, if any. */
  get last(): Usage | null {
    return this.latest
  }

  async read(options: RequestOptions): Promise<Usage> {
    const { value } = await this.deps.send({
      method: 'GET',
      path: API_PATHS.usage,
      expected: [200],
      parse: (answer) => parseUsage(answer.json),
      priority: PRIORITY.urgent,
      // The body states the pace; the pacer must not guess it from the headers first.
      teachesPace: false,
      signal: options.signal,
      deadline: options.deadline,
    })
    this.latest = value
    this.deps.pacer.setLimit(paceFromUsage(value))
    // The pace is known now: the first generate need not read it again.
    this.beforeGenerate ??= Promise.resolve()
    return value
  }

  /**
   * Reads usage once before the first generate. Concurrent generates share the one read,
   * so it runs on no caller's signal or deadline; each caller waits for it within its own.
   */
  learnPace(options: RequestOptions): Promise<void> {
    if (this.deps.pacePinned) return Promise.resolve()
    if (!this.beforeGenerate) {
      const read = this.read({}).then(
        () => {},
        (error: unknown) => {
          // A service without the usage endpoint is still usable: its answers' headers tell the pace.
          if (error instanceof NotFoundError) return
          this.beforeGenerate = null
          throw error
        },
      )
      // Whoever waits for it sees its failure; a caller that gave up first must not leave it unhandled.
      read.catch(() => {})
      this.beforeGenerate = read
    }
    const { now, sleep } = this.deps.clock
    return settleWithin(this.beforeGenerate, { ...options, now, sleep, describe: `GET ${API_PATHS.usage}` })
  }

  /**
   * The pace the client keeps: the `rateLimit` option's, else the one usage states (read
   * once, as for the first generate). Null while it is not known: a service without the
   * usage endpoint, whose answers' headers will tell it.
   */
  async pace(options: RequestOptions): Promise<PaceLimit | null> {
    await this.learnPace(options)
    const current = this.deps.pacer.current
    return current === 'probing' ? null : current
  }

  /** Only the first 402 reads usage: later ones would learn the same, each read costing a request of the plan's rate. */
  async beforePaymentRequired(scope: RequestOptions): Promise<void> {
    if (this.explainedPaymentRequired) return
    this.explainedPaymentRequired = true
    try {
      await this.read(scope)
    } catch {
      // The 402 is what matters; explain it with what we have.
    }
  }
}
