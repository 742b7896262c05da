/**
 * The page as a build writes it with a tool's critical CSS (the default strategy, as
 * core/run.ts applies it, the links of sheets the render could not read kept blocking), and
 * that final page, settled, against the page as built: what bench:quality and bench:static
 * both hold a tool's output to.
 */
import { PNG } from 'pngjs'
import type { JobNetwork, Viewport } from '../../src/contract/api-contract.ts'
import { unreadSheet } from '../../src/core/network-notes.ts'
import { inlineCriticalCss } from '../../src/html/inline.ts'
import { DEFAULT_PRELOAD, STRATEGIES } from '../../src/html/strategies.ts'
import type { Timed } from './peers.ts'
import { diff, type Shooter } from './shots.ts'

/** A render's CSS and what it went without, with its time. */
export interface Generated extends Timed {
  network: JobNetwork | null
}

/** The final page against the page as built: the share of pixels that differ, and both sizes (a page taller or wider counts whole). */
export interface FinalDiff {
  ratio: number
  sizes: [string, string]
}

/** The page as the build writes it with `ours`, and the file it needs beside the page. */
export function builtPage(html: string, pageUrl: string, ours: Pick<Generated, 'css' | 'network'>): { html: string; deferred: string[]; files: Record<string, string> } {
  const { asset } = STRATEGIES[DEFAULT_PRELOAD]
  const result = inlineCriticalCss(html, ours.css, {
    preload: DEFAULT_PRELOAD,
    ...(asset ? { loaderSrc: `/${asset.file}` } : {}),
    keepBlocking: unreadSheet(ours.network, pageUrl),
  })
  return { html: result.html, deferred: result.deferred.map((href) => new URL(href, pageUrl).href), files: asset ? { [`/${asset.file}`]: asset.text } : {} }
}

/** The final page with `ours` against the page as built: both whole, settled. */
export async function finalPage(shooter: Shooter, url: string, html: string, ours: Pick<Generated, 'css' | 'network'>, viewport: Viewport): Promise<FinalDiff> {
  const built = builtPage(html, url, ours)
  const plain = await shooter.shootFinal(url, html, viewport)
  const processed = await shooter.shootFinal(url, built.html, viewport, built.files)
  const size = (png: Buffer): string => {
    const { width, height } = PNG.sync.read(png)
    return `${width}x${height}`
  }
  const sizes: [string, string] = [size(plain.png), size(processed.png)]
  return { ratio: sizes[0] === sizes[1] ? diff(plain.png, processed.png).ratio : 1, sizes }
}
