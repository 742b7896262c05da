/**
 * The service's JobQueue on its own, with a real (memory) store and an engine whose
 * renders run until the test releases them or the queue aborts them: which job a free
 * worker takes, and when a token holding several workers gives one up to a token that
 * has none (preemption). Nothing here waits on the clock: every step waits for a state.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Engine, EngineInput } from '../../src/engine/engine.ts'
import { JobQueue } from '../../src/service/queue.ts'
import type { QueueOptions } from '../../src/service/queue-options.ts'
import { createMemoryStore } from '../../src/service/store/memory.ts'
import { fromLocal } from '../../src/service/store/local.ts'
import type { LocalStore, StoredJob } from '../../src/service/store/types.ts'

/** One engine call: runs until released, or until its signal aborts. */
interface Render {
  url: string
  /** Whose job the engine was told it is. */
  tenant: string | undefined
  signal: AbortSignal
  release(): void
  settled: boolean
}

interface Gate extends Engine {
  renders: Render[]
  /** Renders not yet settled. */
  active(): Render[]
  /** The one unsettled render of `name`. */
  of(name: string): Render
}

function createGate(): Gate {
  const renders: Render[] = []
  return {
    renders,
    active: () => renders.filter((render) => !render.settled),
    of(name) {
      const found = renders.filter((render) => !render.settled && render.url.endsWith(`/${name}`))
      if (found.length !== 1) throw new Error(`${found.length} renders of ${name} running`)
      return found[0]!
    },
    generate(input: EngineInput) {
      return new Promise((resolve, reject) => {
        const render: Render = {
          url: input.url,
          tenant: input.tenant,
          signal: input.signal,
          settled: false,
          release() {
            render.settled = true
            resolve({ css: `/*${input.url}*/` })
          },
        }
        input.signal.addEventListener('abort', () => {
          render.settled = true
          reject(input.signal.reason)
        }, { once: true })
        renders.push(render)
      })
    },
    async close() {},
  }
}

