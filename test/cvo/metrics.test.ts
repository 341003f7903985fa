// The CVO's metrics as OpenShift's CVO exports them (pkg/cvo/metrics.go): table tests over
// constructed ClusterVersion and ClusterOperator objects, asserting the exact series text of the
// registry — name="version" for the CVO itself, NoAvailableCondition, Unknown conditions left out,
// the cluster_version types, capabilities, the installer, the retrieval timestamp and the
// conditional updates' Recommended conditions and whether each risk applies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { createCvoMetrics, type CvoMetricsSource } from '../../src/cvo/metrics.js';

const OLD = 'bosun.local/release@sha256:' + 'a'.repeat(64);
const NEW = 'bosun.local/release@sha256:' + 'b'.repeat(64);
const at = (s: number) => new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Status = NonNullable<api.ClusterVersion['status']>;
type Conditions = Status['conditions'];

function clusterVersion(status: Partial<Status>, spec: Partial<NonNullable<api.ClusterVersion['spec']>> = {}): api.ClusterVersion {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterVersion',
    metadata: { name: 'version', creationTimestamp: at(100) },
    spec: { clusterID: 'c', ...spec },
    status: { availableUpdates: null, desired: { version: '1.0.0', image: OLD }, observedGeneration: 1, versionHash: '', ...status } as Status,
  } as api.ClusterVersion;
}

function operator(name: string, conditions: { type: string; status: string; reason?: string }[], version?: string): api.ClusterOperator {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterOperator',
    metadata: { name },
    status: { conditions: conditions.map((c) => ({ ...c, lastTransitionTime: at(200) })), versions: version ? [{ name: 'operator', version }] : [] },
  } as unknown as api.ClusterOperator;
}

const cond = (type: string, status: string, reason: string, time = 300) => ({ type, status, reason, message: '', lastTransitionTime: at(time) }) as unknown as NonNullable<Conditions>[number];

const completed = [{ state: 'Completed', startedTime: at(100), completionTime: at(150), version: '1.0.0', image: OLD, verified: false }] as Status['history'];

/** The series of `name` in the registry's text, sorted. */
async function series(source: Partial<CvoMetricsSource>, name: string): Promise<string[]> {
  const metrics = createCvoMetrics({ clusterVersion: () => undefined, clusterOperators: () => [], lastPayloadApplied: () => undefined, ...source });
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).sort();
}

