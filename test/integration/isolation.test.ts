/**
 * Tenants cannot hurt each other (issue 15), in the real service and Chromium on loopback:
 * one token sends pages that misbehave, another sends a normal page at the same time,
 * spaced out, and again once the hostile jobs have ended. Read back through the API as a
 * client would: every normal job is done, with its CSS, within its own deadline (its
 * created_at → updated_at); every hostile job fails with timeout or render_failed, never
 * internal; the service answers throughout; memory comes back once it is over.
 *
 * Two rounds, each on a fresh service with 2 workers: the storms (pushState, console,
 * location.hash) and the resources (a page that eats memory, a busy loop, DOM growth).
 * With the normal tenant holding a worker, the hostile token renders about two jobs per
 * 20 s deadline, so each round's first two kinds are the ones that surely reach the
 * browser; the rest wait and fail by the queue's deadline, which the round checks too.
 * Two more rounds, one hostile page each: one past a bound of what the engine takes in (a
 * decompression bomb, a thousand frames), stopped while its bytes come.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChromium } from '../../src/engine/find-browsers.ts'
import { runIsolation, startHostilePages, type HostileKind, type HostilePages, type IsolationRun } from '../fixtures/hostile-pages.ts'

const JOB_TIMEOUT_MS = 20_000
const MiB = 1024 * 1024
/** The hostile token's jobs per round, submitted at once: the first two start first. */
const ROUNDS: { name: string; hostile: HostileKind[]; normal: number }[] = [
  { name: 'navigation and console storms', hostile: ['pushState', 'console', 'hash'], normal: 6 },
  { name: 'memory and CPU', hostile: ['heap', 'spin', 'dom'], normal: 6 },
  // Before the bounds, its 100 MiB were read whole into the service: answers stalled for seconds, the browser was relaunched, RSS went 126 → 919 MiB.
  { name: 'a decompression bomb', hostile: ['cssBomb'], normal: 3 },
  // Before the bound, four of these had the browser killed as unresponsive.
  { name: 'a thousand frames', hostile: ['iframes'], normal: 3 },
]

/** What a page stopped at a bound fails with: the bound, named. */
const STOPPED: Partial<Record<HostileKind, RegExp>> = {
  cssBomb: /^The page's stylesheets hold more than 8 MiB of CSS \(8\.\d MiB so far, decoded\)/,
  iframes: /^The page attached more than 100 frames; the engine does not render a page that floods it\.$/,
}

for (const round of ROUNDS) {
  describe.skipIf(!findChromium())(`isolation, ${round.name}: one hostile token (${round.hostile.join(', ')}) beside a normal one`, () => {
    let pages: HostilePages
    let run: IsolationRun

    beforeAll(async () => {
      // A memory page holds at most 1.5 GiB (per renderer) when nothing bounds it first: the run must not take a shared machine down.
      pages = await startHostilePages({ ceilingMiB: 1536 })
      run = await runIsolation(pages, {
        hostile: round.hostile,
        normal: round.normal,
        normalGapMs: 2500,
        normalAfter: 2,
        workers: 2,
        jobTimeoutMs: JOB_TIMEOUT_MS,
        // Every job ends by its deadline (a queued one past it fails at once): 2 × 20 s during, 2 × 20 s after, and slack.
        giveUpMs: 150_000,
      })
      const jobs = run.jobs.map((job) => `${job.tenant}/${job.page}/${job.phase} ${job.status}${job.code ? `:${job.code}` : ''} ${job.ms === null ? '—' : `${(job.ms / 1000).toFixed(1)} s`}`)
      const memory = `tree RSS idle ${Math.round(run.idleRssBytes / MiB)} MiB, peak ${Math.round(run.peakRssBytes / MiB)} MiB, settled ${Math.round(run.settledRssBytes / MiB)} MiB`
      const loaded = round.hostile.map((kind) => `${kind} ×${pages.requests(kind)}`).join(', ')
      console.log(`${round.name} (${(run.wallMs / 1000).toFixed(0)} s): ${memory}; slowest answer ${Math.round(run.slowestAnswerMs)} ms; longest event-loop stall ${Math.round(run.longestStallMs)} ms; hostile pages loaded: ${loaded}\n  ${jobs.join('\n  ')}`)
    }, 240_000)

    afterAll(async () => {
      await pages?.close()
    })

    it('every normal job is done, with its page\'s CSS, within its own deadline (created → finished), during the hostile jobs and after them', () => {
      const normal = run.jobs.filter((job) => job.tenant === 'normal')
      expect(normal.filter((job) => job.phase === 'during')).toHaveLength(round.normal)
      expect(normal.filter((job) => job.phase === 'after')).toHaveLength(2)
      for (const job of normal) {
        const seen = { phase: job.phase, status: job.status, code: job.code, withinDeadline: job.ms !== null && job.ms <= JOB_TIMEOUT_MS, ms: job.ms }
        expect(seen, `normal job ${job.id}`).toEqual({ phase: job.phase, status: 'done', code: null, withinDeadline: true, ms: seen.ms })
        expect(job.css).toContain('#0b3d91')
      }
    })

    it('every hostile job fails with timeout or render_failed, never internal, and the first two reached the browser', () => {
      const hostile = run.jobs.filter((job) => job.tenant === 'hostile')
      expect(hostile.map((job) => job.page)).toEqual(round.hostile)
      for (const job of hostile) {
        expect({ page: job.page, status: job.status, code: job.code }).toEqual({ page: job.page, status: 'failed', code: expect.stringMatching(/^(timeout|render_failed)$/) })
      }
      // The round is live: the jobs the workers took first did load their pages.
      for (const kind of round.hostile.slice(0, 2)) expect({ kind, loaded: pages.requests(kind) > 0 }).toEqual({ kind, loaded: true })
    })

    // Every request answered before a client gives up on it (the fixture's 30 s, the client's default request timeout): how fast
    // is bench:isolation's to say (its slowest-answer and event-loop-stall columns); a time here would race the machine's load.
    it('the service answers throughout: every request answered, and it still answers once it is over', () => {
      expect({ failedAnswers: run.failedAnswers, answersAfter: run.answersAfter }).toEqual({ failedAnswers: 0, answersAfter: true })
    })

    it('the memory the hostile pages took is given back: the process tree settles within 512 MiB of where it idled', () => {
      expect(run.settledRssBytes - run.idleRssBytes).toBeLessThan(512 * MiB)
    })

    if (round.hostile.some((kind) => STOPPED[kind])) {
      it('a page past a bound is stopped while its bytes come, naming the bound, and the browser is not relaunched for it', () => {
        for (const job of run.jobs.filter((each) => each.tenant === 'hostile')) {
          expect({ page: job.page, code: job.code, message: job.message }).toEqual({ page: job.page, code: 'render_failed', message: expect.stringMatching(STOPPED[job.page as HostileKind]!) })
        }
        expect(run.log.filter((line) => line.event === 'browser_unresponsive' || line.event === 'browser_crashed')).toEqual([])
      })
    }
  })
}
