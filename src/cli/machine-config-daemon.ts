// `bosun machine-config-daemon`: the per-node daemon that applies its node's desired rendered
// MachineConfig to the host's disk (through the host root mounted at --root-mount), drains and
// reboots through the host, validates, and watches for drift, on the component manager.
import type { Command } from 'commander';
import { join } from 'node:path';
import { registerComponent } from '../kube/manager-flags.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_DRIFT_CHECK_MS, DEFAULT_REBOOT_TIMEOUT_MS, MACHINE_CONFIG_DAEMON, MachineConfigDaemon } from '../mco/daemon/daemon.js';
import { RootMountHost } from '../mco/daemon/host.js';

interface Options {
  nodeName?: string;
  rootMount?: string;
  driftCheckInterval: string;
  drainTimeout: string;
  rebootTimeout: string;
}

/** The host root as a pod sees its hostPath mount: below $BOSUN_IN_CLUSTER_ROOT on bosun's nodes. */
function defaultRootMount(): string {
  return process.env.BOSUN_IN_CLUSTER_ROOT ? join(process.env.BOSUN_IN_CLUSTER_ROOT, 'rootfs') : '/rootfs';
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    ...MACHINE_CONFIG_DAEMON,
    description: 'run the machine-config daemon for one node: write its desired config, drain, reboot, validate, watch for drift',
    defaults: { leaderElect: false },
    flags: (command) =>
      command
        .option('--node-name <name>', 'the node this daemon owns (default: $NODE_NAME)')
        .option('--root-mount <dir>', 'where the host\'s root is mounted (default: $BOSUN_IN_CLUSTER_ROOT/rootfs in a bosun pod, else /rootfs)')
        .option('--drift-check-interval <seconds>', 'how often a Done node\'s files are compared with its config', String(DEFAULT_DRIFT_CHECK_MS / 1000))
        .option('--drain-timeout <seconds>', 'a drain the controller has not done after this long degrades the node (it keeps waiting)', String(DEFAULT_DRAIN_TIMEOUT_MS / 1000))
        .option('--reboot-timeout <seconds>', 'a reboot the host took but has not carried out after this long counts as failed (mcd_reboots_failed_total, alert MCDRebootError) and is asked for again', String(DEFAULT_REBOOT_TIMEOUT_MS / 1000)),
    help: `
Runs as the DaemonSet openshift-machine-config-operator/machine-config-daemon (one pod per node,
the host's / mounted at /rootfs). The node's annotations machineconfiguration.openshift.io/
{currentConfig,desiredConfig,state,reason} say where it is; a change of desiredConfig (written by
the machine-config controller) starts an update: Working -> drain -> write -> reboot -> validate
-> Done. A drain not done within --drain-timeout makes the node Degraded ("failed to drain node:
<node> after 1 hour: error when evicting pods: <namespace>/<pod>: ..."), and its pool with it,
until the drain succeeds. The reboot is asked of the host as \`shutdown -r\` asks logind, through
/run/systemd/shutdown/scheduled, which bosun's local machines honour. A reboot that fails — the
request cannot be written, or the machine is still in the same boot --reboot-timeout later —
counts in mcd_reboots_failed_total (OpenShift's alert MCDRebootError) with an Event RebootFailed,
and is asked for again.

Example:
  $ NODE_NAME=worker-0 bosun machine-config-daemon --root-mount /var/lib/bosun/machines/i-0a1b2c3d/root
  $ kubectl get node worker-0 -o jsonpath='{.metadata.annotations.machineconfiguration\\.openshift\\.io/state}'
  Done`,
    setup(manager, o) {
      const nodeName = o.nodeName ?? process.env.NODE_NAME;
      if (!nodeName) throw new Error('--node-name (or $NODE_NAME) is required: the daemon owns one node');
      const seconds = Number(o.driftCheckInterval);
      if (!(seconds > 0)) throw new Error(`--drift-check-interval must be a positive number of seconds, got "${o.driftCheckInterval}"`);
      const drainTimeout = Number(o.drainTimeout);
      if (!(drainTimeout > 0)) throw new Error(`--drain-timeout must be a positive number of seconds, got "${o.drainTimeout}"`);
      const rebootTimeout = Number(o.rebootTimeout);
      if (!(rebootTimeout > 0)) throw new Error(`--reboot-timeout must be a positive number of seconds, got "${o.rebootTimeout}"`);
      const host = new RootMountHost(o.rootMount ?? defaultRootMount());
      manager.add(new MachineConfigDaemon(manager, { nodeName, host, driftCheckIntervalMs: seconds * 1000, drainTimeoutMs: drainTimeout * 1000, rebootTimeoutMs: rebootTimeout * 1000, clock: manager.clock }));
    },
  });
}