const cases: { name: string; source: Partial<CvoMetricsSource>; metric: string; want: string[] }[] = [
  {
    name: 'the CVO itself is name="version", from its Available condition and the last completed version',
    source: { clusterVersion: () => clusterVersion({ history: completed, conditions: [cond('Available', 'True', '')] }) },
    metric: 'cluster_operator_up',
    want: ['cluster_operator_up{name="version",version="1.0.0",reason=""} 1'],
  },
  {
    name: 'a ClusterVersion without Available: NoAvailableCondition',
    source: { clusterVersion: () => clusterVersion({ history: completed, conditions: [cond('Failing', 'False', '')] }) },
    metric: 'cluster_operator_up',
    want: ['cluster_operator_up{name="version",version="1.0.0",reason="NoAvailableCondition"} 0'],
  },
  {
    name: 'operators: Available True/False/Unknown/none, the operator version',
    source: {
      clusterOperators: () => [
        operator('alpha', [{ type: 'Available', status: 'True', reason: 'AsExpected' }], '1.0.0'),
        operator('beta', [{ type: 'Available', status: 'False', reason: 'Down' }], '1.0.0'),
        operator('gamma', [{ type: 'Available', status: 'Unknown', reason: 'NoData' }]),
        operator('delta', [{ type: 'Degraded', status: 'False', reason: 'AsExpected' }], '2.0'),
      ],
    },
    metric: 'cluster_operator_up',
    want: [
      'cluster_operator_up{name="alpha",version="1.0.0",reason="AsExpected"} 1',
      'cluster_operator_up{name="beta",version="1.0.0",reason="Down"} 0',
      'cluster_operator_up{name="delta",version="2.0",reason="NoAvailableCondition"} 0',
      'cluster_operator_up{name="gamma",version="",reason="NoData"} 0',
    ].sort(),
  },
  {
    name: 'conditions: 1/0, Unknown left out, the ClusterVersion under name="version"',
    source: {
      clusterVersion: () =>
        clusterVersion({
          history: completed,
          conditions: [
            cond('Available', 'True', ''), cond('Failing', 'False', ''), cond('Progressing', 'False', ''), cond('RetrievedUpdates', 'False', 'NoUpstream'),
            cond('ReleaseAccepted', 'True', 'PayloadLoaded'), cond('Upgradeable', 'Unknown', 'Unknown'),
          ],
        }),
      clusterOperators: () => [operator('alpha', [{ type: 'Available', status: 'True', reason: 'AsExpected' }, { type: 'Degraded', status: 'Unknown', reason: 'X' }, { type: 'Upgradeable', status: 'False', reason: 'Pinned' }])],
    },
    metric: 'cluster_operator_conditions',
    want: [
      'cluster_operator_conditions{name="alpha",condition="Available",reason="AsExpected"} 1',
      'cluster_operator_conditions{name="alpha",condition="Upgradeable",reason="Pinned"} 0',
      'cluster_operator_conditions{name="version",condition="Available",reason=""} 1',
      'cluster_operator_conditions{name="version",condition="Failing",reason=""} 0',
      'cluster_operator_conditions{name="version",condition="Progressing",reason=""} 0',
      'cluster_operator_conditions{name="version",condition="ReleaseAccepted",reason="PayloadLoaded"} 1',
      'cluster_operator_conditions{name="version",condition="RetrievedUpdates",reason="NoUpstream"} 0',
    ].sort(),
  },
  {
    name: 'cluster_version while installing: initial, cluster (no from_version), current',
    source: {
      clusterVersion: () => clusterVersion({ history: [{ state: 'Partial', startedTime: at(110), completionTime: null, version: '1.0.0', image: OLD, verified: false }] as Status['history'] }),
      currentRelease: () => ({ version: '1.0.0', image: OLD, created: 50_000 }),
    },
    metric: 'cluster_version',
    want: [
      `cluster_version{type="cluster",version="1.0.0",image="${OLD}",from_version=""} 100`,
      `cluster_version{type="current",version="1.0.0",image="${OLD}",from_version=""} 50`,
      `cluster_version{type="initial",version="1.0.0",image="${OLD}",from_version=""} 100`,
      `cluster_version{type="updating",version="1.0.0",image="${OLD}",from_version=""} 110`,
    ].sort(),
  },
  {
    name: 'cluster_version mid-update and failing: completed, desired, failure, updating',
    source: {
      clusterVersion: () =>
        clusterVersion(
          {
            history: [
              { state: 'Partial', startedTime: at(400), completionTime: null, version: '1.0.1', image: NEW, verified: false },
              { state: 'Completed', startedTime: at(300), completionTime: at(350), version: '1.0.0', image: OLD, verified: false },
              { state: 'Completed', startedTime: at(100), completionTime: at(150), version: '0.9.0', image: 'old', verified: false },
            ] as Status['history'],
            conditions: [cond('Failing', 'True', 'ClusterOperatorDegraded', 450)],
          },
          { desiredUpdate: { version: '1.0.1', image: NEW } },
        ),
      currentRelease: () => ({ version: '1.0.0', image: OLD }),
    },
    metric: 'cluster_version',
    want: [
      `cluster_version{type="cluster",version="1.0.0",image="${OLD}",from_version="0.9.0"} 100`,
      `cluster_version{type="completed",version="1.0.0",image="${OLD}",from_version="0.9.0"} 350`,
      `cluster_version{type="current",version="1.0.0",image="${OLD}",from_version="1.0.0"} 0`,
      `cluster_version{type="desired",version="1.0.1",image="${NEW}",from_version="1.0.0"} 450`,
      `cluster_version{type="failure",version="1.0.1",image="${NEW}",from_version="1.0.0"} 450`,
      'cluster_version{type="initial",version="0.9.0",image="old",from_version=""} 100',
      `cluster_version{type="updating",version="1.0.1",image="${NEW}",from_version="1.0.0"} 400`,
    ].sort(),
  },
  {
    name: 'available updates by upstream and channel',
    source: { clusterVersion: () => clusterVersion({ availableUpdates: [{ version: '1.0.1', image: NEW }] }, { upstream: 'http://127.0.0.1:9/graph', channel: 'stable-1' }) },
    metric: 'cluster_version_available_updates',
    want: ['cluster_version_available_updates{upstream="http://127.0.0.1:9/graph",channel="stable-1"} 1'],
  },
  {
    name: 'no upstream, no updates, not retrieved: no series',
    source: { clusterVersion: () => clusterVersion({}) },
    metric: 'cluster_version_available_updates',
    want: [],
  },
  {
    name: 'capabilities: enabled 1, known but not enabled 0',
    source: { clusterVersion: () => clusterVersion({ capabilities: { enabledCapabilities: ['Ingress'], knownCapabilities: ['Console', 'Ingress'] } as Status['capabilities'] }) },
    metric: 'cluster_version_capability',
    want: ['cluster_version_capability{name="Console"} 0', 'cluster_version_capability{name="Ingress"} 1'],
  },
  {
    name: 'the installer from openshift-install',
    source: {
      clusterVersion: () => clusterVersion({}),
      configMap: (name) => (name === 'openshift-install' ? ({ metadata: { name }, data: { version: 'v4.16.0', invoker: 'bosun' } } as api.ConfigMap) : undefined),
    },
    metric: 'cluster_installer',
    want: ['cluster_installer{type="openshift-install",version="v4.16.0",invoker="bosun"} 1'],
  },
  {
    name: 'the installer from openshift-install-manifests, fields missing',
    source: { clusterVersion: () => clusterVersion({}), configMap: (name) => (name === 'openshift-install-manifests' ? ({ metadata: { name }, data: {} } as api.ConfigMap) : undefined) },
    metric: 'cluster_installer',
    want: ['cluster_installer{type="other",version="<missing>",invoker="<missing>"} 1'],
  },
  {
    name: 'no installer ConfigMap',
    source: { clusterVersion: () => clusterVersion({}), configMap: () => undefined },
    metric: 'cluster_installer',
    want: ['cluster_installer{type="",version="",invoker=""} 1'],
  },
  {
    name: 'the last retrieval of updates',
    source: { lastUpdateRetrieval: () => 1_700_000_000_500 },
    metric: 'cluster_version_operator_update_retrieval_timestamp_seconds',
    want: ['cluster_version_operator_update_retrieval_timestamp_seconds{name=""} 1700000000'],
  },
  {
    name: 'payload applied and pending',
    source: { lastPayloadApplied: () => ({ version: '1.0.0', applied: 7, pending: 3 }) },
    metric: 'cluster_version_payload',
    want: ['cluster_version_payload{type="applied",version="1.0.0"} 7', 'cluster_version_payload{type="pending",version="1.0.0"} 3'],
  },
  {
    name: 'conditional updates: the Recommended condition only',
    source: {
      clusterVersion: () =>
        clusterVersion({
          conditionalUpdates: [
            {
              release: { version: '1.0.2', image: NEW },
              risks: [{ name: 'R', url: 'https://example.com', message: 'm', matchingRules: [{ type: 'Always' }] }],
              conditions: [cond('Recommended', 'False', 'R', 500), cond('Other', 'True', 'X', 600)],
            },
          ] as Status['conditionalUpdates'],
        }),
    },
    metric: 'cluster_version_conditional_update_condition_seconds',
    want: ['cluster_version_conditional_update_condition_seconds{version="1.0.2",condition="Recommended",status="False",reason="R"} 500'],
  },
  {
    name: 'whether each risk applies: 1 Match, 0 NotMatch, -1 EvaluationFailed',
    source: {
      clusterVersion: () => clusterVersion({}),
      riskConditions: () => [
        { risk: 'A', status: 'True', reason: 'Match' },
        { risk: 'B', status: 'False', reason: 'NotMatch' },
        { risk: 'C', status: 'Unknown', reason: 'EvaluationFailed' },
      ],
    },
    metric: 'cluster_version_risk_conditions',
    want: [
      'cluster_version_risk_conditions{condition="Applies",risk="A",reason="Match"} 1',
      'cluster_version_risk_conditions{condition="Applies",risk="B",reason="NotMatch"} 0',
      'cluster_version_risk_conditions{condition="Applies",risk="C",reason="EvaluationFailed"} -1',
    ],
  },
];

for (const c of cases) {
  test(`CVO metrics: ${c.name}`, async () => {
    assert.deepEqual(await series(c.source, c.metric), c.want);
  });
}

test('CVO metrics: payload errors are counted up by version', async () => {
  const metrics = createCvoMetrics({ clusterVersion: () => undefined, clusterOperators: () => [], lastPayloadApplied: () => undefined });
  metrics.payloadErrors.inc({ version: '1.0.0' }, 2);
  metrics.payloadErrors.inc({ version: '1.0.0' }, 1);
  assert.match(await metrics.registry.metrics(), /^cluster_operator_payload_errors\{version="1\.0\.0"\} 3$/m);
});

test('CVO metrics: nothing about the cluster without a ClusterVersion (a replica that does not lead)', async () => {
  const metrics = createCvoMetrics({ clusterVersion: () => undefined, clusterOperators: () => [], lastPayloadApplied: () => undefined, configMap: () => undefined });
  const series = (await metrics.registry.metrics()).split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(series, []);
});