/** Waits for a state of the queue, checking on every turn of the event loop; a generous bound only turns a hang into a failure. */
async function until(check: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 5_000
  while (!check()) {
    if (Date.now() > giveUp) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

const queues: JobQueue[] = []
afterEach(async () => {
  for (const queue of queues.splice(0)) await queue.close(0)
})

interface Setup {
  queue: JobQueue
  /** The queue's store, read at once. */
  store: LocalStore
  gate: Gate
  lines: Record<string, unknown>[]
  /** Stores and enqueues job `name` of `token` (its page is `https://example.com/<name>`). */
  add(token: string, name: string): void
  status(name: string): StoredJob['status'] | undefined
  /** Names of the jobs whose render is running now. */
  running(): string[]
}

function setup(options: Partial<QueueOptions> = {}): Setup {
  const store = createMemoryStore()
  const gate = createGate()
  const lines: Record<string, unknown>[] = []
  const queue = new JobQueue({
    store: fromLocal(store),
    engine: gate,
    workers: 2,
    jobTimeoutMs: 60_000,
    maxQueuedPerToken: 100,
    maxQueued: 1_000,
    now: () => Date.now(),
    log: (line) => lines.push(line),
    ...options,
  })
  queues.push(queue)
  const stamp = new Date().toISOString()
  return {
    queue,
    store,
    gate,
    lines,
    add(token, name) {
      const job: StoredJob = {
        id: name,
        tokenId: token,
        url: `https://example.com/${name}`,
        status: 'queued',
        cssAvailable: false,
        createdAt: stamp,
        updatedAt: stamp,
        error: null,
        css: null,
        cssBytes: null,
        viewports: [{ width: 1300, height: 900 }],
        durationMs: null,
      }
      store.addJob(job)
      queue.enqueue(job)
    },
    status: (name) => store.job(name)?.status,
    running: () => gate.active().map((render) => render.url.slice('https://example.com/'.length)).sort(),
  }
}

const startsOf = (gate: Gate, name: string) => gate.renders.filter((render) => render.url.endsWith(`/${name}`)).length
const preempted = (lines: Record<string, unknown>[]) => lines.filter((line) => line.event === 'job_preempted').map((line) => line.job)

describe('JobQueue: the engine knows whose job it renders', () => {
  it('passes each job its token as the tenant, so one token’s warm pages never serve another’s', async () => {
    const { add, gate, running } = setup()
    add('tok_a', 'a1')
    add('tok_b', 'b1')
    await until(() => running().length === 2, 'a1 and b1 rendering')
    expect(gate.of('a1').tenant).toBe('tok_a')
    expect(gate.of('b1').tenant).toBe('tok_b')
  })
})

describe('JobQueue: a fair share of workers between tokens', () => {
  it('a token with no job running gets a worker at once: the newest job of the token holding both is preempted, requeued, and later done', async () => {
    const { add, gate, lines, status, running } = setup()
    for (let i = 1; i <= 5; i++) add('tok_a', `a${i}`)
    await until(() => running().length === 2, 'a1 and a2 rendering')
    expect(running()).toEqual(['a1', 'a2'])

    add('tok_b', 'b1')
    // b1 starts while a1 and a2 are still unreleased: a2, started last, gave its worker up.
    await until(() => running().includes('b1'), 'b1 rendering without any job of tok_a finishing')
    expect(running()).toEqual(['a1', 'b1'])
    expect(status('a2')).toBe('queued')
    expect(preempted(lines)).toEqual(['a2'])
    expect(lines.some((line) => line.event === 'job_failed')).toBe(false)

    // b1 done: tok_a's freed worker takes a2 again, first in its line.
    gate.of('b1').release()
    await until(() => running().includes('a2'), 'a2 rendering again')
    expect(status('b1')).toBe('done')
    expect(status('a2')).toBe('processing')
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) {
      await until(() => running().includes(name), `${name} rendering`)
      gate.of(name).release()
      await until(() => status(name) === 'done', `${name} done`)
    }
    expect(startsOf(gate, 'a2')).toBe(2)
    expect(preempted(lines)).toEqual(['a2'])
  })

  it('a freed worker goes to the waiting token with the fewest jobs running, round-robin among equals', async () => {
    const { add, gate, running } = setup()
    add('tok_a', 'a1')
    add('tok_c', 'c1')
    await until(() => running().length === 2, 'a1 and c1 rendering')
    // Waiting, in this turn order: tok_a (one running), tok_d and tok_b (none running).
    add('tok_a', 'a2')
    add('tok_d', 'd1')
    add('tok_b', 'b1')
    // Each busy token holds one worker: nobody is preempted.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(running()).toEqual(['a1', 'c1'])

    gate.of('c1').release()
    // Round-robin alone would give tok_a its turn; tok_d has nothing running and comes first.
    await until(() => running().length === 2 && !running().includes('c1'), 'the next job rendering')
    expect(running()).toEqual(['a1', 'd1'])

    gate.of('d1').release()
    await until(() => running().length === 2 && !running().includes('d1'), 'the next job rendering')
    expect(running()).toEqual(['a1', 'b1'])

    // Now tok_a and tok_b hold one each and only tok_a waits: it gets the next worker.
    gate.of('b1').release()
    await until(() => running().includes('a2'), 'a2 rendering')
    expect(running()).toEqual(['a1', 'a2'])
  })

  it('never preempts a token below one job: one worker, or every busy token on one worker, and the waiting token waits its turn', async () => {
    const one = setup({ workers: 1 })
    one.add('tok_a', 'a1')
    one.add('tok_a', 'a2')
    await until(() => one.running().length === 1, 'a1 rendering')
    one.add('tok_b', 'b1')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(one.running()).toEqual(['a1'])
    one.gate.of('a1').release()
    // With none running on either side, the turns decide: tok_a's came first.
    await until(() => one.running().length === 1 && !one.running().includes('a1'), 'the next job rendering')
    expect(one.running()).toEqual(['a2'])
    one.gate.of('a2').release()
    await until(() => one.running().includes('b1'), 'b1 rendering')
    expect(preempted(one.lines)).toEqual([])

    const two = setup({ workers: 2 })
    two.add('tok_a', 'a1')
    two.add('tok_b', 'b1')
    await until(() => two.running().length === 2, 'a1 and b1 rendering')
    two.add('tok_c', 'c1')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(two.running()).toEqual(['a1', 'b1'])
    expect(two.status('c1')).toBe('queued')
    expect(preempted(two.lines)).toEqual([])
  })

  it('a preempted job keeps its first enqueue time: past its deadline it fails timeout instead of waiting on', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z')
    const { add, gate, lines, status, running, store } = setup({ now: () => clock })
    add('tok_a', 'a1')
    add('tok_a', 'a2')
    await until(() => running().length === 2, 'a1 and a2 rendering')
    // a2 renders for 40 s, then gives its worker up to tok_b.
    clock += 40_000
    add('tok_b', 'b1')
    await until(() => running().includes('b1'), 'b1 rendering')
    expect(status('a2')).toBe('queued')

    // b1 takes 25 s: a2 is taken again 25 s after its preemption, but 65 s after it joined the queue.
    clock += 25_000
    gate.of('b1').release()
    await until(() => status('a2') === 'failed', 'a2 failed')
    expect(store.job('a2')?.error).toMatchObject({ code: 'timeout', message: expect.stringContaining('in the queue') })
    expect(startsOf(gate, 'a2')).toBe(1)
    expect(lines).toContainEqual({ event: 'job_failed', job: 'a2', code: 'timeout' })
  })

  it('a job preempted twice goes last: the token gives up another of its jobs first', async () => {
    const { add, gate, lines, status, running } = setup()
    add('tok_a', 'a1')
    add('tok_a', 'a2')
    await until(() => running().length === 2, 'a1 and a2 rendering')
    for (const [token, name] of [['tok_b', 'b1'], ['tok_c', 'c1']] as const) {
      add(token, name)
      await until(() => running().includes(name), `${name} rendering`)
      expect(running()).toEqual(['a1', name])
      gate.of(name).release()
      await until(() => running().includes('a2'), 'a2 rendering again')
    }
    expect(preempted(lines)).toEqual(['a2', 'a2'])

    // a2, the newest, has given up its worker twice: a1 gives it up this time.
    add('tok_d', 'd1')
    await until(() => running().includes('d1'), 'd1 rendering')
    expect(running()).toEqual(['a2', 'd1'])
    expect(preempted(lines)).toEqual(['a2', 'a2', 'a1'])
    expect(status('a1')).toBe('queued')

    gate.of('d1').release()
    await until(() => running().includes('a1'), 'a1 rendering again')
    gate.of('a1').release()
    gate.of('a2').release()
    await until(() => status('a1') === 'done' && status('a2') === 'done', 'a1 and a2 done')
    expect([startsOf(gate, 'a1'), startsOf(gate, 'a2')]).toEqual([2, 3])
  })
  it('a token whose every job was preempted twice still gives a worker up: the waiting token keeps its deadline', async () => {
    const { add, gate, lines, running } = setup()
    add('tok_a', 'a1')
    add('tok_a', 'a2')
    await until(() => running().length === 2, 'a1 and a2 rendering')
    // Six tenants in turn, each with one job: a1 and a2 are each preempted three times or more.
    for (const token of ['b', 'c', 'd', 'e', 'f', 'g']) {
      const name = `${token}1`
      add(`tok_${token}`, name)
      await until(() => running().includes(name), `${name} rendering while tok_a holds two workers`)
      gate.of(name).release()
      await until(() => running().length === 2 && !running().includes(name), 'tok_a back on both workers')
    }
    const times = preempted(lines)
    expect(times).toHaveLength(6)
    expect(times.filter((id) => id === 'a1').length).toBeGreaterThanOrEqual(2)
    expect(times.filter((id) => id === 'a2').length).toBeGreaterThanOrEqual(2)
  })
})
