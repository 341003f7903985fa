// `bosun start`: brings up a local bosun cluster on this machine and keeps it running.
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { repositoryRoot } from './release.js';

export function register(program: Command): void {
  program
    .command('start')
    .description('bring up a local bosun cluster (API server, signed releases, update service, machine-config server/operator/controller, cluster-version operator) and keep it running')
    .option('--data-dir <dir>', 'where the cluster keeps its state', '.bosun')
    .option('--listen <host:port>', 'API server address', '127.0.0.1:6443')
    .option('--update-service <host:port>', 'update service address', '127.0.0.1:8080')
    .option('--version <version>', 'the release to install', '1.0.0')
    .option('--channel <channel>', 'the update channel to follow', 'stable-1.0')
    .option('--machine-config-server <host:tls-port>', 'machine-config server address (plain HTTP on the next port)', '127.0.0.1:22623')
    .option('--etcd', 'keep the API state in a local 3-member etcd cluster (Debian etcd-server) served by two API servers behind the API address')
    .addHelpText(
      'after',
      `
Example:
  $ bosun start
  [1/7] starting the API server on https://127.0.0.1:6443 (0.0s)
  [2/7] building and signing releases into .bosun/releases (0.3s)
  ...
  [7/7] the cluster-version operator applies the payload (2.2s)
        Working towards 1.0.0: 28 of 28 done (100% complete)

  bosun is up.
    API server:     https://127.0.0.1:6443
    kubeconfig:     .bosun/kubeconfig
  ...
  Try:
    export KUBECONFIG=.bosun/kubeconfig
    kubectl get clusterversion

With --etcd the API state lives in a local 3-member etcd cluster (DIR/etcd, clients over TLS with
certificates) served by two API servers (DIR and DIR/apiserver-1) behind the --listen address;
step 1 then prints the same line and the kubeconfig points at that address.

A second start reuses the data directory. Stop with Ctrl-C.`,
    )
    .action(async (opts: { dataDir: string; listen: string; updateService: string; version: string; channel: string; machineConfigServer: string; etcd?: boolean }) => {
      const mcs = parseHostPort(opts.machineConfigServer, '--machine-config-server');
      if (mcs.port === 0 || mcs.port >= 65535) throw new Error(`--machine-config-server needs a fixed TLS port below 65535 (the HTTP port is the next one), got "${opts.machineConfigServer}"`);
      const { bringUp } = await import('../cluster/bring-up.js');
      const cluster = await bringUp({
        dataDir: opts.dataDir,
        releaseSources: `${repositoryRoot}release-payload`,
        cvoManifests: `${repositoryRoot}manifests`,
        api: parseHostPort(opts.listen, '--listen'),
        updateService: parseHostPort(opts.updateService, '--update-service'),
        version: opts.version,
        channel: opts.channel,
        machineConfigServer: { host: mcs.host, tlsPort: mcs.port, httpPort: mcs.port + 1 },
        progress: (line) => console.log(line),
        etcd: opts.etcd,
      });
      console.log(`
bosun is up.
  API server:     ${cluster.api.url}
  kubeconfig:     ${cluster.kubeconfigPath}
  update service: ${cluster.updateService.url}
  machine configs: https://${mcs.host}:${cluster.machineConfigServer.port('tls')}/config/<pool> (http on :${cluster.machineConfigServer.port('http')})

Try:
  export KUBECONFIG=${cluster.kubeconfigPath}
  kubectl get clusterversion
  kubectl get clusteroperators
  kubectl get machineconfigpools
  kubectl api-resources
  bosun adm upgrade recommend --upstream ${cluster.updateService.url} --channel ${opts.channel} --version ${opts.version}

Stop with Ctrl-C.`);
      const shutdown = async () => {
        await cluster.stop();
        process.exit(0);
      };
      process.once('SIGINT', () => void shutdown());
      process.once('SIGTERM', () => void shutdown());
    });
}
