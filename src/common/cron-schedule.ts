// Cron schedules as Kubernetes' CronJobs read them (robfig/cron's standard parser, which
// kube-apiserver validates with and the CronJob controller runs on): five fields — minute, hour,
// day of month, month, day of week — of numbers, ranges, steps, lists, `*` and `?`, with month and
// day names; or a descriptor: @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly,
// or `@every <duration>` in Go's duration syntax. Times are read in an IANA time zone (a CronJob's
// spec.timeZone, else the controller's own). A zone given inside the schedule (`TZ=`, `CRON_TZ=`)
// is refused, as kube refuses it, naming spec.timeZone. The calendar arithmetic (day-of-month and
// day-of-week either matching when both are restricted, daylight-saving gaps) is cron-parser's.
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { BosunError } from './errors.js';

/** A schedule that cannot be read, with the reason in kube's words. */
export class ScheduleError extends BosunError {
  constructor(message: string) {
    super('ScheduleInvalid', message);
  }
}

/** When a schedule fires, in milliseconds since the epoch. */
export interface Schedule {
  /** The first time strictly after `after`. */
  next(after: number): number;
  /** The last time at or before `at` (undefined: none at all, as for `@every` before its start). */
  latest(at: number): number | undefined;
}

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** One item of a field's list: `*` or `?`, a number or a name, an optional range end, an optional step. */
const ITEM = /^(?:\*|\?|[0-9]+|[A-Za-z]{3})(?:-(?:[0-9]+|[A-Za-z]{3}))?(?:\/[0-9]+)?$/;

/** Whether a schedule names a time zone of its own (kube refuses it: spec.timeZone says it). */
export function scheduleNamesTimeZone(schedule: string): boolean {
  return /(^|\s)(CRON_)?TZ=/.test(schedule.trim());
}

/** Whether `zone` is a time zone this runtime knows by its IANA name ("Local" is not one). */
export function isKnownTimeZone(zone: string): boolean {
  if (zone === '' || zone.toLowerCase() === 'local') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration ("1h30m", "90s", "1.5h") in milliseconds, or undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (!/^(?:[0-9]+(?:\.[0-9]*)?(?:ns|us|µs|μs|ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, value, unit] of text.matchAll(/([0-9]+(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(value) * UNITS[unit];
  return total;
}

/** `@every d`: every d from its start (robfig rounds d to whole seconds, at least one). */
function everySchedule(delayMs: number, start: number): Schedule {
  const delay = Math.max(1000, Math.floor(delayMs / 1000) * 1000);
  return {
    next: (after) => (after < start ? start + delay : start + (Math.floor((after - start) / delay) + 1) * delay),
    latest: (at) => (at < start + delay ? undefined : start + Math.floor((at - start) / delay) * delay),
  };
}

/**
 * Reads a schedule in `timeZone` (default: this process's). `start` is when an `@every` schedule
 * begins (a CronJob's creation). Throws ScheduleError naming what is wrong.
 */
export function parseSchedule(schedule: string, options: { timeZone?: string; start?: number } = {}): Schedule {
  const text = schedule.trim();
  if (text === '') throw new ScheduleError('empty spec string');
  if (scheduleNamesTimeZone(text)) throw new ScheduleError('cannot use TZ or CRON_TZ in schedule, use timeZone field instead');
  const timeZone = options.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!isKnownTimeZone(timeZone)) throw new ScheduleError(`unknown time zone ${timeZone}`);
  if (text.startsWith('@every')) {
    const duration = text.slice('@every'.length).trim();
    const ms = parseGoDuration(duration);
    if (ms === undefined) throw new ScheduleError(`failed to parse duration ${text}: time: invalid duration ${JSON.stringify(duration)}`);
    return everySchedule(ms, options.start ?? 0);
  }
  let expression = text;
  if (text.startsWith('@')) {
    expression = DESCRIPTORS[text.toLowerCase()];
    if (expression === undefined) throw new ScheduleError(`unrecognized descriptor: ${text}`);
  }
  const fields = expression.split(/\s+/);
  if (fields.length !== 5) throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: ${text}`);
  for (const field of fields) {
    for (const item of field.split(',')) {
      if (!ITEM.test(item)) throw new ScheduleError(`failed to parse ${JSON.stringify(item)} in ${JSON.stringify(text)}`);
    }
  }
  const cron = expression.replaceAll('?', '*');
  const at = (currentDate: number): CronExpression => CronExpressionParser.parse(cron, { currentDate, tz: timeZone });
  try {
    at(0).next();
  } catch (e) {
    throw new ScheduleError(`${(e as Error).message}: ${text}`);
  }
  return {
    next: (after) => at(after).next().getTime(),
    latest: (time) => {
      try {
        return at(time + 1).prev().getTime();
      } catch {
        return undefined;
      }
    },
  };
}

/** `ms` as RFC 3339 in `zone`, seconds precision, as Go's time.Format(time.RFC3339) writes it ("Z" for UTC). */
export function formatInZone(ms: number, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const seconds = Math.floor(ms / 1000) * 1000;
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  const offset = Math.round((local - seconds) / 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const zoneText = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${zoneText}`;
}
