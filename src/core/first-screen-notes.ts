/** What the run says of a page whose first screen, with only its critical CSS, still differs from the full page. */
import type { FirstScreenDifference } from '../contract/api-contract.ts'

/** Elements named in one log line; the report has every one the service named. */
const MAX_ELEMENTS_SHOWN = 3

/** `0.8 %`, and `< 0.1 %` for a sliver: the figure says how much of the screen to look at. */
export function formatShare(share: number): string {
  const percent = share * 100
  return percent < 0.1 ? '< 0.1 %' : `${percent.toFixed(1)} %`
}

/** `first screen differs until the full CSS loads: 0.8 % at 412×915 (footer.site, img.hero); 2.1 % at 1300×900 in prefers-color-scheme: dark (…)`, or null when it does not. */
export function firstScreenLine(differences: FirstScreenDifference[] | null): string | null {
  if (!differences || differences.length === 0) return null
  const parts = differences.map(({ viewport, state, share, elements }) => {
    const shown = elements.slice(0, MAX_ELEMENTS_SHOWN).join(', ')
    return `${formatShare(share)} at ${viewport.width}×${viewport.height}${state === undefined ? '' : ` in ${state}`}${shown ? ` (${shown}${elements.length > MAX_ELEMENTS_SHOWN ? ', …' : ''})` : ''}`
  })
  return `first screen differs until the full CSS loads: ${parts.join('; ')}`
}
