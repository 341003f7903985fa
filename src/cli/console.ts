// `bosun console`: the web console (src/console) — the page over HTTPS, the API server and
// thanos-querier proxied as the signed-in user, and, with --publish-service, its URL published in
// ConfigMap openshift-config-managed/console-public and on ClusterOperator console.
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';
import { registerComponent, releaseVersionOption } from '../kube/manager-flags.js';

interface Options {
  listen: string;
  servingCertDir?: string;
  publishService?: string;
  releaseVersion?: string;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'console',
    lease: { namespace: 'openshift-console', name: 'console' },
    description: "serve the web console: the cluster's version, updates and update graph, operators, pools, nodes, machines and workload clusters, live, as the signed-in user",
    flags: (command) =>
      command
        .option('--listen <host:port>', 'serve the console on https://HOST:PORT', '127.0.0.1:9443')
        .option('--serving-cert-dir <dir>', "the console's certificate: tls.crt and tls.key in DIR (reloaded when they change; default: self-signed at start)")
        .option('--publish-service <namespace/name>', "publish the URL of this LoadBalancer Service in ConfigMap openshift-config-managed/console-public (key consoleURL) and report ClusterOperator console (one replica at a time, under the Lease)")
        .addOption(releaseVersionOption('console')),
    help: `
Open the address in a browser and log in with a bearer token: every request the page makes goes
to the API server with that token (RBAC judges the user, not the console), and it is kept in the
browser tab only. Requests to /api/kubernetes/… with an "Authorization: Bearer" header are
proxied the same way, for automation. The page: Overview, Cluster Settings (channel, update
graph, start an update, its progress as \`bosun adm upgrade status\` assesses it), Cluster
Operators, MachineConfigPools, MachineConfigs, Nodes (cordon/uncordon), Machines,
MachineSets/MachineDeployments (scale), MachineHealthChecks, Workload Clusters (the
\`bosun cluster describe\` tree, kubeconfig download); lists follow the API with watches.

Example:
  $ bosun console --kubeconfig .bosun/kubeconfig --listen 127.0.0.1:9443 --no-leader-elect
  {"level":30,"time":"2026-11-27T08:18:01.087Z","component":"console","url":"https://127.0.0.1:9443","apiServer":"https://127.0.0.1:6443","msg":"console serving"}
  $ curl -sk -H "Authorization: Bearer $(kubectl config view --raw -o jsonpath='{.users[0].user.token}')" \\
      https://127.0.0.1:9443/api/kubernetes/apis/config.openshift.io/v1/clusterversions/version | jq -r .status.desired.version
  1.0.0

In the cluster it runs as Deployment openshift-console/console on the masters, behind the
LoadBalancer Service openshift-console/console (port https, 9443); \`npm start\` prints its URL.`,
    async setup(manager, o) {
      const listen = parseHostPort(o.listen, '--listen');
      let publish: { namespace: string; name: string } | undefined;
      if (o.publishService) {
        const [namespace, name, ...rest] = o.publishService.split('/');
        if (!namespace || !name || rest.length) throw new Error(`--publish-service must be NAMESPACE/NAME, got "${o.publishService}"`);
        publish = { namespace, name };
      }
      const { ServingCertificate } = await import('../kube/serving-certificate.js');
      const { buildConsoleBundle } = await import('../console/bundle.js');
      const { ConsoleServer } = await import('../console/server.js');
      const files = o.servingCertDir ? { certFile: `${o.servingCertDir}/tls.crt`, keyFile: `${o.servingCertDir}/tls.key` } : undefined;
      const certificate = await ServingCertificate.load(files, [listen.host]);
      const server = new ConsoleServer({ kubeconfig: manager.kubeconfig, client: manager.client, listen, certificate, bundle: await buildConsoleBundle() });
      manager.add({
        name: 'console-server',
        needsLeaderElection: false,
        async start(signal) {
          await server.start();
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        },
        async stop() {
          await server.stop();
          certificate.close();
        },
      });
      if (publish) {
        const { publishController } = await import('../console/publish.js');
        manager.add(publishController(manager, { service: publish, version: o.releaseVersion }));
      }
    },
  });
}
