// The `bosun` command: one subcommand per component, each defined in its own file in src/cli/.
// A process loads only the command it runs: the table below maps each name to its module, and
// only `bosun --help` (or an unknown name) loads them all to list them. Every node may run a
// dozen bosun components as processes, so each must pay only for its own code.
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { holdLifeline } from '../common/lifeline.js';
import { usePrivateUmask } from '../common/private-files.js';

holdLifeline();
// Before anything is created: every file and directory a component (or a process it starts:
// etcd, Prometheus, the machines' agents) writes is private to this user (common/private-files.ts).
usePrivateUmask();

type Registrar = { register(program: Command): void };

/** Subcommands by name, with the modules that define each (a group such as `adm` has several). */
const commands: Record<string, Array<() => Promise<Registrar>>> = {
  start: [() => import('./start.js')],
  destroy: [() => import('./destroy.js')],
  backup: [() => import('./backup.js')],
  restore: [() => import('./restore.js')],
  apiserver: [() => import('./apiserver.js'), () => import('./apiserver-migrate.js')],
  'cluster-version-operator': [() => import('./cluster-version-operator.js')],
  release: [() => import('./release.js'), () => import('./release-signing.js')],
  adm: [() => import('./adm-release.js'), () => import('./adm-upgrade.js'), () => import('./adm-alerts.js'), () => import('./adm-top.js'), () => import('./adm-operators.js')],
  'update-service': [() => import('./update-service.js')],
  'machine-config-server': [() => import('./machine-config-server.js')],
  'machine-config-operator': [() => import('./machine-config-operator.js')],
  'machine-config-controller': [() => import('./machine-config-controller.js')],
  'machine-config-daemon': [() => import('./machine-config-daemon.js')],
  cloud: [() => import('./cloud.js')],
  scheduler: [() => import('./scheduler.js')],
  'controller-manager': [() => import('./controller-manager.js')],
  'cloud-controller-manager': [() => import('./cloud-controller-manager.js')],
  'cluster-api-controllers': [() => import('./cluster-api-controllers.js')],
  'olm-operator': [() => import('./olm.js')],
  'catalog-operator': [() => import('./olm.js')],
  'package-server': [() => import('./olm.js')],
  'greeter-operator': [() => import('./sample-operators.js')],
  'echo-operator': [() => import('./sample-operators.js')],
  'cluster-cloud-controller-manager-operator': [() => import('./cluster-cloud-controller-manager-operator.js')],
  cluster: [() => import('./cluster-generate.js'), () => import('./cluster-describe.js'), () => import('./cluster-move.js'), () => import('./cluster-versions.js')],
  // kubeadm's static pods: Kubernetes' own command lines.
  etcd: [() => import('./etcd.js')],
  'kube-apiserver': [() => import('./kube-apiserver.js')],
  'kube-controller-manager': [() => import('./kube-controller-manager.js')],
  'kube-scheduler': [() => import('./kube-scheduler.js')],
  kubeadm: [() => import('./kubeadm.js')],
  'cluster-monitoring-operator': [() => import('./cluster-monitoring-operator.js')],
  prometheus: [() => import('./prometheus.js')],
  'thanos-querier': [() => import('./thanos-querier.js')],
  'metrics-server': [() => import('./metrics-server.js')],
  console: [() => import('./console.js')],
  'local-path-helper': [() => import('./local-path-helper.js')],
};

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command();
program
  .name('bosun')
  .description('An OpenShift-style platform control plane: cluster-version operator, update service, machine-config operator, cloud-controller-manager operator.')
  .version(version, '--version', 'print the bosun version')
  .showHelpAfterError()
  // Before any subcommand exists, so every group inherits it: bosun's own options are recognised
  // only before the subcommand name, and a subcommand's `--version V` or `--kubeconfig F` reaches
  // that subcommand whatever its parent group also defines.
  .enablePositionalOptions();

program
  .command('version')
  .description('print the bosun version')
  .action(() => console.log(`bosun ${version}`));

try {
  const name = process.argv[2];
  if (name !== 'version') {
    const wanted = name !== undefined && Object.hasOwn(commands, name) ? commands[name] : Object.values(commands).flat();
    // Registered in the table's order, so that `bosun --help` lists them the same way every time.
    for (const module of await Promise.all(wanted.map((load) => load()))) module.register(program);
  }
  await program.parseAsync(process.argv);
} catch (error) {
  // A command that fails says why in one line and exits non-zero; BOSUN_DEBUG=1 shows the stack.
  console.error(`error: ${(error as Error).message}`);
  if (process.env.BOSUN_DEBUG) console.error(error);
  process.exit(1);
}
