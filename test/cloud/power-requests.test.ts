// A scheduled-shutdown record as the local cloud reads it (src/common/scheduled-shutdown.ts), one row
// per case: logind's modes, a time still in the future, dry runs, a record not written yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseScheduledShutdown } from '../../src/common/scheduled-shutdown.js';

test('parseScheduledShutdown: one row per mode and time', () => {
  const now = 1_700_000_000_000;
  const rows: [string, ReturnType<typeof parseScheduledShutdown>][] = [
    [`USEC=${now * 1000}\nWARNALL=0\nMODE=reboot\n`, 'reboot'],
    [`USEC=${(now - 5) * 1000}\nMODE=kexec\n`, 'reboot'],
    [`USEC=${now * 1000}\nMODE=poweroff\n`, 'stop'],
    [`USEC=${now * 1000}\nMODE=halt\n`, 'stop'],
    [`USEC=${(now + 60_000) * 1000}\nMODE=reboot\n`, undefined],
    [`USEC=${now * 1000}\nMODE=dry-reboot\n`, 'ignore'],
    ['MODE=reboot\n', 'reboot'],
    // A record read between its writer's truncate and write: nothing yet, not a power-off.
    ['', undefined],
    ['\n', undefined],
  ];
  for (const [text, want] of rows) assert.equal(parseScheduledShutdown(text, now), want, text);
});
