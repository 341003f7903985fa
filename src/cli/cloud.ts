// `bosun cloud …`: the local cloud. `serve` runs it (state and machines in the data directory);
// the other subcommands talk to a running one, found through --cloud-url or the endpoint file in
// --data-dir, and print what they did as a cloud CLI does. Only `serve` loads the service itself.
import { rfc3339 } from '../common/time.js';
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { DEFAULT_INSTANCE_TYPE, INSTANCE_TYPES, ZONES } from '../cloud/catalogue.js';
import { CloudClient, rootCredentialPath } from '../cloud/client.js';
import { readEndpoint } from '../cloud/endpoint.js';
import type { IgnitionMode } from '../cloud/firmware.js';
import { DEFAULT_BOOT_DELAY_MS, type Operation } from '../cloud/lifecycle.js';
import { INSTANCE_STATES, type Instance, type InstanceState } from '../cloud/types.js';
import { parseHostPort } from '../common/listen.js';
import { exitOnSignals } from './signals.js';
import { columns } from './columns.js';

interface Connection { cloudUrl?: string; dataDir: string; cloudCredentialsFile?: string }

/** The cloud's client with the root credential of --data-dir (the user is the cloud's owner), or the one given. */
function client(o: Connection): CloudClient {
  return CloudClient.withCredentialFile(o.cloudUrl ?? readEndpoint(o.dataDir), o.cloudCredentialsFile ?? rootCredentialPath(o.dataDir));
}

/** Every subcommand takes the connection options, so they can follow its own arguments. */
function connected(cmd: Command, withUrl = true): Command {
  if (withUrl) {
    cmd.option('--cloud-url <url>', 'URL of a running local cloud (instead of finding it through --data-dir)')
      .option('--cloud-credentials-file <file>', 'the credential to call the cloud with (default: the root credential, <data-dir>/cloud/root.credential)');
  }
  return cmd.option('--data-dir <dir>', 'data directory of the local cloud', '.bosun');
}

function launched(i: Instance): string {
  return rfc3339(new Date(i.launchTime));
}

export function instancesTable(instances: Instance[]): string {
  return columns([
    ['INSTANCE ID', 'NAME', 'TYPE', 'ZONE', 'STATE', 'PRIVATE IP', 'LAUNCHED'],
    ...instances.map((i) => [i.id, i.name, i.type, i.zone, i.state, i.privateIp, launched(i)]),
  ]);
}

function parseDuration(text: string, flag: string): number {
  const m = /^(\d+)(ms|s)?$/.exec(text);
  if (!m) throw new Error(`${flag} must be a duration such as 3s or 500ms, got "${text}"`);
  return Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
}

/** An instance ID as given, or the ID of the one live instance with that name. */
async function resolveInstance(c: CloudClient, ref: string): Promise<Instance> {
  if (/^i-[0-9a-f]{17}$/.test(ref)) return c.getInstance(ref);
  if (ref.startsWith('i-')) throw new Error(`"${ref}" is not an instance ID (i- and 17 hex digits) and instance names cannot start with "i-"`);
  const found = (await c.listInstances({ names: [ref] })).filter((i) => i.state !== 'terminated');
  if (found.length === 0) throw new Error(`no instance named "${ref}" (bosun cloud instances lists them)`);
  return found[0];
}

const CONNECTION_HELP = `
The cloud is found with --cloud-url, or through the endpoint file that "bosun cloud serve" writes
in --data-dir (default .bosun). Every call carries a credential: the root one the cloud made in
<data-dir>/cloud/root.credential, or --cloud-credentials-file; without it the cloud answers 401.`;

