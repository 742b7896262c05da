/**
 * A thread of the static engine: it renders the jobs its engine hands it (render.ts) and
 * keeps what jobs of a site share. The engine's thread keeps the gates, the policy and the
 * job's bookkeeping; the parsing and matching, the CPU of a static job, happen here.
 */
import { parentPort } from 'node:worker_threads'
import { StaticRenderer } from './render.ts'
import { describeFailure, type FromWorker, type ToWorker } from './workers.ts'

const port = parentPort!
const renderer = new StaticRenderer()
const running = new Map<number, AbortController>()

port.on('message', (message: ToWorker) => {
  if (message.type === 'abort') return void running.get(message.id)?.abort()
  const controller = new AbortController()
  running.set(message.id, controller)
  renderer.render(message.job, controller.signal).then(
    (outcome) => post({ type: 'done', id: message.id, outcome }),
    (error: unknown) => post({ type: 'failed', id: message.id, failure: describeFailure(error) }),
  ).finally(() => running.delete(message.id))
})

function post(message: FromWorker): void {
  port.postMessage(message)
}
