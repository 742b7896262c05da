/**
 * Permissions in a job's context stay undecided ("prompt") whatever its pages ask. A
 * headless Chromium denies a prompt (`Notification.requestPermission()`) and keeps the
 * denial for the origin where neither clearing permissions (they are overrides) nor clearing
 * storage reaches it, so a tenant's next page read `Notification.permission` as "denied":
 * its CSS could depend on which page came before. An override to "prompt" for every
 * origin is above that record, and a request under it is dismissed, not decided.
 */
import type { Browser, CDPSession } from 'playwright-core'

/**
 * The permissions a fresh Chromium 156 context reads as "prompt" (navigator.permissions.query
 * on a page of its own, 2026-11-29): the ones a page can ask for and then find decided. The
 * others start granted or denied, and stay as a fresh browser has them.
 */
const PROMPTED: readonly { name: string; userVisibleOnly?: boolean }[] = [
  ...['camera', 'captured-surface-control', 'clipboard-read', 'display-capture', 'geolocation', 'idle-detection', 'local-fonts', 'local-network-access'].map((name) => ({ name })),
  ...['microphone', 'midi', 'notifications', 'persistent-storage', 'top-level-storage-access', 'window-management'].map((name) => ({ name })),
  { name: 'push', userVisibleOnly: true },
]

/**
 * The browser's DevTools session that holds the overrides, one per browser for as long as it
 * lives: overrides last only as long as the session that set them.
 */
const holders = new WeakMap<Browser, Promise<CDPSession>>()

/** Holds the prompted permissions of the context of the page whose DevTools session is `session` at "prompt", for every origin. */
export async function holdPermissionsAtPrompt(browser: Browser, session: CDPSession): Promise<void> {
  const { targetInfo } = await session.send('Target.getTargetInfo')
  const browserContextId = targetInfo.browserContextId
  if (browserContextId === undefined) return
  let holder = holders.get(browser)
  if (holder === undefined) {
    holder = browser.newBrowserCDPSession()
    holders.set(browser, holder)
    holder.catch(() => holders.delete(browser))
  }
  const browserSession = await holder
  await Promise.all(
    // One this Chromium does not know is skipped: the rest still hold.
    PROMPTED.map((permission) => browserSession.send('Browser.setPermission', { permission, setting: 'prompt', browserContextId }).catch(() => {})),
  )
}
