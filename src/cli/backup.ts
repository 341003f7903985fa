// `bosun backup`: a consistent copy of a running cluster's state (src/cluster/backup/backup.ts).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('backup')
    .description("take a consistent copy of a cluster's state while it runs: the API server's and the local cloud's stores, keys and certificates, in one file (mode 0600)")
    .option('--data-dir <dir>', 'the cluster to back up', '.bosun')
    .requiredOption('--to <file>', 'the backup file to write (must not exist)')
    .addHelpText('after', `
The stores are copied with SQLite's online backup API while the cluster keeps running and
writing: each copy is its database as of one committed transaction. With them go every other file
of the data directory (pki/, kubeconfig, releases/ and their signing key), but not the machines'
disks (machines/), the audit log or the pid file. The file is bosun's own format: a gzip stream
of a JSON manifest (each file's path, mode, size and SHA-256) followed by the files' bytes.
A cluster started with --etcd keeps its API state in etcd: its backup holds an etcd snapshot
(etcd's Maintenance API, the whole keyspace at one revision), which bosun restore turns back into
the members' data directories with etcdctl snapshot restore.

Example:
  $ bosun backup --data-dir .bosun --to cluster.backup
  [1/3] copying the API server's store (state.db) with SQLite's online backup
        state.db: 1514 pages copied
        revision 8412, 1068 objects
  [2/3] copying the local cloud's store (cloud/state.db)
        cloud/state.db: 12 pages copied
  [3/3] writing cluster.backup: the stores and 131 files (keys, certificates, kubeconfig, releases)
  backed up revision 8412 (1068 objects, 133 files) to cluster.backup`)
    .action(async (opts: { dataDir: string; to: string }) => {
      const { takeBackup } = await import('../cluster/backup/backup.js');
      const manifest = await takeBackup({ dataDir: opts.dataDir, to: opts.to, progress: (line) => console.log(line) });
      console.log(`backed up revision ${manifest.revision} (${manifest.objects} ${manifest.storage === 'etcd' ? 'keys' : 'objects'}, ${manifest.files.length} files) to ${opts.to}`);
    });
}
