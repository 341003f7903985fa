// Kubernetes components' command lines, as kubeadm writes them into static pod manifests
// (`--name=value`, `--name value`, `--bool`, `--bool=false`), for the commands that take them in
// bosun's stead (etcd, kube-apiserver, kube-controller-manager, kube-scheduler). Each command
// lists the flags it knows: the ones it uses, and the ones it accepts and ignores (saying so once,
// in one log line); an unknown flag is refused with the list of known ones. Pure, except for
// kubeVersion, which reads the environment the node agent gives a container.
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { podPath } from '../common/pod-path.js';
import { parseDuration } from '../cluster/node-agent/kubelet-files.js';
import type { LeaderElectionSettings, Manager } from '../kube/manager.js';

export interface KubeFlag {
  name: string;
  /** Takes no value (`--name` is true; `--name=false` is allowed). */
  bool?: boolean;
  /** Accepted and not acted on: listed in the "ignored" log line. */
  ignored?: boolean;
  help: string;
}

export type KubeFlagValues = Map<string, string>;

/** Parses `argv` against `known`; throws on an unknown flag, a missing value or a stray argument. */
export function parseKubeFlags(command: string, argv: string[], known: KubeFlag[]): KubeFlagValues {
  const byName = new Map(known.map((f) => [f.name, f]));
  const values: KubeFlagValues = new Map();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const m = /^--?([A-Za-z0-9][A-Za-z0-9-]*)(?:=(.*))?$/s.exec(word);
    if (!m) throw new Error(`${command}: unexpected argument "${word}" (flags look like --name=value)`);
    const [, name, inline] = m;
    const flag = byName.get(name);
    if (!flag) throw new Error(`${command}: unknown flag --${name} (bosun ${command} --help lists the flags it takes)`);
    if (flag.bool) {
      const v = inline ?? 'true';
      if (!['true', 'false', '1', '0', 't', 'f', 'TRUE', 'FALSE', 'True', 'False'].includes(v)) throw new Error(`${command}: --${name} is true or false, got "${v}"`);
      values.set(name, ['true', '1', 't', 'TRUE', 'True'].includes(v) ? 'true' : 'false');
      continue;
    }
    if (inline !== undefined) {
      values.set(name, inline);
      continue;
    }
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) throw new Error(`${command}: --${name} needs a value`);
    values.set(name, next);
    i++;
  }
  return values;
}

/** The flags given that the command accepts without acting on them, for its log line. */
export function ignoredFlags(values: KubeFlagValues, known: KubeFlag[]): string[] {
  return known.filter((f) => f.ignored && values.has(f.name)).map((f) => `--${f.name}`);
}

/** A command taking kube's flags: commander only sees --help; the rest reach `run` as they are. */
export function registerKubeCommand(program: Command, spec: { name: string; description: string; flags: KubeFlag[]; help: string; run: (argv: string[]) => Promise<void> }): void {
  const width = Math.max(...spec.flags.map((f) => f.name.length)) + 4;
  const table = spec.flags.map((f) => `  --${f.name.padEnd(width - 2)}${f.ignored ? '(accepted, ignored) ' : ''}${f.help}`).join('\n');
  program
    .command(spec.name)
    .description(spec.description)
    .argument('[flags...]', 'the component\'s own flags, as kubeadm writes them')
    .allowUnknownOption(true)
    .helpOption('-h, --help', 'show this help')
    .addHelpText('after', `\nFlags:\n${table}\n${spec.help}`)
    .action(async (_flags: string[], _options: unknown, command: Command) => {
      await spec.run(command.args);
    });
}

/** A file flag's path as the process finds it: inside the pod's view when run by a node agent. */
export function filePath(values: KubeFlagValues, name: string, required = false): string | undefined {
  const value = values.get(name);
  if (value === undefined || value === '') {
    if (required) throw new Error(`--${name} is required`);
    return undefined;
  }
  const path = podPath(value);
  if (!existsSync(path)) throw new Error(`--${name}: ${value} does not exist${path !== value ? ` (looked at ${path})` : ''}`);
  return path;
}

/**
 * The Kubernetes version this component runs as: its image's tag (`bosun.local/kube-apiserver:v1.33.1`,
 * $BOSUN_IMAGE from the node agent), else /etc/bosun/kubernetes-version as the pod sees it, else undefined.
 */
