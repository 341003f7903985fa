// `bosun restore`: brings a stopped cluster's data directory back to a backup (backup.ts), after
// which `bosun start` reconciles the machines and pods to it: the API server serves the restored
// objects at their restored resourceVersions (its history with them, so a watch from a restored
// resourceVersion replays what followed), the cloud boots the instances its restored store holds
// running, and every controller converges the world to the restored objects.
//
// Refused while anything runs on the directory (a `bosun start` holding it, or any process with
// one of its stores open: `bosun apiserver`, `bosun cloud serve`) — replacing a store under a
// running server would lose its writes and confuse its watchers — and refused on a directory that
// is not empty unless forced; forced, the directory's state is replaced and its machines' disks
// (DIR/machines, not in a backup) are kept, so a cluster restored in place keeps its machines.
// The whole backup is read and verified before anything in the directory changes.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../common/private-files.js';
import { holder } from '../install/data-dir-lock.js';
import { BackupError, readArchive, type BackupManifest } from './archive.js';
import { API_STORE, CLOUD_STORE, ETCD_MEMBERS, ETCD_SNAPSHOT } from './backup.js';

/** Kept by a forced restore: the machines' disks. */
const KEPT = 'machines';

export interface RestoreOptions {
  file: string;
  dataDir: string;
  force?: boolean;
  progress?: (line: string) => void;
}

/** Processes (other than this one) holding one of the directory's stores open (etcd's members: anything under etcd/). */
export function storeUsers(dataDir: string): number[] {
  const stores = [API_STORE, CLOUD_STORE].flatMap((s) => [join(dataDir, s), join(dataDir, `${s}-wal`)]);
  const etcd = join(dataDir, 'etcd') + '/';
  const isStore = (target: string) => stores.includes(target) || target.startsWith(etcd);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const fds = readdirSync(join('/proc', entry, 'fd'));
      if (fds.some((fd) => isStore(readlinkSync(join('/proc', entry, 'fd', fd))))) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** Throws when a cluster runs on `dataDir` (see the header). */
export function refuseIfRunning(dataDir: string, shown: string): void {
  const pid = holder(dataDir);
  if (pid !== undefined) throw new BackupError('ClusterRunning', `the cluster in ${shown} is running (bosun start, pid ${pid}); stop it first (Ctrl-C, or kill ${pid})`);
  const users = storeUsers(dataDir);
  if (users.length > 0) throw new BackupError('ClusterRunning', `the cluster in ${shown} is running: process${users.length === 1 ? '' : 'es'} ${users.join(', ')} ha${users.length === 1 ? 's' : 've'} its stores open; stop ${users.length === 1 ? 'it' : 'them'} first`);
}

/** Where etcdctl is (Debian's etcd-client), if installed. */
function findEtcdctl(): string | undefined {
  return (process.env.PATH ?? '/usr/bin').split(':').filter(Boolean).map((d) => join(d, 'etcdctl')).find((p) => existsSync(p));
}

/**
 * Makes each etcd member's data directory from the snapshot (etcdctl snapshot restore), with the
 * membership etcd-cluster.ts starts them with, so that `bosun start --etcd` finds them as before.
 */
async function restoreEtcdMembers(dataDir: string, say: (line: string) => void): Promise<void> {
  const etcdctl = findEtcdctl();
  if (!etcdctl) throw new BackupError('NoEtcdctl', 'restoring a backup of a cluster on etcd needs etcdctl (apt-get install etcd-client)');
  const members = JSON.parse(readFileSync(join(dataDir, ETCD_MEMBERS), 'utf8')) as Array<{ name: string; peerUrl: string }>;
  const initialCluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const member of members) {
    say(`      etcd member ${member.name}: from the snapshot`);
    await promisify(execFile)(etcdctl, [
      'snapshot', 'restore', join(dataDir, ETCD_SNAPSHOT), '--name', member.name, '--data-dir', join(dataDir, 'etcd', member.name),
      '--initial-cluster', initialCluster, '--initial-cluster-token', 'bosun-etcd', '--initial-advertise-peer-urls', member.peerUrl,
    ], { env: { ...process.env, ETCDCTL_API: '3' } }).catch((e: Error & { stderr?: string }) => {
      throw new BackupError('EtcdRestoreFailed', `etcdctl snapshot restore for ${member.name} failed: ${(e.stderr || e.message).trim()}`);
    });
  }
  rmSync(join(dataDir, ETCD_SNAPSHOT));
}

export async function restoreBackup(options: RestoreOptions): Promise<BackupManifest> {
  const dataDir = resolve(options.dataDir);
  const say = options.progress ?? (() => undefined);
  say(`[1/3] reading and verifying ${options.file}`);
  const { manifest, contents } = readArchive(options.file);
  say(`      taken ${manifest.createdAt}: revision ${manifest.revision}, ${manifest.objects} ${manifest.storage === 'etcd' ? 'keys' : 'objects'}, ${manifest.files.length} files`);
  if (existsSync(dataDir)) {
    refuseIfRunning(dataDir, options.dataDir);
    const present = readdirSync(dataDir);
    if (present.length > 0 && !options.force) {
      throw new BackupError('DataDirNotEmpty', `${options.dataDir} is not empty (${present.length} entr${present.length === 1 ? 'y' : 'ies'}): restore into a new or empty directory, or give --force to replace its state (its machines' disks, ${KEPT}/, are kept)`);
    }
    say(`[2/3] ${present.length > 0 ? `replacing the state in ${options.dataDir} (keeping ${KEPT}/)` : `restoring into ${options.dataDir}`}`);
    for (const entry of present) if (entry !== KEPT) rmSync(join(dataDir, entry), { recursive: true, force: true });
  } else {
    say(`[2/3] restoring into ${options.dataDir}`);
  }
  ensurePrivateDir(dataDir);
  for (const file of manifest.files) {
    const target = join(dataDir, ...file.path.split('/'));
    ensurePrivateDir(dirname(target));
    // The owner's bits as backed up (read-write at least); never open to other users, whatever the backup says.
    writeFileSync(target, contents.get(file.path)!, { mode: (file.mode & 0o700) | PRIVATE_FILE_MODE });
  }
  if (manifest.storage === 'etcd') await restoreEtcdMembers(dataDir, say);
  const machines = existsSync(join(dataDir, KEPT)) ? readdirSync(join(dataDir, KEPT)).length : 0;
  say(`[3/3] restored ${manifest.files.length} files${machines ? `; ${machines} machine disks kept` : ''}; start the cluster (bosun start${manifest.storage === 'etcd' ? ' --etcd' : ''} --data-dir ${options.dataDir}) and it reconciles to the backup`);
  return manifest;
}
