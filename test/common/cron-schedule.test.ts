// Cron schedules as CronJobs read them: five fields with robfig/cron's syntax, the descriptors
// (@every included), time zones, and what is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatInZone, parseGoDuration, parseSchedule, ScheduleError } from '../../src/common/cron-schedule.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

test('five fields and descriptors: the next time strictly after, the latest at or before', () => {
  const now = at('2026-11-28T10:05:00Z');
  const utc = { timeZone: 'UTC' };
  assert.equal(iso(parseSchedule('*/5 * * * *', utc).next(now)), '2026-11-28T10:10:00.000Z');
  assert.equal(iso(parseSchedule('*/5 * * * *', utc).latest(now)), '2026-11-28T10:05:00.000Z');
  assert.equal(iso(parseSchedule('0 0 13 * 5', utc).next(now)), '2026-12-04T00:00:00.000Z', 'day of month or day of week, as cron reads both');
  assert.equal(iso(parseSchedule('30 6 ? * MON-FRI', utc).next(now)), '2026-11-30T06:30:00.000Z');
  assert.equal(iso(parseSchedule('0 0 1 JAN,jul *', utc).next(now)), '2027-01-01T00:00:00.000Z');
  for (const [descriptor, next] of [['@hourly', '2026-11-28T11:00:00.000Z'], ['@daily', '2026-11-29T00:00:00.000Z'], ['@midnight', '2026-11-29T00:00:00.000Z'], ['@weekly', '2026-11-29T00:00:00.000Z'], ['@monthly', '2026-12-01T00:00:00.000Z'], ['@yearly', '2027-01-01T00:00:00.000Z'], ['@annually', '2027-01-01T00:00:00.000Z']]) {
    assert.equal(iso(parseSchedule(descriptor, utc).next(now)), next, descriptor);
  }
  const every = parseSchedule('@every 1h30m', { start: at('2026-11-28T08:00:00Z') });
  assert.equal(iso(every.next(now)), '2026-11-28T11:00:00.000Z');
  assert.equal(iso(every.latest(now)), '2026-11-28T09:30:00.000Z');
  assert.equal(every.latest(at('2026-11-28T09:00:00Z')), undefined, 'none before the first interval has passed');
});

test('a time zone moves the schedule and names its offset', () => {
  const now = at('2026-11-28T10:05:00Z');
  assert.equal(iso(parseSchedule('0 9 * * *', { timeZone: 'Asia/Tokyo' }).next(now)), '2026-11-29T00:00:00.000Z');
  assert.equal(iso(parseSchedule('0 9 * * *', { timeZone: 'America/New_York' }).next(now)), '2026-11-28T14:00:00.000Z');
  assert.equal(formatInZone(now, 'UTC'), '2026-11-28T10:05:00Z');
  assert.equal(formatInZone(now, 'Asia/Kolkata'), '2026-11-28T15:35:00+05:30');
  assert.equal(formatInZone(now, 'America/New_York'), '2026-11-28T05:05:00-05:00');
});

test('what is not a schedule is refused with the reason', () => {
  const refused: [string, RegExp][] = [
    ['', /empty spec string/],
    ['* * * *', /expected exactly 5 fields, found 4/],
    ['0 * * * * *', /expected exactly 5 fields, found 6/],
    ['61 * * * *', /61/],
    ['0 0 L * *', /failed to parse "L"/],
    ['0 0 * * 5#3', /failed to parse "5#3"/],
    ['@often', /unrecognized descriptor: @often/],
    ['@every soon', /failed to parse duration @every soon/],
    ['CRON_TZ=UTC * * * * *', /use timeZone field instead/],
  ];
  for (const [schedule, message] of refused) assert.throws(() => parseSchedule(schedule), (e: unknown) => e instanceof ScheduleError && message.test(e.message), schedule);
  assert.throws(() => parseSchedule('* * * * *', { timeZone: 'Nowhere/City' }), /unknown time zone Nowhere\/City/);
  assert.deepEqual(['1h30m', '90s', '1.5h', '250ms', 'h', '1d'].map(parseGoDuration), [5_400_000, 90_000, 5_400_000, 250, undefined, undefined]);
});
