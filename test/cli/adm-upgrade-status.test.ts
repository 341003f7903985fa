// `bosun adm upgrade status` (src/views/upgrade-status/) against `oc adm upgrade status`: cluster
// states built as OpenShift's look mid-update (test/cli/upgrade-status-fixtures.ts), and the exact
// text oc prints for each — its assessment, estimate, wording, ordering, column alignment
// (trailing spaces included) and each --details view — computed by hand from oc's rules where
// it says what it checks. adm-upgrade-status-apiserver.test.ts reads the same states back from
// the embedded API server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Obj } from '../../src/kube/index.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { upgradeStatus, type ClusterState, type Details } from '../../src/views/upgrade-status/status.js';
import { fixed0, shortDuration, tabwrite } from '../../src/views/upgrade-status/format.js';
import { runBosun } from '../helpers/cli.js';
import { NOW, ago, clusterOperator, clusterVersion, mostlyUpdated, overIncomplete, pausedWorkers, stalled, workersRolling } from './upgrade-status-fixtures.js';

const lines = (...l: string[]) => `${l.join('\n')}\n`;

const cases: Array<{ name: string; state: () => ClusterState; details: Details; expected: string }> = [
  {
    // Stalled, not Degraded: 54m49s to the last progress (machine-config starting, the last one
    // left) at 32/33 along oc's curve (0.6976) makes 4714 s in all, 2456 s less than the 7170 s
    // spent; /1.2 is 2046 s, past -10m, so N/A with the estimate 7170-2046 s = 1h25m. The degraded
    // operators are API Availability errors (degraded > 40m, unavailable > 20m), newest first,
    // then the failing ClusterVersion; the non-payload operator and the updated `network` that is
    // still Progressing are not updating; the operator table waits for --details.
    name: 'a stalled update whose operators are degraded, as oc prints it',
    state: stalled, details: 'none',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Stalled',
      'Target Version:  4.14.1 (from 4.14.0)',
      'Updating:        machine-config',
      'Completion:      97% (32 operators updated, 1 updating, 0 waiting)',
      'Duration:        2h (Est. Time Remaining: N/A; estimate duration was 1h25m)',
      'Operator Health: 30 Healthy, 1 Unavailable, 2 Available but degraded',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.14.0    ?     ',
      'master-1   Outdated     Pending   4.14.0    ?     ',
      'master-2   Outdated     Pending   4.14.0    ?     ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Pending      0% (0/2)     2 Available, 0 Progressing, 0 Draining',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'worker-0   Outdated     Pending   4.14.0    ?     ',
      'worker-1   Outdated     Pending   4.14.0    ?     ',
      '',
      '= Update Health =',
      'SINCE     LEVEL     IMPACT             MESSAGE',
      '58m18s    Error     API Availability   Cluster Operator kube-apiserver is degraded (NodeController_MasterNodesReady)',
      '58m38s    Error     API Availability   Cluster Operator etcd is degraded (NodeController_MasterNodesReady)',
      '1h0m17s   Error     API Availability   Cluster Operator control-plane-machine-set is unavailable (UnavailableReplicas)',
      'now       Warning   Update Stalled     Cluster Version version is failing to proceed with the update (ClusterOperatorsDegraded)',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
  {
    name: 'a stalled update with --details=all: the updating operators and each insight in full',
    state: stalled, details: 'all',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Stalled',
      'Target Version:  4.14.1 (from 4.14.0)',
      'Updating:        machine-config',
      'Completion:      97% (32 operators updated, 1 updating, 0 waiting)',
      'Duration:        2h (Est. Time Remaining: N/A; estimate duration was 1h25m)',
      'Operator Health: 30 Healthy, 1 Unavailable, 2 Available but degraded',
      '',
      'Updating Cluster Operators',
      'NAME             SINCE     REASON   MESSAGE',
      'machine-config   1h4m41s   -        Working towards 4.14.1',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.14.0    ?     ',
      'master-1   Outdated     Pending   4.14.0    ?     ',
      'master-2   Outdated     Pending   4.14.0    ?     ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Pending      0% (0/2)     2 Available, 0 Progressing, 0 Draining',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'worker-0   Outdated     Pending   4.14.0    ?     ',
      'worker-1   Outdated     Pending   4.14.0    ?     ',
      '',
      '= Update Health =',
      'Message: Cluster Operator kube-apiserver is degraded (NodeController_MasterNodesReady)',
      '  Since:       58m18s',
      '  Level:       Error',
      '  Impact:      API Availability',
      '  Reference:   https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md',
      '  Resources:',
      '    clusteroperators.config.openshift.io: kube-apiserver',
      '  Description: NodeControllerDegraded: The master nodes not ready: node "master-1" not ready since 2026-03-02 11:01:42 +0000 UTC because KubeletNotReady',
      '',
      'Message: Cluster Operator etcd is degraded (NodeController_MasterNodesReady)',
      '  Since:       58m38s',
      '  Level:       Error',
      '  Impact:      API Availability',
      '  Reference:   https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md',
      '  Resources:',
      '    clusteroperators.config.openshift.io: etcd',
      '  Description: NodeControllerDegraded: The master nodes not ready: node "master-1" not ready since 2026-03-02 11:01:42 +0000 UTC because KubeletNotReady',
      '',
      'Message: Cluster Operator control-plane-machine-set is unavailable (UnavailableReplicas)',
      '  Since:       1h0m17s',
      '  Level:       Error',
      '  Impact:      API Availability',
      '  Reference:   https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md',
      '  Resources:',
      '    clusteroperators.config.openshift.io: control-plane-machine-set',
      '  Description: Missing 1 available replica(s)',
      '',
      'Message: Cluster Version version is failing to proceed with the update (ClusterOperatorsDegraded)',
      '  Since:       now',
      '  Level:       Warning',
      '  Impact:      Update Stalled',
      '  Reference:   https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md',
      '  Resources:',
      '    clusterversions.config.openshift.io: version',
      '  Description: Cluster operators etcd, kube-apiserver are degraded',
    ),
  },
  {
    // 30/33 = 90.9%: %.0f prints 91. Progress last seen 2m ago, 26m2s in, at 0.529 of the
    // curve: 2953 s in all, 1271 s left, x1.2 = 25m.
    name: 'completion rounds as %.0f does, and a healthy update proceeds well without a hint',
    state: mostlyUpdated, details: 'none',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  4.17.0 (from 4.16.0)',
      'Completion:      91% (30 operators updated, 0 updating, 3 waiting)',
      'Duration:        28m (Est. Time Remaining: 25m)',
      'Operator Health: 33 Healthy',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.16.0    ?     ',
      'master-1   Outdated     Pending   4.16.0    ?     ',
      'master-2   Outdated     Pending   4.16.0    ?     ',
      '',
      '= Update Health =',
      'SINCE   LEVEL   IMPACT   MESSAGE',
      '28m2s   Info    None     Update is proceeding well',
    ),
  },
  {
    // history[1] is Partial: "from incomplete", and a warning naming the last completed update.
    // Less than 5 minutes in, the estimate is the last completed update's 70 minutes, x1.2 less
    // the 89 s spent: 1h22m.
    name: 'an update started over an incomplete one',
    state: overIncomplete, details: 'none',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  4.15.0-ec.2 (from incomplete 4.14.1)',
      'Updating:        etcd, kube-apiserver',
      'Completion:      3% (1 operators updated, 2 updating, 30 waiting)',
      'Duration:        1m29s (Est. Time Remaining: 1h22m)',
      'Operator Health: 33 Healthy',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.14.1    ?     ',
      'master-1   Outdated     Pending   4.14.1    ?     ',
      'master-2   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Pending      0% (0/2)     2 Available, 0 Progressing, 0 Draining',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'worker-0   Outdated     Pending   4.14.1    ?     ',
      'worker-1   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Update Health =',
      'SINCE   LEVEL     IMPACT   MESSAGE',
      '1m29s   Warning   None     Previous update to 4.14.1 never completed, last complete update was 4.14.0-rc.7',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
  {
    name: '--details=operators adds the Updating Cluster Operators table (reason cut at 20, message lines kept)',
    state: overIncomplete, details: 'operators',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  4.15.0-ec.2 (from incomplete 4.14.1)',
      'Updating:        etcd, kube-apiserver',
      'Completion:      3% (1 operators updated, 2 updating, 30 waiting)',
      'Duration:        1m29s (Est. Time Remaining: 1h22m)',
      'Operator Health: 33 Healthy',
      '',
      'Updating Cluster Operators',
      'NAME             SINCE   REASON                 MESSAGE',
      'etcd             45s     NodeInstaller          NodeInstallerProgressing: 2 nodes are at revision 33; 1 node is at revision 34',
      'kube-apiserver   6m8s    NodeInstaller::St...   NodeInstallerProgressing: 3 nodes are at revision 274',
      '                                                StaticPodsProgressing: waiting for revision 276',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.14.1    ?     ',
      'master-1   Outdated     Pending   4.14.1    ?     ',
      'master-2   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Pending      0% (0/2)     2 Available, 0 Progressing, 0 Draining',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'worker-0   Outdated     Pending   4.14.1    ?     ',
      'worker-1   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Update Health =',
      'SINCE   LEVEL     IMPACT   MESSAGE',
      '1m29s   Warning   None     Previous update to 4.14.1 never completed, last complete update was 4.14.0-rc.7',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
  {
    name: '--details=all on an update started over an incomplete one',
    state: overIncomplete, details: 'all',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  4.15.0-ec.2 (from incomplete 4.14.1)',
      'Updating:        etcd, kube-apiserver',
      'Completion:      3% (1 operators updated, 2 updating, 30 waiting)',
      'Duration:        1m29s (Est. Time Remaining: 1h22m)',
      'Operator Health: 33 Healthy',
      '',
      'Updating Cluster Operators',
      'NAME             SINCE   REASON                 MESSAGE',
      'etcd             45s     NodeInstaller          NodeInstallerProgressing: 2 nodes are at revision 33; 1 node is at revision 34',
      'kube-apiserver   6m8s    NodeInstaller::St...   NodeInstallerProgressing: 3 nodes are at revision 274',
      '                                                StaticPodsProgressing: waiting for revision 276',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'master-0   Outdated     Pending   4.14.1    ?     ',
      'master-1   Outdated     Pending   4.14.1    ?     ',
      'master-2   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Pending      0% (0/2)     2 Available, 0 Progressing, 0 Draining',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE     VERSION   EST   MESSAGE',
      'worker-0   Outdated     Pending   4.14.1    ?     ',
      'worker-1   Outdated     Pending   4.14.1    ?     ',
      '',
      '= Update Health =',
      'Message: Previous update to 4.14.1 never completed, last complete update was 4.14.0-rc.7',
      '  Since:       1m29s',
      '  Level:       Warning',
      '  Impact:      None',
      '  Reference:   https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates',
      '  Resources:',
      '    clusterversions.config.openshift.io: version',
      '  Description: Current update to 4.15.0-ec.2 was initiated while the previous update to version 4.14.1 was still in progress',
    ),
  },
  {
    name: 'a paused worker pool: its nodes Excluded, and a warning that they will not be updated',
    state: pausedWorkers, details: 'none',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  1.0.1 (from 1.0.0)',
      'Updating:        machine-config',
      'Completion:      67% (2 operators updated, 1 updating, 0 waiting)',
      'Duration:        3m12s (Est. Time Remaining: 1h8m)',
      'Operator Health: 3 Healthy',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT    PHASE      VERSION   EST    MESSAGE',
      'master-0   Progressing   Draining   1.0.0     +10m   ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Excluded     0% (0/2)     2 Available, 0 Progressing, 0 Draining, 2 Excluded',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE    VERSION   EST   MESSAGE',
      'worker-0   Excluded     Paused   1.0.0     -     ',
      'worker-1   Excluded     Paused   1.0.0     -     ',
      '',
      '= Update Health =',
      'SINCE   LEVEL     IMPACT           MESSAGE',
      '-       Warning   Update Stalled   Outdated nodes in a paused pool \'worker\' will not be updated',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
  {
    name: '--details=health expands the insights',
    state: pausedWorkers, details: 'health',
    expected: lines(
      '= Control Plane =',
      'Assessment:      Progressing',
      'Target Version:  1.0.1 (from 1.0.0)',
      'Updating:        machine-config',
      'Completion:      67% (2 operators updated, 1 updating, 0 waiting)',
      'Duration:        3m12s (Est. Time Remaining: 1h8m)',
      'Operator Health: 3 Healthy',
      '',
      'Control Plane Nodes',
      'NAME       ASSESSMENT    PHASE      VERSION   EST    MESSAGE',
      'master-0   Progressing   Draining   1.0.0     +10m   ',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Excluded     0% (0/2)     2 Available, 0 Progressing, 0 Draining, 2 Excluded',
      '',
      'Worker Pool Nodes: worker',
      'NAME       ASSESSMENT   PHASE    VERSION   EST   MESSAGE',
      'worker-0   Excluded     Paused   1.0.0     -     ',
      'worker-1   Excluded     Paused   1.0.0     -     ',
      '',
      '= Update Health =',
      'Message: Outdated nodes in a paused pool \'worker\' will not be updated',
      '  Since:       -',
      '  Level:       Warning',
      '  Impact:      Update Stalled',
      '  Reference:   https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues',
      '  Resources:',
      '    machineconfigpools.machineconfiguration.openshift.io: worker',
      '  Description: Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.',
    ),
  },
  {
    // The control plane is done; the worker pool goes on (so this is still an update). Nodes in
    // trouble first, then by phase; past the tenth only those in trouble, the rest summed up.
    name: 'worker nodes rolling after the control plane: degraded, unavailable, draining, rebooting, omitted',
    state: workersRolling, details: 'none',
    expected: lines(
      '= Control Plane =',
      'Update to 4.16.0-ec.3 successfully completed at 2026-03-02T11:31:00Z (duration: 3h31m)',
      '',
      'All control plane nodes successfully updated to 4.16.0-ec.3',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Degraded     53% (9/17)   12 Available, 2 Progressing, 2 Draining, 1 Degraded',
      'zinfra        Empty                     0 Total',
      '',
      'Worker Pool Nodes: worker',
      'NAME         ASSESSMENT    PHASE       VERSION       EST    MESSAGE',
      'worker-c-2   Degraded      Draining    4.16.0-ec.2   ?      failed to drain node: <node> after 1 hour. Please see machine-config-controller logs for more information',
      'worker-c-3   Unavailable   Pending     4.16.0-ec.2   ?      Not ready',
      'worker-c-4   Unavailable   Updated     4.16.0-ec.3   -      Node is marked unschedulable',
      'worker-c-0   Progressing   Draining    4.16.0-ec.2   +10m   ',
      'worker-c-1   Progressing   Rebooting   4.16.0-ec.2   +5m    ',
      'worker-b-0   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-1   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-2   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-3   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-a-0   Completed     Updated     4.16.0-ec.3   -      ',
      '...',
      'Omitted additional 7 Total, 7 Completed, 7 Available, 0 Progressing, 0 Outdated, 0 Draining, 0 Excluded, and 0 Degraded nodes.',
      'Pass along --details=nodes to see all information.',
      '',
      '= Update Health =',
      'SINCE    LEVEL     IMPACT             MESSAGE',
      '-        Error     Update Stalled     Node worker-c-2 is degraded',
      '8m55s    Warning   API Availability   Cluster Operator machine-config is degraded (RequiredPoolsFailed)',
      '22m44s   Warning   Update Speed       Node worker-c-3 is not ready',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
  {
    name: '--details=nodes lists every node',
    state: workersRolling, details: 'nodes',
    expected: lines(
      '= Control Plane =',
      'Update to 4.16.0-ec.3 successfully completed at 2026-03-02T11:31:00Z (duration: 3h31m)',
      '',
      'All control plane nodes successfully updated to 4.16.0-ec.3',
      '',
      '= Worker Upgrade =',
      '',
      'WORKER POOL   ASSESSMENT   COMPLETION   STATUS',
      'worker        Degraded     53% (9/17)   12 Available, 2 Progressing, 2 Draining, 1 Degraded',
      'zinfra        Empty                     0 Total',
      '',
      'Worker Pool Nodes: worker',
      'NAME         ASSESSMENT    PHASE       VERSION       EST    MESSAGE',
      'worker-c-2   Degraded      Draining    4.16.0-ec.2   ?      failed to drain node: <node> after 1 hour. Please see machine-config-controller logs for more information',
      'worker-c-3   Unavailable   Pending     4.16.0-ec.2   ?      Not ready',
      'worker-c-4   Unavailable   Updated     4.16.0-ec.3   -      Node is marked unschedulable',
      'worker-c-0   Progressing   Draining    4.16.0-ec.2   +10m   ',
      'worker-c-1   Progressing   Rebooting   4.16.0-ec.2   +5m    ',
      'worker-b-0   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-1   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-2   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-b-3   Outdated      Pending     4.16.0-ec.2   ?      ',
      'worker-a-0   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-1   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-2   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-3   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-4   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-5   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-6   Completed     Updated     4.16.0-ec.3   -      ',
      'worker-a-7   Completed     Updated     4.16.0-ec.3   -      ',
      '',
      '= Update Health =',
      'SINCE    LEVEL     IMPACT             MESSAGE',
      '-        Error     Update Stalled     Node worker-c-2 is degraded',
      '8m55s    Warning   API Availability   Cluster Operator machine-config is degraded (RequiredPoolsFailed)',
      '22m44s   Warning   Update Speed       Node worker-c-3 is not ready',
      '',
      'Run with --details=health for additional description and links to related online documentation',
    ),
  },
];

for (const c of cases) {
  test(c.name, () => assert.equal(upgradeStatus(c.state(), c.details, NOW), c.expected));
}

test('a cluster whose update and pools are done is not updating', () => {
  const s = workersRolling();
  s.nodes = s.nodes.filter((n) => !n.metadata.name.startsWith('worker-c') && !n.metadata.name.startsWith('worker-b'));
  assert.equal(upgradeStatus(s, 'all', NOW), 'The cluster is not updating.\n');
});

test('a ClusterVersion without a Failing condition is a warning; one Unknown "may be" failing', () => {
  const s = mostlyUpdated();
  s.cv = clusterVersion('4.17.0', [{ state: 'Partial', version: '4.17.0', started: ago(28, 2) }, { state: 'Completed', version: '4.16.0', started: ago(2000), completed: ago(1950) }], { failing: null });
  assert.match(upgradeStatus(s, 'none', NOW), /\nnow {5}Warning {3}Update Stalled {3}Cluster Version version has no Failing condition\n/);
  s.cv = clusterVersion('4.17.0', [{ state: 'Partial', version: '4.17.0', started: ago(28, 2) }], { failing: ['Unknown', ago(3), 'SlowClusterOperator', 'waiting on machine-config over 30 minutes'] });
  const text = upgradeStatus(s, 'none', NOW);
  assert.match(text, /^Target Version: {2}4\.17\.0 \(a new install\)$/m);
  assert.match(text, /\n3m {6}Warning {3}Update Stalled {3}Cluster Version version may be failing to proceed with the update \(SlowClusterOperator\)\n/);
});

test('an operator degraded or unavailable for less than five minutes raises nothing yet', () => {
  const s = mostlyUpdated();
  const name = 'console';
  const i = s.operators.findIndex((o) => o.metadata.name === name);
  s.operators[i] = clusterOperator(name, { version: '4.17.0', degraded: ['True', ago(4, 59), 'Flapping', 'x'], available: ['False', ago(4), 'Restarting', ''] });
  const text = upgradeStatus(s, 'none', NOW);
  assert.match(text, /^Operator Health: 32 Healthy, 1 Unavailable$/m, 'unavailable counts before available-but-degraded');
  assert.match(text, /Update is proceeding well\n$/);
  s.operators[i].status!.conditions![0].lastTransitionTime = ago(21);
  assert.match(upgradeStatus(s, 'health', NOW), /^Message: Cluster Operator console is unavailable \(Restarting\)\n {2}Since: {7}21m\n {2}Level: {7}Error\n {2}Impact: {6}API Availability\n {2}Reference: {3}\S+ClusterOperatorDown\.md\n {2}Resources:\n {4}clusteroperators\.config\.openshift\.io: console\n {2}Description: <no message>\n$/m);
});

test('oc\'s errors: no Progressing condition, no ClusterOperators, a bad --details', async () => {
  const s = mostlyUpdated();
  s.cv.status!.conditions = s.cv.status!.conditions!.filter((c: Obj) => c.type !== 'Progressing');
  assert.throws(() => upgradeStatus(s, 'none', NOW), /no current Progressing info, see `kubectl describe clusterversion` for more details\./);
  assert.throws(() => upgradeStatus({ ...mostlyUpdated(), operators: [] }, 'none', NOW), /no cluster operator information available - you must be connected to an OpenShift version 4 server/);
  const r = await runBosun(['adm', 'upgrade', 'status', '--details', 'everything', '--kubeconfig', '/nonexistent']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /invalid value for --details: everything \(must be one of none, all, nodes, health, operators\)/);
});

test('Go\'s text formatting: tabwriter blocks, durations, %.0f', () => {
  // A multi-line cell ends the column block: the rows after it align among themselves.
  assert.equal(tabwrite('A\tBB\tC\nlonger-name\tx\tfirst\nsecond line\nn\tyy\tz\n'), 'A             BB   C\nlonger-name   x    first\nsecond line\nn   yy   z\n');
  assert.deepEqual([0, 999, 6_000, 120_000, 3_617_000, 7_200_000, 65_500].map(shortDuration), ['now', '999ms', '6s', '2m', '1h0m17s', '2h', '1m5s']);
  assert.deepEqual([12.5, 37.5, 62.5, 90.909, 96.97, 2.5].map(fixed0), ['12', '38', '62', '91', '97', '2']);
});

test('the README and --help show what the command prints for the paused-pool state', async () => {
  const expected = upgradeStatus(pausedWorkers(), 'none', NOW).replace(/ +$/gm, '');
  const readme = readFileSync(`${repositoryRoot}/README.md`, 'utf8');
  assert.ok(readme.includes(`$ bosun adm upgrade status\n${expected}`), 'README example');
  const help = await runBosun(['adm', 'upgrade', 'status', '--help']);
  assert.ok(help.stdout.replace(/ +$/gm, '').includes(`  $ bosun adm upgrade status\n${expected.replace(/^(?=.)/gm, '  ')}`), help.stdout);
});
