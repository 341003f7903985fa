// `bosun restore`: a stopped cluster brought back to a backup (src/cluster/backup/restore.ts).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('restore')
    .description('bring a stopped cluster back to a backup (bosun backup); bosun start then reconciles its machines and pods to it')
    .argument('<file>', 'the backup file')
    .option('--data-dir <dir>', 'the data directory to restore into (new, empty, or with --force the cluster\'s own)', '.bosun')
    .option('--force', "replace the state of a data directory that is not empty (its machines' disks, machines/, are kept)")
    .addHelpText('after', `
Refused while the cluster runs (a bosun start holding the directory, or any process with its stores
open) and, without --force, when the directory is not empty. The whole file is verified (gzip CRC,
each file's SHA-256) before anything changes. Objects come back at their resourceVersions, with
their history, so a watch from a restored resourceVersion replays what followed it. A backup of a
cluster on etcd (--etcd) makes each member's data directory from its snapshot with etcdctl
snapshot restore (Debian's etcd-client); start it again with bosun start --etcd.

Example:
  $ bosun restore cluster.backup --data-dir .bosun --force
  [1/3] reading and verifying cluster.backup
        taken 2026-11-27T05:02:11.418Z: revision 8412, 1068 objects, 133 files
  [2/3] replacing the state in .bosun (keeping machines/)
  [3/3] restored 133 files; 5 machine disks kept; start the cluster (bosun start --data-dir .bosun) and it reconciles to the backup
  $ bosun start --data-dir .bosun`)
    .action(async (file: string, opts: { dataDir: string; force?: boolean }) => {
      const { restoreBackup } = await import('../cluster/backup/restore.js');
      await restoreBackup({ file, dataDir: opts.dataDir, force: opts.force, progress: (line) => console.log(line) });
    });
}
