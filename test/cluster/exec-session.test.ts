// The terminal sizes an exec's client sends (kubectl: `{"Width":…,"Height":…}` on the WebSocket's
// channel 4 or the SPDY resize stream): read when they are sizes, ignored otherwise, never thrown
// on. The sizes set on a real command's terminal: test/cluster/node-agent-pods.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { terminalSize } from '../../src/cluster/node-agent/exec-session.js';

test('a resize message gives its size; anything else gives none', () => {
  assert.deepEqual(terminalSize('{"Width":120,"Height":40}'), { width: 120, height: 40 });
  assert.deepEqual(terminalSize('{"Width":0,"Height":0}\n'), { width: 0, height: 0 });
  for (const bad of ['', 'null', '[]', '{', '{"Width":120}', '{"Width":"120","Height":40}', '{"Width":-1,"Height":40}', '{"Width":1.5,"Height":40}', '{"Width":70000,"Height":40}', '"x"']) {
    assert.equal(terminalSize(bad), undefined, bad);
  }
});
