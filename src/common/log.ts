// The pino logger every bosun component uses: structured, one line per event, with the component
// named in every line. Level from BOSUN_LOG_LEVEL (default "info"), or setLogLevel (--log-level).
import { isMainThread } from 'node:worker_threads';
import { pino, type Logger } from 'pino';

const options = {
  level: process.env.BOSUN_LOG_LEVEL ?? 'info',
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
};
// pino writes to file descriptor 1 by default; a component run as a thread of a node agent
// (cluster/node-agent/container-thread.ts) writes to its thread's stdout, which the agent logs.
const root: Logger = isMainThread ? pino(options) : pino(options, process.stdout);

// pino children copy their parent's level when created; most are created at module load, before
// a command has read its --log-level, so setLogLevel sets each one made here.
const components = new Set<Logger>();

export type { Logger };

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A child logger for one component, e.g. logger('apiserver'). */
export function logger(component: string, bindings: Record<string, unknown> = {}): Logger {
  const child = root.child({ component, ...bindings });
  components.add(child);
  return child;
}

/** Sets the level of every component's logger, existing and to come. */
export function setLogLevel(level: string): void {
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`unknown log level "${level}" (one of ${LOG_LEVELS.join(', ')})`);
  root.level = level;
  for (const child of components) child.level = level;
}
