// A server command stops cleanly on a SIGTERM sent the moment it says it listens: whoever waits
// for that line (a test, a script, a supervisor) may signal at once, so the command's signal
// handlers are in place before the line is printed. The window between the line and the handlers
// was microseconds and decided a full run's durability test once (exit by signal, not 0); here a
// preload (fault injection) holds the process for 300 ms right after it prints the line, so a
// handler installed after it would miss the signal every time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bosunBin } from '../helpers/cli.js';

const HOLD_MS = 300;

/** Runs `bosun <args>` with the preload, sends SIGTERM as soon as its stdout says "listening on", and resolves with how it ended. */
async function signalOnReady(dir: string, args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const preload = join(dir, 'hold-after-listening.mjs');
  writeFileSync(
    preload,
    `const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  const done = write(chunk, ...rest);
  if (String(chunk).includes(' listening on ')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${HOLD_MS});
  return done;
};
`,
  );
  const child = spawn(process.execPath, ['--import', preload, bosunBin, ...args], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  let out = '';
  let signalled = false;
  child.stdout.on('data', (d) => {
    out += d;
    if (!signalled && out.includes(' listening on ')) {
      signalled = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  assert.ok(signalled, `it never said it listens: ${out}`);
  return { code, signal, out };
}

test('bosun apiserver exits 0 on a SIGTERM sent as it says it listens', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-signal-ready-'));
  try {
    const r = await signalOnReady(dir, ['apiserver', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0']);
    assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, r.out);
    assert.match(r.out, /SIGTERM: shutting down/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bosun update-service exits 0 on a SIGTERM sent as it says it listens', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-signal-ready-'));
  try {
    const r = await signalOnReady(dir, ['update-service', '--graph-data', 'release-payload', '--releases', join(dir, 'empty-store'), '--listen', '127.0.0.1:0']);
    assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null }, r.out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
