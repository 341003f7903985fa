// `bosun etcd …`: kubeadm's etcd static pod on a local machine. It runs Debian's etcd
// (/usr/bin/etcd, package etcd-server) with the flags it is given, as the machine sees them: file
// flags (--data-dir, --cert-file, --peer-trusted-ca-file, …) inside the pod's view of the machine
// root, where the node agent links the hostPath volumes, so each member's data is in its own
// machine root; the loopback in URL flags (kubeadm's https://127.0.0.1:2379) is the machine's own
// address, since local machines share the host's loopback. Flags the installed etcd predates are
// dropped with a log line. When etcd predates the /livez and /readyz paths kubeadm's probes ask
// its metrics address for (etcd < 3.5), this process serves them there from etcd's /health. etcd
// stops with this process (SIGTERM passed on; it dies with it, too).
import type { Command } from 'commander';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { REQUEST_LIMITS } from '../common/http-limits.js';
import { freePort } from '../common/listen.js';
import { machineUrl, podPath } from '../common/pod-path.js';

const PATH_FLAGS = new Set(['data-dir', 'wal-dir', 'cert-file', 'key-file', 'trusted-ca-file', 'client-crl-file', 'peer-cert-file', 'peer-key-file', 'peer-trusted-ca-file', 'peer-crl-file', 'config-file']);
const URL_LIST_FLAGS = new Set(['listen-client-urls', 'advertise-client-urls', 'listen-peer-urls', 'initial-advertise-peer-urls', 'listen-metrics-urls', 'listen-client-http-urls']);

/** etcd's flags as `[name, value]` pairs (`--a=b`, `--a b`, `--flag`). Pure. */
export function splitEtcdFlags(argv: string[]): Array<[string, string | undefined]> {
  const out: Array<[string, string | undefined]> = [];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--?([A-Za-z0-9][A-Za-z0-9-]*)(?:=(.*))?$/s.exec(argv[i]);
    if (!m) throw new Error(`etcd: unexpected argument "${argv[i]}" (flags look like --name=value)`);
    if (m[2] !== undefined) out.push([m[1], m[2]]);
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('-')) out.push([m[1], argv[++i]]);
    else out.push([m[1], undefined]);
  }
  return out;
}

/** A flag's value as this machine has it: paths in the pod's view, loopback URLs on the machine's address. Pure but for the environment. */
export function mapEtcdFlag(name: string, value: string): string {
  if (PATH_FLAGS.has(name)) return podPath(value);
  if (URL_LIST_FLAGS.has(name)) return [...new Set(value.split(',').map((u) => machineUrl(u.trim())).filter(Boolean))].join(',');
  if (name === 'initial-cluster') return value.split(',').map((m) => m.replace(/=(.*)$/, (_, url: string) => `=${machineUrl(url)}`)).join(',');
  return value;
}

/** The flags the installed etcd knows (from its --help) and its version. */
function etcdFacts(binary: string): { flags: Set<string>; version: [number, number] } {
  const help = spawnSync(binary, ['--help'], { encoding: 'utf8' });
  const flags = new Set([...`${help.stdout}${help.stderr}`.matchAll(/^\s+--([a-z0-9-]+)/gm)].map((m) => m[1]));
  const version = /etcd Version: (\d+)\.(\d+)/.exec(spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '');
  return { flags, version: version ? [Number(version[1]), Number(version[2])] : [0, 0] };
}

/** Serves kubeadm's probe paths (/livez, /readyz) on `listen` from etcd's metrics server at `target`, which has only /health; anything else is passed on. */
function probeShim(listen: URL, target: URL): Promise<Server> {
  const server = createServer(REQUEST_LIMITS, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const upstream = path === '/livez' || path === '/readyz' ? '/health' : req.url ?? '/';
    const out = request({ host: target.hostname, port: target.port, path: upstream, method: req.method, timeout: 5000 }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('timeout', () => out.destroy(new Error('timeout')));
    out.on('error', (e) => {
      if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' });
      res.end(`etcd's metrics server does not answer: ${e.message}\n`);
    });
    out.end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(listen.port), listen.hostname, () => resolve(server));
  });
}