export function register(program: Command): void {
  const cloud = program
    .command('cloud')
    .description('the local cloud: instances (machines that boot from Ignition), load balancers and routes')
    .addHelpText('after', `${CONNECTION_HELP}

Examples:
  bosun cloud serve --data-dir .bosun --listen 127.0.0.1:8900
  bosun cloud create worker-0 --type local.medium --zone local-a --user-data-file worker.ign
  bosun cloud instances --state running`);

  connected(cloud.command('serve'), false)
    .description('run the local cloud: its HTTP API on a loopback address, its state and machines in the data directory, its load balancers on haproxy (on its own Node proxy when haproxy is not installed)')
    .option('--listen <host:port>', 'loopback address to listen on (port 0: any free port)', '127.0.0.1:0')
    .option('--boot-delay <duration>', 'how long a rebooting machine stays down', `${DEFAULT_BOOT_DELAY_MS / 1000}s`)
    .option('--ignition <mode>', 'first-boot Ignition: auto (the real client when installed), binary, or builtin', 'auto')
    .addHelpText('after', `
Prints the URL it listens on and writes it to <data-dir>/cloud/endpoint.json. State is kept in
<data-dir>/cloud/state.db; machine roots in <data-dir>/machines/<instance-id>/root. Callers need a
credential: the first start makes the root one, <data-dir>/cloud/root.credential (0600), and keeps
the identities' hashed credentials in <data-dir>/cloud/credentials.db; every call made with one is
a JSON line of <data-dir>/cloud/audit.log. Runs until
SIGINT/SIGTERM; machines that were running boot again when it is started again.

What carries the load balancers: BOSUN_LB_ENGINE=auto (the default: haproxy, or the Node proxy
when haproxy is not installed), haproxy, nftables (the kernel: destination NAT in a table of its
own; needs nft and root or CAP_NET_ADMIN) or node. bosun start passes it on to its cloud.

Example:
  bosun cloud serve --data-dir .bosun --listen 127.0.0.1:8900 --boot-delay 3s`)
    .action(async (o: { listen: string; bootDelay: string; ignition: string; dataDir: string }) => {
      const { dataDir } = o;
      const { host, port } = parseHostPort(o.listen, '--listen');
      if (!['auto', 'binary', 'builtin'].includes(o.ignition)) throw new Error(`--ignition must be auto, binary or builtin, got "${o.ignition}"`);
      // Loaded here so that the client subcommands do not load the server, its database and Ignition.
      const { CloudService } = await import('../cloud/service.js');
      const { secureDataDir } = await import('../common/private-files.js');
      secureDataDir(dataDir);
      const { NodeAgentRuntime } = await import('../cluster/node-agent/runtime.js');
      const service = new CloudService({ dataDir, host, port, bootDelayMs: parseDuration(o.bootDelay, '--boot-delay'), ignition: o.ignition as IgnitionMode, runtime: new NodeAgentRuntime() });
      const url = await service.start();
      exitOnSignals(() => service.close());
      console.log(`local cloud listening on ${url} (data dir ${dataDir})`);
    });

  connected(cloud.command('instances'))
    .description('list instances')
    .option('--state <states>', `only instances in these states, comma-separated (${INSTANCE_STATES.join(', ')})`)
    .option('--name <names>', 'only instances with these names, comma-separated')
    .option('-o, --output <format>', 'table or json', 'table')
    .addHelpText('after', `
Prints one row per instance: INSTANCE ID, NAME, TYPE, ZONE, STATE, PRIVATE IP, LAUNCHED
(terminated instances stay listed for an hour). -o json prints the instances as the API returns them.
${CONNECTION_HELP}

Example:
  bosun cloud instances --state running,pending`)
    .action(async (o: Connection & { state?: string; name?: string; output: string }) => {
      if (!['table', 'json'].includes(o.output)) throw new Error(`--output must be table or json, got "${o.output}"`);
      const states = o.state?.split(',').map((s) => s.trim()).filter(Boolean);
      for (const s of states ?? []) if (!INSTANCE_STATES.includes(s as InstanceState)) throw new Error(`--state: "${s}" is not an instance state (${INSTANCE_STATES.join(', ')})`);
      const instances = await client(o).listInstances({ states: states as InstanceState[] | undefined, names: o.name?.split(',').filter(Boolean) });
      if (o.output === 'json') console.log(JSON.stringify(instances, null, 2));
      else if (instances.length === 0) console.log('No instances.');
      else console.log(instancesTable(instances));
    });

  connected(cloud.command('create <name>'))
    .description('create an instance; it boots from its user data (an Ignition config)')
    .option('--type <type>', `instance type (${INSTANCE_TYPES.map((t) => `${t.name}: ${t.cpu} CPU, ${t.memoryMiB / 1024}Gi`).join('; ')})`, DEFAULT_INSTANCE_TYPE)
    .option('--zone <zone>', `zone (${ZONES.join(', ')}; default: the one with the fewest instances)`)
    .option('--user-data-file <file>', 'Ignition config to boot from, e.g. a pointer config to the machine-config server')
    .addHelpText('after', `
Prints the new instance as a row of INSTANCE ID, NAME, TYPE, ZONE, STATE (pending while it
boots), PRIVATE IP, LAUNCHED.
${CONNECTION_HELP}

Example:
  bosun cloud create worker-0 --type local.medium --zone local-b --user-data-file worker-pointer.ign`)
    .action(async (name: string, o: Connection & { type: string; zone?: string; userDataFile?: string }) => {
      let userData: string | undefined;
      if (o.userDataFile) {
        try { userData = readFileSync(o.userDataFile, 'utf8'); } catch (e) {
          throw new Error(`--user-data-file: cannot read ${o.userDataFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      const instance = await client(o).createInstance({ name, type: o.type, ...(o.zone ? { zone: o.zone } : {}), ...(userData !== undefined ? { userData } : {}) });
      console.log(instancesTable([instance]));
    });

  const operations: Record<Operation, string> = {
    start: 'start stopped instances (they boot again, without Ignition)',
    stop: 'stop instances (the machine shuts down; its root is kept)',
    reboot: 'reboot running instances (down for the boot delay, then up with a new boot ID)',
    terminate: 'terminate instances (the machine shuts down and its root is removed)',
  };
  for (const [op, description] of Object.entries(operations) as [Operation, string][]) {
    connected(cloud.command(`${op} <instance...>`))
      .description(description)
      .addHelpText('after', `
<instance> is an instance ID (i-…) or a name. Prints INSTANCE ID, NAME, PREVIOUS STATE,
CURRENT STATE for each.
${CONNECTION_HELP}

Example:
  bosun cloud ${op} worker-0`)
      .action(async (refs: string[], o: Connection) => {
        const c = client(o);
        const rows: string[][] = [['INSTANCE ID', 'NAME', 'PREVIOUS STATE', 'CURRENT STATE']];
        for (const ref of refs) {
          const before = await resolveInstance(c, ref);
          const after = await c.operate(op, before.id);
          rows.push([after.id, after.name, before.state, after.state]);
        }
        console.log(columns(rows));
      });
  }
}
