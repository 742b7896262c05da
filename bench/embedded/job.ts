/**
 * What the bench asks of one child process (`one-build.ts`) and what the child answers on
 * the last line of its stdout, as JSON.
 */

export type Job =
  /** A Vite build of the site with the plugin in embedded mode. */
  | { kind: 'ours'; site: string; inputs: string[]; outDir: string; cacheDir: string; report: string }
  /** The same build without the plugin: the baseline, and beasties' input. */
  | { kind: 'vite'; site: string; inputs: string[]; outDir: string }
  /** beasties over every HTML file of a plugin-less build, each rewritten in place. */
  | { kind: 'beasties'; distDir: string }

export interface JobResult {
  /** Around the build call (or beasties' loop over the pages) only: not Node's start-up. */
  wallMs: number
  /** HTML pages handled. */
  pages: number
  /** The plugin's own time in the build (its report's ms); null for the others. */
  ownMs: number | null
  fromCache: number | null
  inlined: number | null
  failed: number | null
  /**
   * CPU time of the child and of the descendants it reaped, ms (/proc/self/stat utime +
   * stime + cutime + cstime): before the measured span (start-up, module loading), and
   * over its whole life, read as it exits. Chromium's renderers are not reaped by the
   * child, so the parent's sampling of the tree counts the rest.
   */
  startupCpuMs: number
  lifeCpuMs: number
  /** The child's own peak RSS (process.resourceUsage().maxRSS), bytes: its descendants not included. */
  maxRssBytes: number
  /** Why pages failed or were left unchanged, first few. */
  problems: string[]
}
