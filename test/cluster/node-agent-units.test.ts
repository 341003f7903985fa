// The node agent's pure pieces, table-driven: the kubelet unit and config as read from the root,
// quantities and allocatable, pod phase (init containers too) and back-off, environment expansion and the downward API,
// images, CRI log lines, Service endpoints and proxied addresses, and exec probes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, parseNodeLabels, parseTaints, parseUnitFlags } from '../../src/cluster/node-agent/kubelet-files.js';
import { allocatableOf, parseQuantity, type NodeFacts } from '../../src/cluster/node-agent/node-object.js';
import { crashBackoffMs, podPhase, podStatus, terminatedState, type ContainerRecord } from '../../src/cluster/node-agent/pod-status.js';
import { allocatePodIP, componentArgv, containerKind, expand, fieldRefValue, podCidrFor } from '../../src/cluster/node-agent/pod-spec.js';
import { formatCriLines } from '../../src/cluster/node-agent/logs-server.js';
import { endpointsFor, endpointsFromPods, endpointsFromSlices, healthCheckAnswer, proxiedAddresses } from '../../src/cluster/node-agent/service-proxy.js';
import { execSucceeds, healthService, probeOnce } from '../../src/cluster/node-agent/probes.js';
import * as grpc from '@grpc/grpc-js';
import { freePort } from '../../src/common/listen.js';
import type * as api from '../../src/api/index.js';

test('unit flags: continuation lines, both flag forms, quotes, and a drop-in\'s ExecStart replacing the unit\'s', () => {
  const unit = '[Service]\nExecStart=/usr/bin/kubelet \\\n    --config=/etc/kubernetes/kubelet.conf \\\n    --node-labels "a=b,c" \\\n    --v=${LEVEL}\n';
  const flags = parseUnitFlags(unit);
  assert.equal(flags.get('config'), '/etc/kubernetes/kubelet.conf');
  assert.equal(flags.get('node-labels'), 'a=b,c');
  assert.equal(flags.get('v'), '${LEVEL}');
  const dropped = parseUnitFlags(unit, ['[Service]\nExecStart=\nExecStart=/usr/bin/kubelet --cloud-provider=external\n']);
  assert.deepEqual([...dropped.entries()], [['cloud-provider', 'external']]);
});

test('node labels, taints and durations as the kubelet parses them', () => {
  assert.deepEqual(parseNodeLabels('node-role.kubernetes.io/worker,topology/x=y, ,z='), { 'node-role.kubernetes.io/worker': '', 'topology/x': 'y', z: '' });
  assert.deepEqual(parseTaints('a=b:NoSchedule,c:NoExecute'), [{ key: 'a', value: 'b', effect: 'NoSchedule' }, { key: 'c', effect: 'NoExecute' }]);
  for (const [text, ms] of [['10s', 10_000], ['5m0s', 300_000], ['1h30m', 5_400_000], ['250ms', 250], ['soon', 42], ['', 42]] as const) {
    assert.equal(parseDuration(text, 42), ms, text);
  }
});

test('quantities and allocatable: capacity less reservations and the hard eviction threshold', () => {
  for (const [q, v] of [['500m', 0.5], ['2', 2], ['1Gi', 1024 ** 3], ['100Mi', 100 * 1024 ** 2], ['1k', 1000], ['x', 0]] as const) assert.equal(parseQuantity(q), v, q);
  const facts = { instanceType: { name: 'local.medium', cpu: 4, memoryMiB: 8192 }, config: { systemReserved: { cpu: '500m', memory: '1Gi' }, kubeReserved: { cpu: '250m' }, evictionHard: { 'memory.available': '200Mi' } } } as unknown as NodeFacts;
  const a = allocatableOf(facts);
  assert.equal(a.cpu, '3250m');
  assert.equal(a.memory, `${(8192 - 1024 - 200) * 1024}Ki`);
  assert.equal(a.pods, '110');
});

const record = (state: ContainerRecord['state'], restartCount = 0): ContainerRecord => ({ name: 'c', image: 'i', containerID: '', restartCount, state, lastState: {}, ready: false, started: false });
const exited = (exitCode: number) => ({ terminated: { exitCode } });

