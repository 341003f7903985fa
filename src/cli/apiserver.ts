// `bosun apiserver`: runs the embedded Kubernetes-compatible API server in the foreground.
import type { Command } from 'commander';
import { parseHostPort } from '../common/listen.js';

export function register(program: Command): void {
  program
    .command('apiserver')
    .description('run the embedded Kubernetes-compatible API server (HTTPS, SQLite storage) in the foreground')
    .option('--data-dir <dir>', 'where the database, certificates, token and kubeconfig live', '.bosun')
    .option('--listen <host:port>', 'address to serve on', '127.0.0.1:6443')
    .option('--compact-keep <revisions>', 'revisions kept for watches; older resourceVersions get 410 Expired', '10000')
    .addHelpText(
      'after',
      `
On first start it creates a CA, a serving certificate and an admin token in DIR/pki and writes
DIR/kubeconfig; later starts reuse them. RBAC is enforced (the admin token is system:masters),
ServiceAccount tokens come from \`kubectl create token\`, evictions respect PodDisruptionBudgets,
owner references are garbage-collected, and every change is audited to DIR/audit.log. Use it with the real kubectl:

  $ bosun apiserver --data-dir .bosun
  API server listening on https://127.0.0.1:6443
  kubeconfig: .bosun/kubeconfig
  $ kubectl --kubeconfig .bosun/kubeconfig get namespaces
`,
    )
    .action(async (opts: { dataDir: string; listen: string; compactKeep: string }) => {
      const { host, port } = parseHostPort(opts.listen, '--listen');
      const compactKeep = Number(opts.compactKeep);
      if (!Number.isInteger(compactKeep) || compactKeep < 1) throw new Error(`--compact-keep must be a positive integer, got "${opts.compactKeep}"`);
      const { startClusterApiServer } = await import('../apiserver/cluster-api.js');
      const { server, stop } = await startClusterApiServer({ dataDir: opts.dataDir, host, port, compactKeep });
      console.log(`API server listening on ${server.url}`);
      console.log(`kubeconfig: ${server.kubeconfigPath}`);
      const shutdown = async (signal: string) => {
        console.log(`${signal}: shutting down`);
        await stop();
        process.exit(0);
      };
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      process.once('SIGINT', () => void shutdown('SIGINT'));
    });
}
