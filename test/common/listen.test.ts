// freePort: a port below the kernel's ephemeral range (where outgoing connections take theirs),
// that a server can listen on right after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { ephemeralPortsStart, freePort, freePortBetween } from '../../src/common/listen.js';

test('freePort gives ports below the ephemeral range that a server can then listen on', async () => {
  const end = ephemeralPortsStart();
  assert.ok(end > 1024);
  const ports = await Promise.all(Array.from({ length: 10 }, () => freePort('127.0.0.1')));
  for (const port of ports) {
    assert.ok(port >= 20000 && port < end, `${port} is in [20000, ${end})`);
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  }
});

test('freePort never gives a port something listens on: in a range of 10 with 9 held, the free one or the kernel\'s choice', async () => {
  const first = (await freePort()) - 5;
  const servers = [];
  const held = new Set<number>();
  for (let port = first; port < first + 9; port++) {
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)));
    if (bound) {
      held.add(port);
      servers.push(server);
    }
  }
  try {
    for (let i = 0; i < 20; i++) {
      const port = await freePortBetween('127.0.0.1', first, first + 10);
      assert.ok(!held.has(port), `${port} is held`);
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
});
