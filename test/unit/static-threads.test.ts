import { describe, expect, it } from 'vitest'
import { staticThreads } from '../../src/engine/static/static.ts'

describe('the static engine’s threads', () => {
  it('leave one core to the engine’s own thread: one on one or two cores, at most four', () => {
    expect([1, 2, 3, 4, 8, 64].map((cores) => staticThreads(cores))).toEqual([1, 1, 2, 3, 4, 4])
  })
})
