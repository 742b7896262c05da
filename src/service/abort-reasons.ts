/** Why the queue aborts a running job; the run reads the reason to tell where the job goes. */

/** The queue is closing: the job goes back to queued for the next start. */
export class ShutdownSignal extends Error {
  override name = 'ShutdownSignal'
}

/** Why a job was aborted to free its worker for a token with none: it goes back to queued. */
export class PreemptedSignal extends Error {
  override name = 'PreemptedSignal'
}
