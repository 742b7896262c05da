/**
 * Which better-sqlite3 the service accepts on which Node: the ones that crash the process
 * (12 on Node 24 at random, 13 on Node 20 as it loads) are refused at start with the
 * version to install, not run.
 */
import { describe, expect, it } from 'vitest'
import { sqliteDriverProblem } from '../../src/service/store/sqlite.ts'

describe('sqliteDriverProblem', () => {
  it('takes 12 on Node 20 and 22, and 13 on Node 22 and 24', () => {
    for (const [driver, node] of [['12.11.1', '20.19.0'], ['12.11.1', '22.12.0'], ['13.2.0', '22.12.0'], ['13.2.0', '24.21.0']] as const) {
      expect(sqliteDriverProblem(driver, node), `${driver} on ${node}`).toBeNull()
    }
  })

  it('refuses 12 on Node 24, naming 13', () => {
    expect(sqliteDriverProblem('12.11.1', '24.21.0')).toMatch(/^better-sqlite3 12\.11\.1 aborts the process at random on Node 24\.21\.0 .*`npm install better-sqlite3@\^13`/)
  })

  it('refuses 13 on Node 20, naming 12 or Node 22', () => {
    expect(sqliteDriverProblem('13.2.0', '20.19.0')).toMatch(/^better-sqlite3 13\.2\.0 needs Node 22 or later .*`npm install better-sqlite3@\^12`, or run on Node 22 or later\.$/)
  })
})
