// `bosun start`: installs a local bosun cluster on this machine (or brings an installed one back)
// and keeps it running until Ctrl-C, which stops every machine and component cleanly.
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { repositoryRoot } from './release.js';
import { holdDataDir } from '../cluster/install/data-dir-lock.js';

function count(flag: string, max: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) > max) throw new Error(`${flag} must be a whole number from 0 to ${max}, got "${v}"`);
    return Number(v);
  };
}

/** The web console's URL as the cluster publishes it (ConfigMap openshift-config-managed/console-public). */
async function publishedConsoleURL(kubeconfigPath: string): Promise<string | undefined> {
  const { KubeClient, loadKubeConfig, resources } = await import('../kube/index.js');
  const published = await new KubeClient(loadKubeConfig(kubeconfigPath)).read(resources.configMaps, 'console-public', 'openshift-config-managed').catch(() => undefined);
  return published?.data?.consoleURL;
}

export function register(program: Command): void {
  program
    .command('start')
    .description('install a local bosun cluster on this machine — masters and workers booting from Ignition, the operators as pods — or bring an installed one back, and keep it running')
    .option('--data-dir <dir>', 'where the cluster keeps its state', '.bosun')
    .option('--listen <host:port>', 'API server address', '127.0.0.1:6443')
    .option('--update-service <host:port>', 'update service address', '127.0.0.1:8080')
    .option('--cloud <host:port>', "the local cloud's API address", '127.0.0.1:8099')
    .option('--version <version>', 'the release to install', '1.0.0')
    .option('--channel <channel>', 'the update channel to follow', 'stable-1.0')
    .option('--masters <n>', 'masters to install (0: no machines; the operators run in this process)', count('--masters', 5), 3)
    .option('--workers <n>', 'workers to install', count('--workers', 20), 2)
    .option('--boot-delay <seconds>', 'how long a rebooting machine stays down', '3')
    .option('--machine-config-server <host:tls-port>', 'bootstrap machine-config server address (plain HTTP on the next port)', '127.0.0.1:22623')
    .option('--monitoring <on>', 'run monitoring (Prometheus and thanos-querier on a master; install only): true or false', 'true')
    .option('--etcd', 'keep the API state in a local 3-member etcd cluster (Debian etcd-server) served by two API servers behind the API address')
    .addHelpText(
      'after',
      `
Example:
  $ bosun start
  [1/9] starting the API server on https://127.0.0.1:6443 (0.0s)
  [2/9] building and signing releases into .bosun/releases (0.4s)
  ...
  [7/9] creating 3 masters; they boot from the bootstrap machine-config server (4.1s)
        bosun-local-master-0         i-3f9c…  127.0.1.1    local-a
        ...
        waiting for 3 master nodes Ready
          0/3 Ready, 0 registered; booting: bosun-local-master-0, … (0s)
  ...
  [8/9] Cluster API takes the machines: the masters adopted as Machines, 2 workers created by MachineDeployment worker with a MachineHealthCheck, while the bootstrap hands over; they boot from the machine-config servers behind api-int (40.2s)
  ...
  [9/9] the cluster-version operator applies the payload (71.9s)

  bosun is up: 3 masters, 2 workers (installed).
    API server:     https://127.0.0.1:6443
    kubeconfig:     .bosun/kubeconfig
    update service: http://127.0.0.1:8080
    local cloud:    http://127.0.0.1:8099
    web console:    https://127.0.200.2:9443 (log in with the kubeconfig's token: kubectl config view --raw -o jsonpath='{.users[0].user.token}')
  ...

Monitoring (ClusterOperator monitoring): Debian's Prometheus runs as pod prometheus-k8s on a master,
scraping every component, with thanos-querier (HTTPS, port 9091) in front of its API; see the
README for its UI. --monitoring=false leaves it out (ClusterVersion spec.overrides marks the
monitoring operator unmanaged); so does an install without machines. Install only.

With --etcd the API state lives in a local 3-member etcd cluster (DIR/etcd, clients over TLS with
certificates) served by two API servers (DIR and DIR/apiserver-1) behind the --listen address.

The workers are Cluster API machines: MachineDeployment worker in openshift-cluster-api (scale it
with kubectl) and MachineHealthCheck worker, which replaces a worker whose node stays NotReady for
30 s or disappears. A second start brings the same cluster back (same nodes, machines and objects;
the machines boot without Ignition and no bootstrap runs); --masters/--workers apply to the
install only. Stop with Ctrl-C;
remove the cluster with \`bosun destroy\`.`,
    )
    .action(async (opts: { dataDir: string; listen: string; updateService: string; cloud: string; version: string; channel: string; masters: number; workers: number; bootDelay: string; machineConfigServer: string; etcd?: boolean; monitoring: string }) => {
      if (opts.monitoring !== 'true' && opts.monitoring !== 'false') throw new Error(`--monitoring must be true or false, got "${opts.monitoring}"`);
      const mcs = parseHostPort(opts.machineConfigServer, '--machine-config-server');
      if (mcs.port === 0 || mcs.port >= 65535) throw new Error(`--machine-config-server needs a fixed TLS port below 65535 (the HTTP port is the next one), got "${opts.machineConfigServer}"`);
      const bootDelay = Number(opts.bootDelay);
      if (!Number.isFinite(bootDelay) || bootDelay < 0 || bootDelay > 600) throw new Error(`--boot-delay must be seconds from 0 to 600, got "${opts.bootDelay}"`);
      if (opts.masters === 0 && opts.workers > 0) throw new Error('--workers needs masters: give --masters 1 or more (or --workers 0)');
      const release = holdDataDir(opts.dataDir);
      const { bringUp } = await import('../cluster/bring-up.js');
      let cluster: Awaited<ReturnType<typeof bringUp>> | undefined;
      let stopping = false;
      const shutdown = async (code: number) => {
        if (stopping) return;
        stopping = true;
        console.log('\nstopping: machines, then the control plane…');
        let exitCode = code;
        // A part that does not stop within its bound is named, and the rest still stops.
        await cluster?.stop().catch((e: Error) => {
          console.error(e.message);
          exitCode = 1;
        });
        release();
        process.exit(exitCode);
      };
      process.once('SIGINT', () => void shutdown(0));
      process.once('SIGTERM', () => void shutdown(0));
      try {
        cluster = await bringUp({
          dataDir: opts.dataDir,
          releaseSources: `${repositoryRoot}release-payload`,
          cvoManifests: `${repositoryRoot}manifests`,
          api: parseHostPort(opts.listen, '--listen'),
          updateService: parseHostPort(opts.updateService, '--update-service'),
          cloud: parseHostPort(opts.cloud, '--cloud'),
          version: opts.version,
          channel: opts.channel,
          masters: opts.masters,
          workers: opts.workers,
          bootDelayMs: bootDelay * 1000,
          machineConfigServer: { host: mcs.host, tlsPort: mcs.port, httpPort: mcs.port + 1 },
          progress: (line) => console.log(line),
          etcd: opts.etcd,
          monitoring: opts.monitoring === 'true',
        });
      } catch (e) {
        release();
        throw e;
      }
      const consoleURL = opts.masters > 0 ? await publishedConsoleURL(cluster.kubeconfigPath) : undefined;
      const shape = opts.masters > 0 ? `${opts.masters} master${opts.masters === 1 ? '' : 's'}, ${opts.workers} worker${opts.workers === 1 ? '' : 's'} (${cluster.installed ? 'installed' : 'brought back'})` : 'no machines';
      console.log(`
bosun is up: ${shape}.
  API server:     ${cluster.api.url}
  kubeconfig:     ${cluster.kubeconfigPath}
  update service: ${cluster.updateService.url}${cluster.cloud ? `\n  local cloud:    ${cluster.cloud.url}` : ''}${consoleURL ? `\n  web console:    ${consoleURL} (log in with the kubeconfig's token: kubectl config view --raw -o jsonpath='{.users[0].user.token}')` : ''}

Try:
  export KUBECONFIG=${cluster.kubeconfigPath}
  kubectl get clusterversion
  kubectl get nodes -o wide
  kubectl get pods -A -o wide
  kubectl get clusteroperators${opts.masters > 0 ? `
  kubectl get machines,machinesets,machinedeployments -A
  kubectl -n openshift-cluster-api scale machinedeployment worker --replicas=3` : ''}
  bosun adm upgrade${opts.masters > 0 && opts.monitoring === 'true' ? '\n  bosun adm alerts' : ''}

Stop with Ctrl-C.`);
    });
}
