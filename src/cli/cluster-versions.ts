// `bosun cluster versions`: the Kubernetes versions bosun can install on a workload cluster
// (src/capi/kubeadm/versions.ts), with what kubeadm installs beside each.
import { Command } from 'commander';
import { KUBERNETES_VERSIONS } from '../capi/kubeadm/versions.js';
import { clusterGroup } from './cluster-group.js';
import { columns } from './columns.js';

export function versionsTable(): string {
  const rows = [['VERSION', 'ETCD', 'COREDNS'], ...KUBERNETES_VERSIONS.map((v) => [v.version, v.etcd, v.coreDNS])];
  return columns(rows) + '\n';
}

export function clusterVersionsCommand(): Command {
  return new Command('versions')
    .description('list the Kubernetes versions bosun can install on a workload cluster (KubeadmControlPlane spec.version, Machine spec.version)')
    .action(() => {
      process.stdout.write(versionsTable());
    });
}

export function register(program: Command): void {
  clusterGroup(program).addCommand(clusterVersionsCommand());
}