test('pod phase from container states and the restart policy', () => {
  const cases: Array<[string | undefined, ContainerRecord[], string]> = [
    [undefined, [record({ waiting: { reason: 'ContainerCreating' } })], 'Pending'],
    [undefined, [record({ running: {} })], 'Running'],
    [undefined, [record({ waiting: { reason: 'CrashLoopBackOff' } }, 3)], 'Running'],
    ['Always', [record(exited(0))], 'Running'],
    ['Never', [record(exited(0))], 'Succeeded'],
    ['Never', [record(exited(0)), record(exited(2))], 'Failed'],
    ['OnFailure', [record(exited(0))], 'Succeeded'],
    ['OnFailure', [record(exited(1))], 'Running'],
    ['Never', [record(exited(0)), record({ running: {} })], 'Running'],
  ];
  for (const [policy, containers, phase] of cases) assert.equal(podPhase({ spec: { restartPolicy: policy } } as api.Pod, containers), phase, `${policy} ${JSON.stringify(containers.map((c) => c.state))}`);
});

test('init containers: Pending until each has completed (a sidecar once started), Failed when one fails under Never; Initialized and initContainerStatuses', () => {
  const init = (state: ContainerRecord['state'], extra: Partial<ContainerRecord> = {}): ContainerRecord => ({ ...record(state), name: extra.name ?? 'init', ...extra });
  const waiting = record({ waiting: { reason: 'PodInitializing' } });
  const cases: Array<[string, string | undefined, ContainerRecord[], ContainerRecord[], string]> = [
    ['first init running', 'Always', [init({ running: {} }), init({ waiting: { reason: 'PodInitializing' } })], [waiting], 'Pending'],
    ['init crashed, retried (Always)', 'Always', [init(exited(1))], [waiting], 'Pending'],
    ['init crashed, retried (OnFailure)', 'OnFailure', [init({ waiting: { reason: 'CrashLoopBackOff' } }, { restartCount: 2 })], [waiting], 'Pending'],
    ['init failed under Never', 'Never', [init(exited(1))], [waiting], 'Failed'],
    ['inits done, app running', 'Always', [init(exited(0)), init(exited(0))], [record({ running: {} })], 'Running'],
    ['a sidecar started, app running', 'Always', [init({ running: {} }, { restartable: true, started: true })], [record({ running: {} })], 'Running'],
    ['a sidecar not yet started', 'Always', [init({ waiting: { reason: 'ContainerCreating' } }, { restartable: true })], [waiting], 'Pending'],
  ];
  for (const [name, policy, inits, containers, phase] of cases) assert.equal(podPhase({ spec: { restartPolicy: policy } } as api.Pod, containers, inits), phase, name);
  const status = podStatus({ spec: { restartPolicy: 'Always', containers: [{ name: 'c' }] } } as api.Pod, [waiting], { podIP: '127.1.1.2', hostIP: '127.0.1.1', startTime: 'T' }, 'T', [init(exited(0), { name: 'a' }), init({ running: {} }, { name: 'b' })]);
  assert.deepEqual(status.initContainerStatuses!.map((s) => [s.name, Object.keys(s.state!)[0]]), [['a', 'terminated'], ['b', 'running']]);
  const initialized = status.conditions.find((c) => c.type === 'Initialized')!;
  assert.deepEqual([initialized.status, initialized.reason, initialized.message], ['False', 'ContainersNotInitialized', 'containers with incomplete status: [b]']);
  assert.equal(podStatus({ spec: { containers: [{ name: 'c' }] } } as api.Pod, [record({ running: {} })], { podIP: 'p', hostIP: 'h', startTime: 'T' }, 'T').initContainerStatuses, undefined, 'no init containers, no initContainerStatuses');
  // A pod stopped because it is being deleted ends in a terminal phase, whatever its restart policy.
  const terminal = (...codes: number[]) => podStatus({ spec: { restartPolicy: 'Always' } } as api.Pod, codes.map((code) => record(exited(code))), { podIP: 'p', hostIP: 'h', startTime: 'T' }, 'T', [], true).phase;
  assert.deepEqual([terminal(0), terminal(0, 143), terminal(137)], ['Succeeded', 'Failed', 'Failed']);
});

