// The flags every component command shares, and the short declaration a component command is.
// `addManagerFlags(command, defaults)` adds them to a commander Command:
//   --kubeconfig <file>                 else $KUBECONFIG, ~/.kube/config, the in-cluster account
//   --metrics-listen <host:port|off>    Prometheus /metrics, HTTPS, for callers the API server
//                                       authenticates and authorises (get on /metrics)
//   --tls-cert-file / --tls-private-key-file   its certificate (reloaded when the files change);
//                                       without them a self-signed one made at start
//   --health-listen <host:port|off>     /healthz, /livez, /readyz (may equal --metrics-listen)
//   --leader-elect [bool] / --no-leader-elect, --lease-duration, --renew-deadline, --retry-period
//                                       (seconds; renew deadline < lease duration, as client-go)
//   --log-level <level>                 trace, debug, info, warn, error, fatal, silent
// (`--metrics-port <port>`, the machine-config controller's old flag, stays accepted, hidden, as
// --metrics-listen 127.0.0.1:<port>.) `managerOptionsFromFlags` validates them into
// ManagerOptions; `registerComponent` declares a whole command: its own flags, the shared ones,
// and a setup that adds its runnables to the manager the command then runs until SIGTERM.
// `releaseVersionOption(clusterOperator)` is the --release-version flag of a component that
// reports a ClusterOperator.
import { Option, type Command } from 'commander';
import { LOG_LEVELS, logger } from '../common/log.js';
import { parseHostPort } from '../common/listen.js';
import { Manager, type Listen, type ManagerOptions } from './manager.js';
import { releaseVersionFromEnvironment } from './operator-status.js';

export interface ManagerFlags {
  kubeconfig?: string;
  metricsListen: string;
  healthListen: string;
  metricsPort?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  leaderElect: boolean;
  leaseDuration: string;
  renewDeadline: string;
  retryPeriod: string;
  logLevel: string;
}

export interface ManagerFlagDefaults {
  /** Default "off". */
  metricsListen?: string;
  /** Default "off". */
  healthListen?: string;
  /** Default true. */
  leaderElect?: boolean;
  /** Seconds; default OpenShift's 137 / 107 / 26. */
  leaseDuration?: number;
  renewDeadline?: number;
  retryPeriod?: number;
  /** The --kubeconfig help, when the component says more than the default. */
  kubeconfigHelp?: string;
}

/** Go's strconv.ParseBool, as Kubernetes components read --leader-elect=<bool>. */
function parseBool(text: string, flag: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new Error(`${flag} must be true or false, got "${text}"`);
}

export function addManagerFlags(command: Command, defaults: ManagerFlagDefaults = {}): Command {
  return command
    .option('--kubeconfig <file>', defaults.kubeconfigHelp ?? 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account)')
    .option('--metrics-listen <host:port>', 'serve Prometheus metrics on https://HOST:PORT/metrics to callers the API server authorises (get on /metrics), or "off"', defaults.metricsListen ?? 'off')
    .option('--tls-cert-file <file>', "the metrics endpoint's certificate, PEM (reloaded when it changes; default: self-signed at start)")
    .option('--tls-private-key-file <file>', "the certificate's private key, PEM")
    .option('--health-listen <host:port>', 'serve /healthz, /livez and /readyz on http://HOST:PORT, or "off"', defaults.healthListen ?? 'off')
    .option('--leader-elect [bool]', 'act only while holding the component\'s Lease', (v: string) => parseBool(v, '--leader-elect'), defaults.leaderElect ?? true)
    .option('--no-leader-elect', 'run without the Lease (one instance only)')
    .option('--lease-duration <seconds>', 'leader election: how long a Lease not renewed stays taken', String(defaults.leaseDuration ?? 137))
    .option('--renew-deadline <seconds>', 'leader election: a leader that could not renew for this long stops acting', String(defaults.renewDeadline ?? 107))
    .option('--retry-period <seconds>', 'leader election: how often the Lease is renewed or tried', String(defaults.retryPeriod ?? 26))
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default(process.env.BOSUN_LOG_LEVEL ?? 'info'))
    .addOption(new Option('--metrics-port <port>', 'deprecated: --metrics-listen 127.0.0.1:<port>').hideHelp());
}

