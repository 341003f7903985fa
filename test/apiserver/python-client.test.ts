// The official Kubernetes Python client against bosun: it sends `watch=True` (Go's ParseBool
// spelling, not "true") and reads the version at `/version/` with a trailing slash, so a server
// that only knows "true" and exact paths fails it on day one. The program is in fixtures/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestApiServer } from '../helpers/apiserver.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./fixtures/python-client.py', import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { env: { ...process.env, KUBECONFIG: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const available = (await run(['-c', 'import kubernetes']).catch(() => ({ code: 1 }))).code === 0;

test('the official Python client lists, watches (from a resourceVersion too), patches and reads /version', { skip: !available && !process.env.CI && 'python3-kubernetes is not installed', timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  try {
    const result = await run([SCRIPT, api.kubeconfigPath, 'default']);
    assert.equal(result.code, 0, result.stderr);
    const seen = JSON.parse(result.stdout);
    assert.equal(seen.version, 'v1.33.0+bosun');
    assert.deepEqual(seen.listed, ['py-a']);
    assert.deepEqual(seen.read, { k: 'patched' });
    assert.deepEqual(seen.from_resource_version, [['MODIFIED', 'py-a', { k: 'patched' }]]);
    assert.deepEqual(seen.from_now, [['ADDED', 'py-a'], ['ADDED', 'py-b']]);
  } finally {
    await api.stop();
  }
});
