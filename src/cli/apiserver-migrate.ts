// `bosun apiserver migrate --to-etcd`: moves a stopped API server's SQLite store into etcd
// (src/apiserver/storage/sqlite-to-etcd.ts), after which the server runs with --etcd-servers.
import type { Command } from 'commander';
import { join } from 'node:path';
import { etcdOptions } from './apiserver.js';

interface MigrateFlags {
  toEtcd: string;
  dataDir: string;
  etcdPrefix: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
}

/** Adds `migrate` to the `apiserver` command (apiserver.ts, registered first: main.ts). */
export function register(program: Command): void {
  const apiserver = program.commands.find((c) => c.name() === 'apiserver');
  if (!apiserver) throw new Error('bosun apiserver must be registered before its migrate subcommand');
  apiserver
    .command('migrate')
    .description("move a stopped API server's SQLite store (DIR/state.db) into etcd, the objects as they are")
    .requiredOption('--to-etcd <urls>', 'etcd client URLs, comma-separated (http(s)://HOST:PORT)')
    .option('--data-dir <dir>', "the API server's data directory", '.bosun')
    .option('--etcd-prefix <prefix>', 'the etcd key prefix to write under (must be empty)', '/registry')
    .option('--etcd-cafile <file>', "CA that signed the etcd servers' certificates (TLS)")
    .option('--etcd-certfile <file>', 'client certificate presented to etcd (TLS)')
    .option('--etcd-keyfile <file>', 'key of the client certificate presented to etcd (TLS)')
    .addHelpText('after', `
Refused while anything has the store open (stop the API server first) and when etcd already holds
keys under the prefix. Objects keep their content (uid, creationTimestamp, generation) and are
written oldest first, in kube-apiserver's key layout; their resourceVersions become etcd's
revisions, in the same order. etcd's revision is moved past the SQLite store's and compacted
there, so a client holding an old resourceVersion gets 410 Gone and relists, as after any etcd
restore. DIR/state.db is left as it was. Then start the server on etcd:

Example:
  $ bosun apiserver migrate --data-dir .bosun --to-etcd http://127.0.0.1:2379
  [1/3] read .bosun/state.db: 1068 objects, revision 8412
  [2/3] writing the objects to etcd under /registry/ (oldest first)
        107/1068 objects
        ...
        1068/1068 objects
  [3/3] moving etcd's revision past the SQLite store's (7344 writes of /registry_migration) and compacting there
        ...
  migrated 1068 objects to etcd http://127.0.0.1:2379 (prefix /registry); the SQLite store was at revision 8412, etcd is now at 8413
  start the API server on it: bosun apiserver --data-dir .bosun --etcd-servers http://127.0.0.1:2379
  $ bosun apiserver --data-dir .bosun --etcd-servers http://127.0.0.1:2379
  API server listening on https://127.0.0.1:6443 (etcd http://127.0.0.1:2379, prefix /registry)
  kubeconfig: .bosun/kubeconfig`)
    .action(async (opts: MigrateFlags) => {
      const etcd = etcdOptions({ ...opts, etcdServers: opts.toEtcd })!;
      const { refuseIfRunning } = await import('../cluster/backup/restore.js');
      refuseIfRunning(opts.dataDir, opts.dataDir);
      const { migrateSqliteToEtcd } = await import('../apiserver/storage/sqlite-to-etcd.js');
      const result = await migrateSqliteToEtcd(join(opts.dataDir, 'state.db'), etcd, (line) => console.log(line));
      const urls = etcd.endpoints.join(',');
      console.log(`migrated ${result.objects} objects to etcd ${urls} (prefix ${etcd.prefix}); the SQLite store was at revision ${result.sqliteRevision}, etcd is now at ${result.etcdRevision}`);
      const tls = [['--etcd-cafile', opts.etcdCafile], ['--etcd-certfile', opts.etcdCertfile], ['--etcd-keyfile', opts.etcdKeyfile]].filter(([, v]) => v).map(([f, v]) => ` ${f} ${v}`).join('');
      console.log(`start the API server on it: bosun apiserver --data-dir ${opts.dataDir} --etcd-servers ${urls}${etcd.prefix !== '/registry' ? ` --etcd-prefix ${etcd.prefix}` : ''}${tls}`);
    });
}
