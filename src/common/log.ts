// The pino logger every bosun component uses: structured, one line per event, with the component
// named in every line. Level from BOSUN_LOG_LEVEL (default "info").
import { pino, type Logger } from 'pino';

const root: Logger = pino({
  level: process.env.BOSUN_LOG_LEVEL ?? 'info',
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
});

export type { Logger };

/** A child logger for one component, e.g. logger('apiserver'). */
export function logger(component: string, bindings: Record<string, unknown> = {}): Logger {
  return root.child({ component, ...bindings });
}
