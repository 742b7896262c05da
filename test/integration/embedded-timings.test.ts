/**
 * The embedded service as a build meets it, in time: a job's waiter hears of the job's end
 * from the service in this process, and `npm run demo -- --verbose` can say where a build's
 * plugin time went (the steps the plugin publishes on its diagnostics channel).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { breakdown, recordTimings } from '../../playground/timings.ts'
import { createClient, type CriticalCssClient } from '../../src/client.ts'
import { startEmbeddedService } from '../../src/core/modes/embedded-service.ts'
import { PLUGIN_WORDS } from '../../src/core/options.ts'
import type { BuildReport } from '../../src/core/report.ts'
import { buildSite, createProject, removeProject } from '../fixtures/sites.ts'
import { serveFiles } from '../fixtures/static-server.ts'

const projects = new Set<string>()
afterAll(async () => {
  await Promise.all([...projects].map(removeProject))
})

describe('the embedded service', () => {
  it('says when each job’s end is written, so that its waiter takes the CSS then, not at its next check', async () => {
    const site = await serveFiles({
      '/': '<!doctype html><html><head><link rel="stylesheet" href="/site.css"></head><body><h1>Hello</h1></body></html>',
      '/site.css': 'h1 { color: rgb(1, 2, 3) } footer { color: red }',
    })
    let client: CriticalCssClient | null = null
    const ended: Promise<[string, string]>[] = []
    const service = await startEmbeddedService({
      jobTimeoutMs: 30_000,
      engine: 'chromium',
      root: process.cwd(),
      workers: { chromium: 1, static: 1 },
      words: PLUGIN_WORDS,
      onJobEnded: (id) => {
        // What the service answers for the job at the moment it says so.
        ended.push(client!.jobData(id).then((data) => [id, data.status]))
        client!.checkNow(id)
      },
    })
    try {
      // Left to its checks, this client would first look at a job after ten minutes.
      client = createClient({ baseUrl: service.baseUrl, token: service.token, checkInterval: { firstMs: 600_000, factor: 1, maxMs: 600_000 } })
      const jobs = await Promise.all([`${site.origin}/`, `${site.origin}/missing`].map((url) => client!.generate(url)))
      const [done, failed] = await Promise.allSettled(jobs.map((job) => client!.waitForCss(job)))
      expect(done).toMatchObject({ status: 'fulfilled', value: { status: 'done', css: 'h1{color:rgb(1,2,3)}' } })
      expect(failed).toMatchObject({ status: 'rejected', reason: { code: 'fetch_failed' } })
      expect(new Map(await Promise.all(ended))).toEqual(new Map([[jobs[0]!.id, 'done'], [jobs[1]!.id, 'failed']]))
    } finally {
      await client?.close()
      await service.close()
      await site.close()
    }
  }, 60_000)
})

describe('where a build’s plugin time went (the demo’s --verbose)', () => {
  it('every rendered page’s steps, the browser launched once; a warm build launches none', async () => {
    const root = await createProject('vite')
    projects.add(root)
    const build = async () => {
      const recording = recordTimings()
      const output = await buildSite('vite', { root, plugin: { report: join(root, 'report.json') } })
      const spent = breakdown(recording.stop())
      expect(output.error).toBeNull()
      return { spent, report: JSON.parse(await readFile(join(root, 'report.json'), 'utf8')) as BuildReport }
    }
    const cold = await build()
    expect(cold.spent.build['browsers launched']).toBe(1)
    expect(cold.spent.pages.map((row) => row.page).sort()).toEqual(cold.report.pages.map((page) => page.url).sort())
    for (const row of cold.spent.pages) {
      for (const step of ['take a page', 'navigate', 'settle', 'read', 'ask', 'check', 'job', 'total']) expect(row[step], `${row.page}: ${step}`).toBeGreaterThan(0)
      // The page's wait holds its job: a step outside it was timed against another clock or page.
      expect(row.total).toBeGreaterThanOrEqual(row.job as number)
    }
    expect(cold.spent.build['plugin run']).toBeLessThanOrEqual(cold.report.ms)

    const warm = await build()
    expect(warm.report.pages.every((page) => page.source === 'cache')).toBe(true)
    expect(warm.spent.build['browsers launched']).toBe(0)
    expect(warm.spent.pages).toEqual([])
  }, 120_000)
})
