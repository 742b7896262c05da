/**
 * What a bench run met on the way: each problem said as it comes, and listed at the end. A
 * call that fails leaves a gap in its row, not the run.
 */
export interface Troubles {
  readonly list: string[]
  note(message: string): void
  /** `run`'s result, or null with the problem noted under `label`. */
  attempt<T>(label: string, run: () => Promise<T>): Promise<T | null>
}

export function createTroubles(): Troubles {
  const list: string[] = []
  const note = (message: string): void => {
    list.push(message)
    console.error(`  ! ${message}`)
  }
  return {
    list,
    note,
    async attempt(label, run) {
      try {
        return await run()
      } catch (error) {
        note(`${label}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`)
        return null
      }
    },
  }
}
