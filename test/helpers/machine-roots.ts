// What the tests that run machines straight from machine roots on loopback (no local cloud) share:
// free addresses for them, the processes started for them (found through /proc, so that they are
// stopped by their id), and the last lines of their logs for a failure's message.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The ports a kubeadm control-plane machine serves: etcd, its metrics, the API server, the kubelet, the controller-manager and the scheduler. */
export const CONTROL_PLANE_PORTS = [2379, 2380, 2381, 6443, 10250, 10257, 10259];

/** `count` addresses `<prefix>.N` (N from 2 to 253, starting at a random one) on which every one of `ports` is free now. */
export async function freeMachineAddresses(prefix: string, count: number, ports: number[] = CONTROL_PLANE_PORTS): Promise<string[]> {
  const bindable = (host: string, port: number) => new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
  const out: string[] = [];
  const start = 2 + Math.floor(Math.random() * 240);
  for (let i = 0; i < 253 && out.length < count; i++) {
    const ip = `${prefix}.${2 + ((start + i) % 252)}`;
    if ((await Promise.all(ports.map((p) => bindable(ip, p)))).every(Boolean)) out.push(ip);
  }
  if (out.length < count) throw new Error(`no free addresses under ${prefix}.x`);
  return out;
}

/** Every process this user can see, with its command line and (when readable) environment. */
export function processes(): Array<{ pid: number; cmdline: string; environ: string }> {
  const out: Array<{ pid: number; cmdline: string; environ: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      let environ = '';
      try {
        environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      } catch {
        // another user's
      }
      out.push({ pid: Number(entry), cmdline, environ });
    } catch {
      // gone
    }
  }
  return out;
}

/** The pids of processes whose command line holds every one of `parts`. */
export function pidsOf(...parts: string[]): number[] {
  return processes().filter((p) => parts.every((part) => p.cmdline.includes(part))).map((p) => p.pid);
}

/** The pids of processes started for the machines under `dir`: their command line or environment names it. */
export function pidsUnder(dir: string): number[] {
  return processes().filter((p) => p.pid !== process.pid && (p.cmdline.includes(dir) || p.environ.includes(dir))).map((p) => p.pid);
}

/** The last `lines` lines of every container log under `dir` (and, with `bootLog`, of each machine's boot log). */
export function machineLogs(dir: string, o: { lines: number; bootLog?: boolean }): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if ((path.includes('/var/log/pods/') && e.name.endsWith('.log')) || (o.bootLog && path.endsWith('/var/log/boot.log'))) {
        out.push(`== ${path.slice(dir.length)}\n${readFileSync(path, 'utf8').split('\n').slice(-o.lines).join('\n')}`);
      }
    }
  };
  try {
    walk(dir);
  } catch {
    // partly removed
  }
  return out.join('\n');
}