test('a container\'s terminated state: a signal by its number, as the API\'s ContainerStateTerminated.signal (an int32)', () => {
  assert.deepEqual(terminatedState({ exitCode: 137, signal: 'SIGKILL', finishedAt: 'T2' }, 'T1', 'bosun://c', false),
    { exitCode: 137, signal: 9, reason: 'Error', startedAt: 'T1', finishedAt: 'T2', containerID: 'bosun://c' });
  assert.deepEqual(terminatedState({ exitCode: 143, signal: 'SIGTERM', finishedAt: 'T2' }, 'T1', 'bosun://c', true).signal, 15);
  assert.deepEqual(terminatedState({ exitCode: 0, finishedAt: 'T2' }, 'T1', 'bosun://c', false), { exitCode: 0, reason: 'Completed', startedAt: 'T1', finishedAt: 'T2', containerID: 'bosun://c' });
  assert.equal(terminatedState({ exitCode: 1, finishedAt: 'T2' }, 'T1', 'bosun://c', true).message, 'Container failed liveness probe');
  assert.deepEqual(terminatedState({ exitCode: 128, error: 'spawn ENOENT', finishedAt: 'T2' }, 'T1', 'bosun://c', false).reason, 'StartError');
});

test('crash-loop back-off: 10 s doubling, capped at 5 min', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => crashBackoffMs(n, 10_000, 300_000) / 1000), [10, 20, 40, 80, 160, 300, 300, 300]);
});

test('environment: $(VAR) expansion, $$ escapes, unknown references kept; the downward API', () => {
  assert.equal(expand('a-$(X)-$(Y)-$$(X)', { X: '1' }), 'a-1-$(Y)-$(X)');
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { app: 'x' } }, spec: { nodeName: 'n' } } as unknown as api.Pod;
  const table: Array<[string, string]> = [['metadata.name', 'p'], ['metadata.namespace', 'ns'], ['metadata.uid', 'u'], ['spec.nodeName', 'n'], ['spec.serviceAccountName', 'default'], ['status.podIP', '127.1.3.7'], ['status.hostIP', '127.0.1.3'], ["metadata.labels['app']", 'x']];
  for (const [path, value] of table) assert.equal(fieldRefValue(pod, path, '127.1.3.7', '127.0.1.3'), value, path);
});

test('images and command lines; pod CIDR and IPs', () => {
  assert.equal(containerKind('bosun.local/echo'), 'echo');
  assert.equal(containerKind('bosun.local/echo:1.0@sha256:abc'), 'echo');
  assert.equal(containerKind('bosun.local/cluster-version-operator:1.0.0'), 'component');
  assert.equal(containerKind('quay.io/openshift/echo'), 'simulated');
  assert.deepEqual(componentArgv({ command: ['/usr/bin/bosun'], args: ['cluster-version-operator', '--v=2'] }), ['cluster-version-operator', '--v=2']);
  assert.deepEqual(componentArgv({ args: ['machine-config-operator'] }), ['machine-config-operator']);
  assert.equal(podCidrFor('127.0.1.12'), '127.1.12.0/24');
  // A KubeletConfiguration podCIDR: a /24 is the node's own, a wider range the cluster's (the machine's /24 of it).
  assert.equal(podCidrFor('127.0.1.12', '127.70.0.0/16'), '127.70.12.0/24');
  assert.equal(podCidrFor('127.0.1.12', '127.64.0.0/12'), '127.64.12.0/24');
  assert.equal(podCidrFor('127.0.1.12', '127.70.9.0/24'), '127.70.9.0/24');
  assert.equal(podCidrFor('127.0.1.12', 'not a network'), '127.1.12.0/24');
  assert.equal(allocatePodIP('127.1.12.0/24', new Set(['127.1.12.2', '127.1.12.3'])), '127.1.12.4');
  assert.equal(allocatePodIP('127.1.12.0/24', new Set(Array.from({ length: 253 }, (_, i) => `127.1.12.${i + 2}`))), undefined);
});

