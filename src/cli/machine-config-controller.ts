// `bosun machine-config-controller`: runs the template, kubelet-config, render and node
// controllers against a cluster until SIGTERM.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { serveMetrics } from '../kube/metrics.js';
import { DEFAULT_RENDER_DELAY_MS, DEFAULT_RENDERED_GC_GRACE_MS, runMachineConfigController } from '../mco/controller/run.js';

interface Options {
  kubeconfig?: string;
  sshKeyFile?: string;
  renderedGcGrace: string;
  renderDelay: string;
  releaseVersion?: string;
  metricsPort?: string;
  leaderElect: boolean;
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
  program
    .command('machine-config-controller')
    .description('run the machine-config controller: base configs from ControllerConfig, KubeletConfigs, rendered configs per pool, and node rollout')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, then the in-cluster service account)')
    .option('--ssh-key-file <file>', 'public keys for the core user (authorized_keys format), written as 99-<role>-ssh')
    .option('--rendered-gc-grace <seconds>', 'delete a rendered config nothing has referenced for this long', String(DEFAULT_RENDERED_GC_GRACE_MS / 1000))
    .option('--render-delay <seconds>', 'wait this long after a MachineConfig change before rendering, so a burst renders once', String(DEFAULT_RENDER_DELAY_MS / 1000))
    .option('--release-version <version>', 'release version for the release-image-version annotation when the ControllerConfig carries none')
    .option('--metrics-port <port>', 'serve Prometheus metrics on 127.0.0.1:<port>/metrics')
    .option('--no-leader-elect', 'run without the Lease openshift-machine-config-operator/machine-config-controller (one instance only)')
    .addHelpText('after', `
What it does, per OpenShift's machine-config controller:
  template        00-<role>, 01-<role>-kubelet, 01-<role>-container-runtime (and 99-<role>-ssh)
                  from ControllerConfig/machine-config-controller and its pull secret
  kubelet-config  KubeletConfig -> 99-<pool>-generated-kubelet; Success/Failure on the KubeletConfig
  render          MachineConfigs selected by each pool, merged by name -> rendered-<pool>-<hash>,
                  pool.spec.configuration; invalid or unreconcilable configs -> RenderDegraded
  node            desiredConfig on at most maxUnavailable nodes at a time; pool status and conditions

Example:
  $ bosun machine-config-controller --kubeconfig .bosun/kubeconfig --ssh-key-file ~/.ssh/id_ed25519.pub
  $ kubectl get mcp
  NAME     CONFIG                                             UPDATED   UPDATING   DEGRADED   MACHINECOUNT   ...
  worker   rendered-worker-0f8e4b1c2d3a4f5e6a7b8c9d0e1f2a3b   True      False      False      3              ...`)
    .action(async (o: Options) => {
      const grace = nonNegativeSeconds(o.renderedGcGrace, '--rendered-gc-grace');
      const renderDelay = nonNegativeSeconds(o.renderDelay, '--render-delay');
      const metricsPort = o.metricsPort === undefined ? undefined : Number(o.metricsPort);
      if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort < 65536)) throw new Error(`--metrics-port must be a port number, got "${o.metricsPort}"`);
      const sshAuthorizedKeys = o.sshKeyFile ? readSshKeys(o.sshKeyFile) : undefined;
      const kubeconfig = loadKubeConfig(o.kubeconfig);
      const controller = new AbortController();
      process.once('SIGTERM', () => controller.abort());
      process.once('SIGINT', () => controller.abort());
      const metrics = metricsPort !== undefined ? await serveMetrics(metricsPort) : undefined;
      try {
        await runMachineConfigController({
          kubeconfig, signal: controller.signal, sshAuthorizedKeys, renderedGCGraceMs: grace * 1000, renderDelayMs: renderDelay * 1000, releaseVersion: o.releaseVersion,
          ...(o.leaderElect ? {} : { leaderElection: false as const }),
        });
      } finally {
        metrics?.close();
      }
    });
}
