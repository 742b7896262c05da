/** The Chrome or Chromium executable: `CHROME_PATH`, the usual names on PATH, the usual install paths; null when none. */
export function findChromium(env?: NodeJS.ProcessEnv): string | null
/** Finds one, or installs Debian's `chromium` with apt-get where that is possible; throws with an install hint otherwise. */
export function ensureChromium(): string
export const INSTALL_HINT: string