function listenOrOff(text: string, flag: string): Listen | undefined {
  return text === 'off' ? undefined : parseHostPort(text, flag);
}

function positiveSeconds(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) throw new Error(`${flag} must be a positive number of seconds, got "${text}"`);
  return n * 1000;
}

/** Validates the shared flags into a manager's options; `lease` is the component's Lease. */
export function managerOptionsFromFlags(flags: ManagerFlags, component: { name: string; lease: { namespace: string; name: string } }): ManagerOptions {
  let metricsListen = listenOrOff(flags.metricsListen, '--metrics-listen');
  if (flags.metricsPort !== undefined) {
    const port = Number(flags.metricsPort);
    if (!(Number.isInteger(port) && port >= 0 && port < 65536)) throw new Error(`--metrics-port must be a port number, got "${flags.metricsPort}"`);
    logger(component.name).warn('--metrics-port is deprecated: use --metrics-listen 127.0.0.1:<port>');
    metricsListen = { host: '127.0.0.1', port };
  }
  const leaseDurationMs = positiveSeconds(flags.leaseDuration, '--lease-duration');
  const renewDeadlineMs = positiveSeconds(flags.renewDeadline, '--renew-deadline');
  const retryPeriodMs = positiveSeconds(flags.retryPeriod, '--retry-period');
  if (renewDeadlineMs >= leaseDurationMs) throw new Error('--renew-deadline must be shorter than --lease-duration');
  // client-go's rule: a renewal attempt, jittered by up to 1.2, must fit in the renew deadline.
  if (retryPeriodMs * 1.2 >= renewDeadlineMs) throw new Error('--renew-deadline must be longer than 1.2 × --retry-period');
  if (Boolean(flags.tlsCertFile) !== Boolean(flags.tlsPrivateKeyFile)) throw new Error('--tls-cert-file and --tls-private-key-file go together: give both or neither');
  return {
    name: component.name,
    kubeconfig: flags.kubeconfig,
    metricsListen,
    metricsTls: flags.tlsCertFile && flags.tlsPrivateKeyFile ? { certFile: flags.tlsCertFile, keyFile: flags.tlsPrivateKeyFile } : undefined,
    healthListen: listenOrOff(flags.healthListen, '--health-listen'),
    leaderElection: flags.leaderElect ? { ...component.lease, leaseDurationMs, renewDeadlineMs, retryPeriodMs } : undefined,
    logLevel: flags.logLevel,
  };
}

/** `--release-version`: the release a component reports on ClusterOperator/<clusterOperator>; $RELEASE_VERSION when not given. */
export function releaseVersionOption(clusterOperator: string): Option {
  return new Option('--release-version <version>', `the release reported on ClusterOperator/${clusterOperator} (default: $RELEASE_VERSION)`).default(releaseVersionFromEnvironment());
}

/** A component command, declared. */
export interface ComponentCommand<O extends object> {
  name: string;
  description: string;
  /** The Lease --leader-elect campaigns for. */
  lease: { namespace: string; name: string };
  /** The source component of its Events (default: name). */
  eventSource?: string;
  defaults?: ManagerFlagDefaults;
  /** The component's own flags (listed before the shared ones). */
  flags?: (command: Command) => void;
  /** Text after the flags in --help (what it does, examples). */
  help?: string;
  /** Validates the component's flags and adds its runnables (and metrics, checks) to the manager. */
  setup(manager: Manager, options: O & ManagerFlags): Promise<void> | void;
}

/** Registers a component command that runs a manager until SIGTERM/SIGINT. */
export function registerComponent<O extends object>(program: Command, spec: ComponentCommand<O>): Command {
  const command = program.command(spec.name).description(spec.description);
  spec.flags?.(command);
  addManagerFlags(command, spec.defaults);
  if (spec.help) command.addHelpText('after', spec.help);
  command.action(async (options: O & ManagerFlags) => {
    const manager = new Manager({ ...managerOptionsFromFlags(options, spec), eventSource: spec.eventSource, handleSignals: true });
    await spec.setup(manager, options);
    await manager.start();
  });
  return command;
}
