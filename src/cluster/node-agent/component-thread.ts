// The entry of a bosun component run as a thread of the node agent's process (container-thread.ts):
// the thread's process.argv and process.env are already the container's (the Worker's argv and
// env); here it lowers its own CPU priority to the containers' (Linux keeps a nice value per
// thread), takes the signals the agent sends it as messages to its process's signal handlers (the
// component manager's SIGTERM: stop and exit), reports its id and memory for the node's resource
// metrics, and runs the bosun command's entry.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { ComponentThreadData, ThreadReport } from './container-thread.js';

// Imported anywhere but in such a thread (a test loading every module), it does nothing.
if (!isMainThread && parentPort && workerData) await runComponent(parentPort, workerData as ComponentThreadData);

async function runComponent(port: MessagePort, { main, nice, reportMs }: ComponentThreadData): Promise<void> {
  try {
    // /proc/thread-self links to <pid>/task/<tid>: this thread's own id.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    port.postMessage({ tid } satisfies ThreadReport);
    setPriority(tid, Math.min(19, getPriority(process.pid) + nice));
  } catch {
    // A system without /proc/thread-self, or one that refuses: it runs at the agent's priority.
  }
  // The isolate's memory, for the node's resource metrics (in a thread, memoryUsage's heap and
  // external figures are its own; rss is the whole process's).
  const report = () => {
    const m = process.memoryUsage();
    port.postMessage({ memoryBytes: m.heapTotal + m.external + m.arrayBuffers } satisfies ThreadReport);
  };
  report();
  setInterval(report, reportMs).unref();
  port.on('message', (message: { signal?: NodeJS.Signals }) => {
    if (message.signal) process.emit(message.signal, message.signal);
  });
  // Listening for signals does not keep the thread alive: the component's own work does.
  port.unref();
  await import(main);
}
