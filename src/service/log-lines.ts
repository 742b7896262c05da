/**
 * How `serve` writes its log: `json`, one object per line for machines (the service's
 * structured lines with their time), or `text` for a person at a terminal, where the start
 * line reads as a sentence and every other event as `time event key=value …`.
 */
export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

/** What the start line says about the policy: what a job's pages may fetch. */
function fetches(line: Record<string, unknown>): string {
  const origins = Array.isArray(line.allowedOrigins) ? line.allowedOrigins.map(String) : []
  const base = line.privateNetworks === true ? 'fetches public and private addresses (--allow-private-networks)' : 'fetches public addresses only'
  return origins.length > 0 ? `${base}, and ${origins.join(', ')}` : base
}

function startText(line: Record<string, unknown>): string {
  const where = line.event === 'listening' ? `listening on ${String(line.url)}` : 'render worker started (answers no request)'
  const parts = [`critical-css-service ${where}`, `state: ${String(line.state)}`]
  parts.push(line.workers === 0 ? 'renders nothing (role api)' : `${String(line.workers)} pages at once on ${String(line.renders)}`, fetches(line))
  if (typeof line.tokenCommand === 'string') parts.push(`make a token: ${line.tokenCommand}`)
  return parts.join(' · ')
}

function valueText(value: unknown): string {
  return typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)
}

/** One log line as the format writes it, newline included. */
export function formatLogLine(line: Record<string, unknown>, format: LogFormat, time: Date = new Date()): string {
  if (format === 'json') return `${JSON.stringify({ time: time.toISOString(), ...line })}\n`
  if (line.event === 'listening' || line.event === 'worker_started') return `${startText(line)}\n`
  const { event, message, ...rest } = line
  const fields = Object.entries(rest).map(([key, value]) => `${key}=${valueText(value)}`)
  return `${[time.toISOString(), String(event), ...(typeof message === 'string' ? [message] : []), ...fields].join(' ')}\n`
}
