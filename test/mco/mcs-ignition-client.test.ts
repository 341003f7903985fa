// The real Ignition client (Debian `ignition` 2.14) boots from a pointer config that merges the
// machine-config server's /config/worker over TLS, and ignition-validate accepts what the server
// serves at every spec version this Ignition knows (2.14 knows 3.0.0–3.3.0; 3.4/3.5 and 2.2 are
// "unsupported config version" to it, which the test checks rather than assumes).
//
// The fetch and files stages run into a scratch root (test/helpers/ignition.ts says why and how).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { IGNITION_VALIDATE, bootWithIgnition, skipWithoutIgnition } from '../helpers/ignition.js';
import { get, startFixture, workerConfig, BOOTSTRAP_KUBECONFIG, type Fixture } from './mcs-fixture.js';
import { decodeDataUrl, encodeDataUrl } from '../../src/ignition/data-url.js';


let f: Fixture;
let work: string;
before(async () => {
  f = await startFixture();
  work = mkdtempSync(join(tmpdir(), 'bosun-ignition-'));
});
after(async () => {
  await f.close();
  rmSync(work, { recursive: true, force: true });
});

// The server runs in this process: children must be awaited, never run synchronously.
async function run(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ ok: boolean; out: string }> {
  try {
    const r = await promisify(execFile)(cmd, args, { env, encoding: 'utf8', timeout: 60_000 });
    return { ok: true, out: `${r.stdout}${r.stderr}` };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    return { ok: false, out: `${err.stdout ?? ''}${err.stderr ?? ''}${err.message}` };
  }
}

function validate(text: string): Promise<{ ok: boolean; out: string }> {
  const file = join(work, `v-${Math.random().toString(36).slice(2)}.ign`);
  writeFileSync(file, text);
  return run(IGNITION_VALIDATE, [file]);
}

test('ignition-validate accepts what the server serves at every version it supports', { skip: skipWithoutIgnition }, async () => {
  const supported: string[] = [];
  for (const v of ['3.0.0', '3.1.0', '3.2.0', '3.3.0', '3.4.0', '3.5.0', '2.2.0']) {
    const r = await get(f, 'tls', '/config/worker', { accept: `application/vnd.coreos.ignition+json;version=${v}` });
    assert.equal(r.status, 200);
    const minimal = await validate(JSON.stringify({ ignition: { version: v } }));
    if (!minimal.ok) {
      assert.match(minimal.out, /unsupported config version/);
      continue;
    }
    supported.push(v);
    const served = await validate(r.body);
    assert.ok(served.ok, `ignition-validate rejected the ${v} config: ${served.out}`);
  }
  for (const v of ['3.0.0', '3.1.0', '3.2.0', '3.3.0']) assert.ok(supported.includes(v), `expected ignition-validate to know ${v}`);
});

function walk(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = lstatSync(p);
    return st.isDirectory() ? [`${relative(root, p)}/`, ...walk(root, p)] : [relative(root, p)];
  });
}

test('the real Ignition client fetches from the server and writes exactly the rendered files and units', { skip: skipWithoutIgnition, timeout: 90_000 }, async () => {
  const pointer = join(work, 'pointer.ign');
  writeFileSync(pointer, JSON.stringify({
    ignition: {
      version: '3.3.0',
      config: { merge: [{ source: `https://127.0.0.1:${f.server.port('tls')}/config/worker` }] },
      security: { tls: { certificateAuthorities: [{ source: encodeDataUrl(f.ca) }] } },
    },
  }));
  const root = await bootWithIgnition(pointer, work);
  // Ignition 2.14 asks for 3.3.0 (its newest stable spec) and got it over TLS.
  const served = (await f.server.metrics.requests.get()).values.find((v) => v.labels.listener === 'tls' && v.labels.version === '3.3.0' && v.labels.code === 200);
  assert.ok(served && served.value >= 1, 'the server served 3.3.0 over TLS');

  const written = walk(root).filter((p) => !['etc/selinux/', 'etc/selinux/config', 'etc/.ignition-result.json'].includes(p)).sort();
  assert.deepEqual(written, [
    'etc/', 'etc/bosun.d/', 'etc/hello-link', 'etc/hello.conf', 'etc/kubernetes/', 'etc/kubernetes/kubeconfig',
    'etc/machine-config-daemon/', 'etc/machine-config-daemon/node-annotations.json', 'etc/secret.conf',
    'etc/systemd/', 'etc/systemd/system-preset/', 'etc/systemd/system-preset/20-ignition.preset',
    'etc/systemd/system/', 'etc/systemd/system/hello.service', 'etc/systemd/system/kubelet.service.d/',
    'etc/systemd/system/kubelet.service.d/10-bosun.conf',
  ]);
  for (const file of workerConfig.storage!.files!) {
    assert.deepEqual(readFileSync(join(root, file.path)), decodeDataUrl(file.contents!.source!), file.path);
    assert.equal(statSync(join(root, file.path)).mode & 0o7777, file.mode, `${file.path} mode`);
  }
  assert.equal(statSync(join(root, 'etc/bosun.d')).mode & 0o7777, 0o755);
  assert.equal(readlinkSync(join(root, 'etc/hello-link')), '/etc/hello.conf');
  assert.equal(readFileSync(join(root, 'etc/kubernetes/kubeconfig'), 'utf8'), BOOTSTRAP_KUBECONFIG);
  assert.equal(statSync(join(root, 'etc/kubernetes/kubeconfig')).mode & 0o777, 0o600);
  assert.equal(JSON.parse(readFileSync(join(root, 'etc/machine-config-daemon/node-annotations.json'), 'utf8'))['machineconfiguration.openshift.io/currentConfig'], 'rendered-worker-1');
  const [hello, kubelet] = workerConfig.systemd!.units!;
  assert.equal(readFileSync(join(root, 'etc/systemd/system/hello.service'), 'utf8'), hello.contents);
  assert.equal(readFileSync(join(root, 'etc/systemd/system/kubelet.service.d/10-bosun.conf'), 'utf8'), kubelet.dropins![0].contents);
  assert.match(readFileSync(join(root, 'etc/systemd/system-preset/20-ignition.preset'), 'utf8'), /^enable hello\.service$/m);
});
