/** One try at a job: the pages it uses, and the way it ends early. */
import { EngineError } from './engine.ts'
import type { Spare } from './page-pool.ts'

/** The contexts of one try at a job, and the way it ends early. */
export class Attempt {
  readonly contexts: Spare[] = []
  /** Rejects with the first reason the attempt ended early. */
  readonly ended: Promise<never>
  workerMessages = 0
  #over = false
  #end!: (reason: unknown) => void
  #kept: Spare | null = null
  readonly #onClose: (() => void)[] = []
  readonly #discard: (spare: Spare) => Promise<void>
  readonly #release: (spare: Spare) => void

  constructor(discard: (spare: Spare) => Promise<void>, release: (spare: Spare) => void) {
    this.#discard = discard
    this.#release = release
    this.ended = new Promise<never>((_, reject) => (this.#end = reject))
    this.ended.catch(() => {})
  }

  /** Throws once the attempt ended: a job that ended early goes no further. */
  throwIfOver(): void {
    if (this.#over) throw new EngineError('render_failed', 'The job ended.')
  }

  /** A context the attempt uses; one that comes after the attempt ended is closed at once. */
  add(spare: Spare): void {
    if (this.#over) void this.#discard(spare)
    else this.contexts.push(spare)
  }

  /** Runs `done` once the attempt is over, however it ends: what watched its pages stops. */
  onClose(done: () => void): void {
    if (this.#over) done()
    else this.#onClose.push(done)
  }

  /** The page to hand back at the end instead of closing it: the job is done with it. */
  keep(spare: Spare): void {
    if (!this.#over) this.#kept = spare
  }

  /** Ends the attempt with `reason` (the first one counts) and closes its contexts: their loading stops there. */
  fail(reason: unknown): void {
    this.#kept = null
    this.#end(reason)
    this.close()
  }

  close(): void {
    if (this.#over) return
    this.#over = true
    for (const done of this.#onClose.splice(0)) done()
    for (const spare of this.contexts) {
      if (spare === this.#kept) this.#release(spare)
      else void this.#discard(spare)
    }
  }
}
