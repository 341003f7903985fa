// How a server command ends: on SIGINT or SIGTERM (the first one) it stops what it started and
// exits 0, so that Ctrl-C and a pod's termination both shut it down cleanly. A command calls it
// before it prints that it listens: whoever waits for that line (a test, a script, a supervisor)
// may signal at once, and a signal before the handlers kills the process instead
// (test/cli/signal-on-ready.test.ts).

/** Runs `stop` on the first SIGINT or SIGTERM, then exits 0. */
export function exitOnSignals(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  const shutdown = (signal: NodeJS.Signals) => void stop(signal).then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
