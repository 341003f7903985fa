// `bosun machine-config-controller`: runs the template, kubelet-config, render and node
// controllers against a cluster on the component manager, until SIGTERM.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { registerComponent } from '../kube/manager-flags.js';
import { DEFAULT_RENDER_DELAY_MS, DEFAULT_RENDERED_GC_GRACE_MS, MACHINE_CONFIG_CONTROLLER, addMachineConfigController } from '../mco/controller/run.js';

interface Options {
  sshKeyFile?: string;
  renderedGcGrace: string;
  renderDelay: string;
  releaseVersion?: string;
}

/** Reads authorized_keys-style lines (comments and blank lines skipped). */
export function readSshKeys(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

function nonNegativeSeconds(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`${flag} must be a non-negative number of seconds, got "${text}"`);
  return n;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    ...MACHINE_CONFIG_CONTROLLER,
    description: 'run the machine-config controller: base configs from ControllerConfig, KubeletConfigs, rendered configs per pool, and node rollout',
    flags: (command) =>
      command
        .option('--ssh-key-file <file>', 'public keys for the core user (authorized_keys format), written as 99-<role>-ssh')
        .option('--rendered-gc-grace <seconds>', 'delete a rendered config nothing has referenced for this long', String(DEFAULT_RENDERED_GC_GRACE_MS / 1000))
        .option('--render-delay <seconds>', 'wait this long after a MachineConfig change before rendering, so a burst renders once', String(DEFAULT_RENDER_DELAY_MS / 1000))
        .option('--release-version <version>', 'release version for the release-image-version annotation when the ControllerConfig carries none'),
    help: `
Leader election: the Lease openshift-machine-config-operator/machine-config-controller.

What it does, per OpenShift's machine-config controller:
  template        00-<role>, 01-<role>-kubelet, 01-<role>-container-runtime (and 99-<role>-ssh)
                  from ControllerConfig/machine-config-controller and its pull secret
  kubelet-config  KubeletConfig -> 99-<pool>-generated-kubelet; Success/Failure on the KubeletConfig
  render          MachineConfigs selected by each pool, merged by name -> rendered-<pool>-<hash>,
                  pool.spec.configuration; invalid or unreconcilable configs -> RenderDegraded
  node            desiredConfig on at most maxUnavailable nodes at a time; pool status and conditions

Example:
  $ bosun machine-config-controller --kubeconfig .bosun/kubeconfig --ssh-key-file ~/.ssh/id_ed25519.pub --health-listen 127.0.0.1:8798
  $ kubectl get mcp
  NAME     CONFIG                                             UPDATED   UPDATING   DEGRADED   MACHINECOUNT   ...
  worker   rendered-worker-0f8e4b1c2d3a4f5e6a7b8c9d0e1f2a3b   True      False      False      3              ...`,
    setup(manager, o) {
      const grace = nonNegativeSeconds(o.renderedGcGrace, '--rendered-gc-grace');
      const renderDelay = nonNegativeSeconds(o.renderDelay, '--render-delay');
      const sshAuthorizedKeys = o.sshKeyFile ? readSshKeys(o.sshKeyFile) : undefined;
      addMachineConfigController(manager, { sshAuthorizedKeys, renderedGCGraceMs: grace * 1000, renderDelayMs: renderDelay * 1000, releaseVersion: o.releaseVersion });
    },
  });
}