export async function runEtcd(argv: string[]): Promise<number> {
  // As src/cluster/etcd-cluster.ts finds it (not imported: this command loads only what it needs).
  const binary = process.env.BOSUN_ETCD_BINARY ?? '/usr/bin/etcd';
  if (!existsSync(binary)) throw new Error(`etcd is not installed: no ${binary} (apt-get install etcd-server, or set BOSUN_ETCD_BINARY)`);
  const facts = etcdFacts(binary);
  const args: string[] = [];
  const dropped: string[] = [];
  let metrics: URL | undefined;
  for (const [name, value] of splitEtcdFlags(argv)) {
    if (!facts.flags.has(name)) {
      dropped.push(`--${name}`);
      continue;
    }
    const mapped = value === undefined ? undefined : mapEtcdFlag(name, value);
    if (name === 'listen-metrics-urls' && mapped && (facts.version[0] < 3 || (facts.version[0] === 3 && facts.version[1] < 5))) {
      const urls = mapped.split(',');
      const http = urls.find((u) => u.startsWith('http://'));
      if (http) {
        metrics = new URL(http);
        const inner = `http://${metrics.hostname}:${await freePort(metrics.hostname)}`;
        args.push(`--listen-metrics-urls=${[inner, ...urls.filter((u) => u !== http)].join(',')}`);
        continue;
      }
    }
    args.push(mapped === undefined ? `--${name}` : `--${name}=${mapped}`);
  }
  if (dropped.length) console.error(`bosun etcd: etcd ${facts.version.join('.')} does not know ${dropped.join(' ')}; dropped`);
  const dataDir = args.find((a) => a.startsWith('--data-dir='));
  if (dataDir) console.error(`bosun etcd: data in ${dataDir.slice('--data-dir='.length)}`);
  // setpriv --pdeathsig: etcd gets SIGTERM when this process dies, however it dies.
  const command = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'SIGTERM', '--', binary, ...args] : [binary, ...args];
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
  let shim: Server | undefined;
  if (metrics) {
    const inner = new URL(args.find((a) => a.startsWith('--listen-metrics-urls='))!.slice('--listen-metrics-urls='.length).split(',')[0]);
    shim = await probeShim(metrics, inner);
    console.error(`bosun etcd: serving /livez and /readyz on ${metrics.origin} from etcd's /health (etcd ${facts.version.join('.')} predates them)`);
  }
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGTERM', forward);
  process.on('SIGINT', forward);
  const code = await new Promise<number>((resolve) => {
    child.once('error', (e) => {
      console.error(`bosun etcd: cannot run ${binary}: ${e.message}`);
      resolve(127);
    });
    child.once('exit', (c, signal) => resolve(c ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1)));
  });
  shim?.close();
  return code;
}

export function register(program: Command): void {
  program
    .command('etcd')
    .description("run Debian's etcd (/usr/bin/etcd) with etcd's own flags, paths and loopback addresses as a local machine has them (kubeadm's etcd static pod)")
    .argument('[flags...]', "etcd's flags, as kubeadm writes them")
    .allowUnknownOption(true)
    .helpOption('-h, --help', 'show this help')
    .addHelpText('after', `
Every flag goes to etcd. File flags (--data-dir, --cert-file, --key-file, --trusted-ca-file,
--peer-cert-file, --peer-key-file, --peer-trusted-ca-file, …) are read inside the pod's view of its
machine root when a node agent runs it, so each member keeps its data in its own machine. In URL
flags (--listen-client-urls, --advertise-client-urls, --listen-peer-urls,
--initial-advertise-peer-urls, --initial-cluster, --listen-metrics-urls) the loopback is the
machine's own address. Flags the installed etcd does not know are dropped, saying so; with an
etcd older than 3.5, /livez and /readyz (kubeadm's probes) are served on the metrics address.

Example (what kubeadm's etcd.yaml runs on a machine whose address is 127.0.150.1):
  $ bosun etcd --name=m1 --data-dir=/var/lib/etcd \\
      --listen-client-urls=https://127.0.0.1:2379,https://127.0.150.1:2379 \\
      --advertise-client-urls=https://127.0.150.1:2379 \\
      --listen-peer-urls=https://127.0.150.1:2380 --initial-advertise-peer-urls=https://127.0.150.1:2380 \\
      --initial-cluster=m1=https://127.0.150.1:2380 --initial-cluster-state=new \\
      --cert-file=/etc/kubernetes/pki/etcd/server.crt --key-file=/etc/kubernetes/pki/etcd/server.key \\
      --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt --client-cert-auth=true \\
      --peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt --peer-key-file=/etc/kubernetes/pki/etcd/peer.key \\
      --peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt --peer-client-cert-auth=true \\
      --listen-metrics-urls=http://127.0.0.1:2381
  bosun etcd: data in /var/lib/etcd
  bosun etcd: serving /livez and /readyz on http://127.0.150.1:2381 from etcd's /health (etcd 3.4 predates them)
  {"level":"info","msg":"serving client requests on 127.0.150.1:2379", …}
  $ etcdctl --endpoints=https://127.0.150.1:2379 --cacert=… --cert=… --key=… endpoint health
  https://127.0.150.1:2379 is healthy: successfully committed proposal: took = 2.1ms

Exits with etcd's exit code; without etcd installed it says so and exits 1.`)
    .action(async (_flags: string[], _options: unknown, command: Command) => {
      const code = await runEtcd(command.args);
      process.exit(code);
    });
}