test('CRI log lines: full and partial lines, with and without timestamps', () => {
  const text = '2026-01-01T00:00:00.000000000Z stdout F hello\n2026-01-01T00:00:01.000000000Z stderr P par\n2026-01-01T00:00:01.000000000Z stderr F tial\nnot a log line\n';
  assert.deepEqual(formatCriLines(text, false), ['hello\n', 'par', 'tial\n']);
  assert.deepEqual(formatCriLines(text, true)[0], '2026-01-01T00:00:00.000000000Z hello\n');
});

test('Service endpoints from Ready pods (named target ports) and from EndpointSlices', () => {
  const svc: api.Service = { metadata: { name: 's', namespace: 'ns' }, spec: { selector: { app: 'a' } } };
  const pod = (name: string, ready: boolean, ns = 'ns', labels = { app: 'a' }) => ({
    metadata: { name, namespace: ns, labels }, spec: { containers: [{ ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: { podIP: `127.1.1.${name.length}`, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  } as unknown as api.Pod);
  const pods = [pod('a', true), pod('bb', false), pod('ccc', true, 'other'), pod('dddd', true, 'ns', { app: 'z' } as { app: string })];
  assert.deepEqual(endpointsFromPods(svc, { port: 80, targetPort: 'http' }, pods), [{ ip: '127.1.1.1', port: 8080 }]);
  assert.deepEqual(endpointsFromPods(svc, { port: 80, targetPort: 9000 }, pods), [{ ip: '127.1.1.1', port: 9000 }]);
  const slices = [{ metadata: { namespace: 'ns', labels: { 'kubernetes.io/service-name': 's' } }, ports: [{ name: 'web', port: 8080 }], endpoints: [{ addresses: ['127.1.2.2'], conditions: { ready: true } }, { addresses: ['127.1.2.3'], conditions: { ready: false } }] } as unknown as api.EndpointSlice];
  assert.deepEqual(endpointsFromSlices(svc, { name: 'web', port: 80 }, slices), [{ ip: '127.1.2.2', port: 8080 }]);
  assert.deepEqual(endpointsFromSlices(svc, { name: 'other', port: 80 }, slices), []);
});

test('exec probes: the command exits 0 in the container\'s environment and directory within the timeout', async () => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', MODE: 'serving' };
  const cases: Array<[string, string[], number, boolean]> = [
    ['exit 0', ['sh', '-c', 'exit 0'], 1000, true],
    ['non-zero exit', ['sh', '-c', 'exit 3'], 1000, false],
    ['the container\'s env', ['sh', '-c', 'test "$MODE" = serving'], 1000, true],
    ['the container\'s directory', ['sh', '-c', 'test "$(pwd)" = /tmp'], 1000, true],
    ['past the timeout', ['sleep', '5'], 200, false],
    ['a command that cannot start', ['/nonexistent/probe'], 1000, false],
    ['no command', [], 1000, false],
  ];
  for (const [name, command, timeoutMs, want] of cases) {
    const started = Date.now();
    assert.equal(await execSucceeds(command, env, '/tmp', timeoutMs), want, name);
    assert.ok(Date.now() - started < 2000, `${name}: bounded by the timeout`);
  }
  const target = { container: { name: 'c' }, podIP: '127.0.0.1', env, cwd: '/tmp' };
  assert.equal(await probeOnce({ exec: { command: ['sh', '-c', 'test "$MODE" = serving'] } }, target), true);
  assert.equal(await probeOnce({ exec: { command: ['sh', '-c', 'test "$MODE" = idle'] } }, target), false);
  assert.equal(await probeOnce({}, target), false, 'a probe without a handler fails');
});

test('grpc probes: the gRPC health checking protocol\'s Check on the pod IP, SERVING within the timeout', async () => {
  const statuses: Record<string, string> = { '': 'SERVING', 'db': 'NOT_SERVING' };
  let slow = false;
  const server = new grpc.Server();
  server.addService(await healthService(), {
    Check(call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<{ status: string }>) {
      const status = statuses[call.request.service];
      const answer = () => (status ? callback(null, { status }) : callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' }));
      if (slow) setTimeout(answer, 1500); else answer();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  try {
    const target = { container: { name: 'c' }, podIP: '127.0.0.1' };
    assert.equal(await probeOnce({ grpc: { port } }, target), true, 'the server as a whole SERVING');
    assert.equal(await probeOnce({ grpc: { port, service: 'db' } }, target), false, 'NOT_SERVING');
    assert.equal(await probeOnce({ grpc: { port, service: 'nosuch' } }, target), false, 'NOT_FOUND');
    slow = true;
    const started = Date.now();
    assert.equal(await probeOnce({ grpc: { port }, timeoutSeconds: 1 }, target), false, 'past the timeout');
    assert.ok(Date.now() - started < 1400, 'bounded by the timeout');
    slow = false;
    assert.equal(await probeOnce({ grpc: { port: 0 } }, target), false, 'no port');
  } finally {
    server.forceShutdown();
  }
  const free = await freePort();
  assert.equal(await probeOnce({ grpc: { port: free } }, { container: { name: 'c' }, podIP: '127.0.0.1' }), false, 'nothing listening');
});

test('proxied addresses: NodePorts on the node IP, every TCP Service port on a loopback cluster IP, nothing else', () => {
  const svc = (name: string, spec: api.Service['spec']): api.Service => ({ metadata: { name, namespace: 'default' }, spec });
  const services = [
    svc('web', { type: 'NodePort', clusterIP: '127.30.0.5', clusterIPs: ['127.30.0.5'], ports: [{ name: 'http', port: 80, nodePort: 30080 }, { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 }] }),
    svc('internal', { clusterIP: '127.30.0.6', ports: [{ port: 8080 }] }),
    svc('routed', { type: 'LoadBalancer', clusterIP: '172.30.0.7', ports: [{ port: 443, nodePort: 30443 }] }),
    svc('local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 31000, clusterIP: '127.30.0.8', ports: [{ port: 443, nodePort: 30444 }] }),
    svc('headless', { clusterIP: 'None', ports: [{ port: 9000 }] }),
    svc('alias', { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 80 }] }),
  ];
  assert.deepEqual(proxiedAddresses(services, '127.0.1.4').map((a) => `${a.kind} ${a.ip}:${a.port} ${a.service}/${a.portName}`), [
    'nodePort 127.0.1.4:30080 default/web/http',
    'clusterIP 127.30.0.5:80 default/web/http',
    'clusterIP 127.30.0.6:8080 default/internal/',
    'nodePort 127.0.1.4:30443 default/routed/',
    'nodePort 127.0.1.4:30444 default/local/',
    'clusterIP 127.30.0.8:443 default/local/',
    'healthCheck 127.0.1.4:31000 default/local/',
  ]);
});

test('externalTrafficPolicy Local: NodePorts to the node\'s own endpoints only, cluster IPs to all; the health check counts ready local endpoints', () => {
  const svc = (policy: string) => ({ metadata: { name: 's', namespace: 'ns' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: policy } });
  const endpoints = [{ ip: '127.1.1.2', port: 80, nodeName: 'a' }, { ip: '127.1.1.3', port: 80, nodeName: 'a' }, { ip: '127.1.2.2', port: 80, nodeName: 'b' }, { ip: '127.1.3.2', port: 80 }];
  const ips = (list: Array<{ ip: string }>) => list.map((e) => e.ip);
  assert.deepEqual(ips(endpointsFor('nodePort', svc('Local'), endpoints, 'a')), ['127.1.1.2', '127.1.1.3']);
  assert.deepEqual(ips(endpointsFor('nodePort', svc('Local'), endpoints, 'c')), []);
  assert.deepEqual(ips(endpointsFor('nodePort', svc('Cluster'), endpoints, 'c')), ips(endpoints));
  assert.deepEqual(ips(endpointsFor('clusterIP', svc('Local'), endpoints, 'c')), ips(endpoints));
  // One endpoint per address, whatever the number of ports.
  const twoPorts = [...endpoints, { ip: '127.1.1.2', port: 443, nodeName: 'a' }];
  assert.deepEqual(healthCheckAnswer(svc('Local'), twoPorts, 'a'), { status: 200, body: { service: { namespace: 'ns', name: 's' }, localEndpoints: 2, serviceProxyHealthy: true } });
  assert.deepEqual(healthCheckAnswer(svc('Local'), twoPorts, 'c').status, 503);
  assert.deepEqual(healthCheckAnswer(svc('Local'), twoPorts, 'c').body.localEndpoints, 0);
});