export function kubeVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const tag = /:(v\d+\.\d+\.\d+[^@]*)(@.*)?$/.exec(env.BOSUN_IMAGE ?? '')?.[1];
  if (tag) return tag;
  const file = podPath('/etc/bosun/kubernetes-version');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim() || undefined;
  return undefined;
}

/** The leader-election flags kube-controller-manager and kube-scheduler share (client-go's). */
export const LEADER_ELECTION_FLAGS: KubeFlag[] = [
  { name: 'leader-elect', bool: true, help: 'act only while holding the component\'s Lease in kube-system (default true)' },
  { name: 'leader-elect-lease-duration', help: 'default 15s' },
  { name: 'leader-elect-renew-deadline', help: 'default 10s' },
  { name: 'leader-elect-retry-period', help: 'default 2s' },
];

/** The flags every Kubernetes component takes and bosun's commands accept without acting on them. */
export const COMMON_IGNORED_FLAGS: KubeFlag[] = [
  { name: 'feature-gates', help: '', ignored: true },
  { name: 'profiling', bool: true, help: '', ignored: true },
  { name: 'v', help: 'log verbosity', ignored: true },
];

/** The Manager's leader election from LEADER_ELECTION_FLAGS: the Lease kube-system/<name>, or none with --leader-elect=false. */
export function leaderElection(values: KubeFlagValues, name: string): LeaderElectionSettings | undefined {
  if (!boolFlag(values, 'leader-elect', true)) return undefined;
  const duration = (flag: string, fallback: number) => parseDuration(values.get(flag), fallback);
  return {
    namespace: 'kube-system', name,
    leaseDurationMs: duration('leader-elect-lease-duration', 15_000), renewDeadlineMs: duration('leader-elect-renew-deadline', 10_000), retryPeriodMs: duration('leader-elect-retry-period', 2_000),
  };
}

/** Go's `--leader-elect` and friends: "true" or "false" as parsed above, with a default. */
export function boolFlag(values: KubeFlagValues, name: string, fallback: boolean): boolean {
  const v = values.get(name);
  return v === undefined ? fallback : v === 'true';
}

/**
 * Runs `manager` until it stops, serving kube-controller-manager's and kube-scheduler's secure port
 * meanwhile when there is one (`secure`): /healthz, /livez and /readyz over HTTPS (a self-signed
 * certificate, as theirs is without --tls-cert-file), which kubeadm's liveness probes ask.
 */
export async function runWithSecureHealth(command: string, manager: Manager, secure: { host: string; port: number } | undefined): Promise<void> {
  const closeHealth = secure ? await serveSecureHealth(secure.host, secure.port, manager) : undefined;
  if (secure) console.error(`bosun ${command}: serving /healthz, /livez and /readyz on https://${secure.host}:${secure.port}`);
  try {
    await manager.start();
  } finally {
    closeHealth?.();
  }
}

/** The secure port's server on `host:port`, answering from the manager's own checks; returns its close. */
async function serveSecureHealth(host: string, port: number, manager: Manager): Promise<() => void> {
  const { createServer } = await import('node:https');
  const { selfSignedServing } = await import('../cluster/node-agent/certificates.js');
  const { certPem, keyPem } = await selfSignedServing(`${host}@${Math.floor(Date.now() / 1000)}`, [host, 'localhost']);
  const { REQUEST_LIMITS } = await import('../common/http-limits.js');
  const { healthAnswer } = await import('../kube/endpoints.js');
  const server = createServer({ ...REQUEST_LIMITS, cert: certPem, key: keyPem }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' || path === '/livez') healthAnswer(req, res, manager.healthChecks('live'), path.slice(1));
    else if (path === '/readyz') healthAnswer(req, res, manager.healthChecks('ready'), 'readyz');
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
  });
  const { listenOn } = await import('../common/http-server.js');
  await listenOn(server, port, host);
  return () => server.close();
}

/** --bind-address/--secure-port as a local machine serves them: a loopback address (the machine's own in a pod); port 0 turns it off. */
export function securePort(values: KubeFlagValues, fallbackPort: number, machineHost: (h: string) => string): { host: string; port: number } | undefined {
  const port = Number(values.get('secure-port') ?? String(fallbackPort));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--secure-port must be a port number, got "${values.get('secure-port')}"`);
  if (port === 0) return undefined;
  const bind = values.get('bind-address') ?? '127.0.0.1';
  const host = machineHost(bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind);
  if (!host.startsWith('127.')) throw new Error(`bosun serves on loopback addresses only (127.0.0.0/8), not --bind-address ${bind}`);
  return { host, port };
}
