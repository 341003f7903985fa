// A container's process (src/cluster/node-agent/container-process.ts): it runs at a lower CPU
// priority than its host (CONTAINER_NICE nicer, so that pods starting in bursts do not starve the
// API server and the balancers the host carries), logs in the CRI format, and stops on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTAINER_NICE, ContainerProcess } from '../../src/cluster/node-agent/container-process.js';
import { eventually } from '../helpers/eventually.js';

test('a container process runs CONTAINER_NICE nicer than its host, its output in the CRI log, and SIGTERM stops it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-container-'));
  try {
    const logFile = join(dir, 'c', '0.log');
    const c = new ContainerProcess({ argv: [process.execPath, '-e', 'console.log("ready"); setInterval(() => {}, 1000)'], env: { PATH: process.env.PATH ?? '' }, cwd: dir, logFile });
    await eventually('its first line logged', () => { try { return /^\S+ stdout F ready$/m.test(readFileSync(logFile, 'utf8')); } catch { return false; } }, 10_000);
    assert.equal(getPriority(c.pid!), Math.min(19, getPriority() + CONTAINER_NICE));
    const exit = await c.stop(5_000);
    assert.equal(exit.signal, 'SIGTERM');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
