/** Signals that stop a build, the folder command and the service, and the exit code each one gives. */
import { constants } from 'node:os'

/** SIGINT (Ctrl-C), SIGTERM (CI cancel, `timeout`, `docker stop`, Kubernetes), SIGHUP (a closed terminal). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
export type StopSignal = (typeof STOP_SIGNALS)[number]

/** The shell's convention for a process ended by a signal: 128 + its number (130, 143, 129). */
export function signalExitCode(signal: StopSignal): number {
  return 128 + constants.signals[signal]
}
