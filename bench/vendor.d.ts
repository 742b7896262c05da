// Types for the peers the benchmarks compare with, where they ship none that fit.
declare module 'inline-critical' {
  /** Inlines `css` into `html` and makes its stylesheets load asynchronously (jsdom based). */
  export function inline(html: string, css: string, options?: Record<string, unknown>): string
}
