// test: shared-addresses (binds the local cloud's machine, pod or balancer addresses; run alone)
// `bosun cloud-controller-manager` as a user runs it: --help lists the controllers with an
// example; bad flags are one-line errors; the real command in a child process, given a cloud
// config file naming the local cloud's data directory, takes its Lease, initialises a node and
// stops on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApiServer } from './helpers/apiserver.js';
import { bosunBin, runBosun } from './helpers/cli.js';
import { eventually } from './helpers/eventually.js';
import { isUp, startCloud, waitForInstance } from './cloud/cloud-fixture.js';

test('bosun cloud-controller-manager --help describes the controllers with an example', async () => {
  const r = await runBosun(['cloud-controller-manager', '--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const expected of ['--cloud-provider', '--cloud-config', '--controllers', '--cluster-cidr', '--configure-cloud-routes', '--kubeconfig', '--no-leader-elect',
    'kube-system/cloud-controller-manager', 'cloud-node-lifecycle', 'node.cloudprovider.kubernetes.io/uninitialized', 'Example', 'status.loadBalancer.ingress']) assert.ok(r.stdout.includes(expected), expected);
});

test('bad flags are one-line errors', async () => {
  const cases: Array<[string[], RegExp]> = [
    [[], /--cloud-provider is required \(known: local\)/],
    [['--cloud-provider', 'aws'], /unknown cloud provider "aws" \(known: local\)/],
    [['--cloud-provider', 'local', '--controllers', '*,-nodeipam'], /"nodeipam" is not a known controller/],
    [['--cloud-provider', 'local', '--cluster-cidr', '127.1.0.1/16'], /--cluster-cidr "127.1.0.1\/16" is not an IPv4 network/],
    [['--cloud-provider', 'local', '--cloud-config', '/nonexistent/cloud.conf'], /cannot read --cloud-config \/nonexistent\/cloud.conf/],
    [['--cloud-provider', 'local', '--configure-cloud-routes', 'maybe'], /--configure-cloud-routes must be true or false/],
  ];
  for (const [args, message] of cases) {
    const r = await runBosun(['cloud-controller-manager', '--kubeconfig', '/nonexistent/kubeconfig', ...args]);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, message, args.join(' '));
  }
});

test('the command leads through its Lease, initialises a node from the cloud and stops on SIGTERM', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  const cloud = await startCloud();
  const config = join(cloud.dataDir, 'cloud.conf');
  writeFileSync(config, `[Global]\ndataDir = ${cloud.dataDir}\n`);
  const instance = await waitForInstance(cloud.client, (await cloud.client.createInstance({ name: 'cli-node' })).id, 'up', isUp);
  await api.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'cli-node' }, spec: { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] } } });
  const child = spawn(process.execPath, [bosunBin, 'cloud-controller-manager', '--kubeconfig', api.kubeconfigPath, '--cloud-provider', 'local', '--cloud-config', config, '--controllers', 'cloud-node'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const node = await eventually('cli-node initialised', async () => {
      const n = (await api.request('GET', '/api/v1/nodes/cli-node')).json;
      return n.spec.providerID ? n : undefined;
    }, 60_000);
    assert.equal(node.spec.providerID, `local://${instance.id}`);
    assert.equal(node.spec.taints, undefined);
    assert.ok((await api.kubectlOk(['get', 'lease', 'cloud-controller-manager', '-n', 'kube-system', '-o', 'jsonpath={.spec.holderIdentity}'])).length > 0);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await cloud.close();
    await api.stop();
  }
});
