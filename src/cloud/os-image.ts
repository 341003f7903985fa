// What a local machine's disk holds before its first boot: the parts of a Red Hat CoreOS image
// that Ignition, the machine-config daemon and OpenShift's own MachineConfigs take for granted.
// - The accounts RHCOS ships in /etc: root, and `core` (uid/gid 1000, "CoreOS Admin", home
//   /var/home/core 0700, in adm, wheel, sudo and systemd-journal), the one user the MCO manages:
//   a MachineConfig may set its ssh keys and password but never create it. /etc/passwd, group,
//   shadow and gshadow as on an RHCOS node (the system users live in /usr/lib/passwd there,
//   through nss-altfiles, and are not needed here); shadow and gshadow mode 0000 (0600 when bosun
//   does not run as root: their owner must still read them).
// - ostree's layout: /usr read-only content with /bin, /sbin, /lib, /lib64 linking into it; the
//   writable places under /var with /home, /root, /opt, /srv, /mnt and /usr/local linking there
//   (relative links, so a path through them stays in the machine root); /tmp and /var/tmp 1777.
// - The directories the MCO's templates and the payload's MachineConfigs write into (kubelet,
//   CRI-O, containers, systemd units and their enablement, NetworkManager, trust anchors, sshd,
//   sysctl, modules, udev, tmpfiles), and SELinux configured off (Ignition reads the config).
// Pure data and one function that lays it down.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chownIfRoot, isRoot } from '../ignition/apply/root-path.js';

/** The user every RHCOS node has, as its /etc/passwd says. */
const CORE_ACCOUNT = { name: 'core', uid: 1000, gid: 1000, gecos: 'CoreOS Admin', home: '/var/home/core', shell: '/bin/bash' } as const;

/** Days since the epoch on which RHCOS's image set the accounts' passwords (shadow's lastchg), as a node's /etc/shadow shows. */
const ROOT_LASTCHG = 18367;
const CORE_LASTCHG = 18939;
const CORE_GROUPS = [['adm', 4], ['wheel', 10], ['sudo', 16], ['systemd-journal', 190]] as const;

type ImageNode =
  | { path: string; kind: 'dir'; mode?: number; owner?: readonly [number, number] }
  | { path: string; kind: 'file'; content: string; mode?: number }
  | { path: string; kind: 'link'; target: string };

const dir = (path: string, mode = 0o755, owner?: readonly [number, number]): ImageNode => ({ path, kind: 'dir', mode, owner });
const link = (path: string, target: string): ImageNode => ({ path, kind: 'link', target });
const file = (path: string, content: string, mode = 0o644): ImageNode => ({ path, kind: 'file', content, mode });

const passwd = ['root:x:0:0:root:/root:/bin/bash', `${CORE_ACCOUNT.name}:x:${CORE_ACCOUNT.uid}:${CORE_ACCOUNT.gid}:${CORE_ACCOUNT.gecos}:${CORE_ACCOUNT.home}:${CORE_ACCOUNT.shell}`];
const group = ['root:x:0:', ...CORE_GROUPS.map(([name, gid]) => `${name}:x:${gid}:${CORE_ACCOUNT.name}`), `${CORE_ACCOUNT.name}:x:${CORE_ACCOUNT.gid}:`];
const shadow = [`root:*:${ROOT_LASTCHG}:0:99999:7:::`, `${CORE_ACCOUNT.name}:*:${CORE_LASTCHG}:0:99999:7:::`];
const gshadow = ['root:::', ...CORE_GROUPS.map(([name]) => `${name}:::${CORE_ACCOUNT.name}`), `${CORE_ACCOUNT.name}:!::`];
const lines = (l: string[]) => l.map((x) => `${x}\n`).join('');
const SECRET_MODE = isRoot ? 0o000 : 0o600;

/** Every node of the image, parents before children. */
export const OS_IMAGE: readonly ImageNode[] = [
  ...['usr', 'usr/bin', 'usr/sbin', 'usr/lib', 'usr/lib64', 'usr/libexec', 'usr/share'].map((p) => dir(p)),
  link('bin', 'usr/bin'), link('sbin', 'usr/sbin'), link('lib', 'usr/lib'), link('lib64', 'usr/lib64'),
  dir('boot'), dir('tmp', 0o1777),
  dir('var'), dir('var/home'), dir(CORE_ACCOUNT.home.slice(1), 0o700, [CORE_ACCOUNT.uid, CORE_ACCOUNT.gid]), dir('var/roothome', 0o700),
  ...['var/opt', 'var/srv', 'var/mnt', 'var/usrlocal', 'var/usrlocal/bin', 'var/usrlocal/sbin', 'var/usrlocal/lib', 'var/usrlocal/share'].map((p) => dir(p)),
  ...['var/lib', 'var/lib/kubelet', 'var/lib/containers', 'var/log'].map((p) => dir(p)),
  dir('var/tmp', 0o1777),
  link('home', 'var/home'), link('root', 'var/roothome'), link('opt', 'var/opt'), link('srv', 'var/srv'), link('mnt', 'var/mnt'), link('usr/local', '../var/usrlocal'),
  dir('etc'),
  file('etc/passwd', lines(passwd)), file('etc/group', lines(group)),
  file('etc/shadow', lines(shadow), SECRET_MODE), file('etc/gshadow', lines(gshadow), SECRET_MODE),
  dir('etc/selinux'), file('etc/selinux/config', 'SELINUX=disabled\nSELINUXTYPE=targeted\n'),
  ...[
    'etc/kubernetes', 'etc/kubernetes/manifests',
    'etc/crio', 'etc/crio/crio.conf.d', 'etc/containers', 'etc/containers/registries.conf.d', 'etc/containers/registries.d',
    'etc/systemd', 'etc/systemd/system', 'etc/systemd/system/multi-user.target.wants',
    'etc/NetworkManager', 'etc/NetworkManager/conf.d', 'etc/NetworkManager/dispatcher.d',
    'etc/pki', 'etc/pki/ca-trust', 'etc/pki/ca-trust/source', 'etc/pki/ca-trust/source/anchors',
    'etc/ssh', 'etc/ssh/sshd_config.d', 'etc/sysctl.d', 'etc/modprobe.d', 'etc/modules-load.d', 'etc/tmpfiles.d',
    'etc/udev', 'etc/udev/rules.d', 'etc/sysconfig', 'etc/profile.d',
  ].map((p) => dir(p)),
  dir('etc/NetworkManager/system-connections', 0o700), dir('etc/sudoers.d', 0o750),
];

/** Lays the image down in an empty machine root. */
export function writeOsImage(root: string): void {
  mkdirSync(root, { recursive: true, mode: 0o755 });
  for (const node of OS_IMAGE) {
    const target = join(root, node.path);
    if (node.kind === 'link') { symlinkSync(node.target, target); continue; }
    if (node.kind === 'dir') mkdirSync(target, { mode: node.mode });
    else writeFileSync(target, node.content);
    // Modes exactly (the umask would take 1777's and 0000's bits).
    chmodSync(target, node.mode ?? 0o644);
    if (node.kind === 'dir' && node.owner) chownIfRoot(target, node.owner[0], node.owner[1]);
  }
}
