// `bosun machine-config-server`: serves each pool's rendered config as Ignition to booting
// machines, from the cluster's pools or a directory of rendered MachineConfig objects
// (`<pool>.json`), on the component manager until SIGTERM.
import type { Command } from 'commander';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileRenderedConfigSource, type RenderedConfigSource } from '../mco/server/rendered-config-source.js';
import { ApiRenderedConfigSource } from '../mco/server/api-config-source.js';
import { registerComponent } from '../kube/manager-flags.js';
import { DEFAULT_HTTP_PORT, DEFAULT_TLS_PORT, MachineConfigServer, type Listen } from '../mco/server/server.js';
import { generateCa, issueServingCert, type ServingTls } from '../mco/server/serving-tls.js';
import { logger } from '../common/log.js';
import { podPath } from '../common/pod-path.js';

interface Options {
  configDir?: string;
  listenTls: string;
  listenHttp: string;
  cert?: string;
  key?: string;
  ca?: string;
  caKey?: string;
  tlsDir: string;
  san: string[];
  bootstrapKubeconfig?: string;
}

function parseListen(text: string, flag: string): Listen | null {
  if (text === 'off') return null;
  const m = /^(.*):(\d+)$/.exec(text);
  if (!m) throw new Error(`${flag} must be HOST:PORT or "off", got "${text}"`);
  return { host: m[1].replace(/^\[|\]$/g, '') || '0.0.0.0', port: Number(m[2]) };
}

async function servingTls(o: Options): Promise<ServingTls> {
  if (o.cert || o.key) {
    if (!o.cert || !o.key) throw new Error('--cert and --key go together');
    const cert = readFileSync(o.cert, 'utf8');
    return { cert, key: readFileSync(o.key, 'utf8'), ca: o.ca ? readFileSync(o.ca, 'utf8') : cert };
  }
  const hosts = ['localhost', '127.0.0.1', ...o.san];
  if (o.ca) {
    if (!o.caKey) throw new Error('--ca without --cert/--key needs --ca-key to sign a serving certificate');
    return issueServingCert({ cert: readFileSync(o.ca, 'utf8'), key: readFileSync(o.caKey, 'utf8') }, hosts);
  }
  const ca = await generateCa();
  mkdirSync(o.tlsDir, { recursive: true });
  writeFileSync(join(o.tlsDir, 'ca.crt'), ca.cert);
  writeFileSync(join(o.tlsDir, 'ca.key'), ca.key, { mode: 0o600 });
  logger('machine-config-server').info({ ca: join(o.tlsDir, 'ca.crt') }, 'generated a CA; clients must trust it');
  return issueServingCert(ca, hosts);
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'machine-config-server',
    lease: { namespace: 'openshift-machine-config-operator', name: 'machine-config-server' },
    // Every replica serves (OpenShift runs one per control-plane node): nothing waits for a Lease.
    defaults: { leaderElect: false, kubeconfigHelp: "serve each MachineConfigPool's rendered config from the cluster (default source; $KUBECONFIG or in-cluster when neither this nor --config-dir is given)" },
    description: 'serve rendered machine configs as Ignition to booting machines (GET|HEAD /config/<pool>)',
    flags: (command) =>
      command
        .option('--config-dir <dir>', 'serve from a directory of rendered MachineConfig objects instead, one <pool>.json per pool (reloaded on change)')
        .option('--listen-tls <host:port>', 'TLS listener, or "off"', `0.0.0.0:${DEFAULT_TLS_PORT}`)
        .option('--listen-http <host:port>', 'plain-HTTP listener, or "off"', `0.0.0.0:${DEFAULT_HTTP_PORT}`)
        .option('--cert <file>', 'serving certificate (PEM); with --key')
        .option('--key <file>', 'serving key (PEM); with --cert')
        .option('--ca <file>', 'CA certificate (PEM): the CA of --cert, or the CA that signs a generated serving certificate (with --ca-key)')
        .option('--ca-key <file>', 'key of --ca, to sign a generated serving certificate')
        .option('--tls-dir <dir>', 'where a generated CA is written when no certificate options are given', '.bosun/machine-config-server')
        .option('--san <host>', 'extra DNS name or IP for a generated serving certificate (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
        .option('--bootstrap-kubeconfig <file>', 'kubelet bootstrap kubeconfig to serve at /etc/kubernetes/kubeconfig'),
    help: `
Accept negotiation: application/vnd.coreos.ignition+json;version=X (q-ordered). 3.0–3.5 are
served as asked (a newer 3.x gets 3.5), 2.x gets a 2.2 translation, no Ignition type gets 3.4.0,
anything else 400. Unknown pools 404. The config listeners also answer /healthz; metrics are on
--metrics-listen (HTTPS, for callers the cluster's API server authorises: not with --config-dir).
The server runs on every replica: --leader-elect holds no work back.

In a cluster a pool's config is the rendered MachineConfig its spec.configuration names.

Examples:
  bosun machine-config-server --kubeconfig .bosun/kubeconfig --listen-tls 127.0.0.1:22623 --listen-http 127.0.0.1:22624
  bosun machine-config-server --config-dir ./rendered --listen-tls 127.0.0.1:22623 --listen-http 127.0.0.1:22624`,
    async setup(manager, given) {
      // Files given by absolute path are found where the pod's volumes are (see podPath).
      const o: Options = { ...given, configDir: podPath(given.configDir), cert: podPath(given.cert), key: podPath(given.key), ca: podPath(given.ca), caKey: podPath(given.caKey), tlsDir: podPath(given.tlsDir), bootstrapKubeconfig: podPath(given.bootstrapKubeconfig) };
      const listenTls = parseListen(o.listenTls, '--listen-tls');
      const listenHttp = parseListen(o.listenHttp, '--listen-http');
      if (o.configDir && given.kubeconfig) throw new Error('--config-dir and --kubeconfig are two sources; give one');
      if (o.configDir && given.metricsListen !== 'off') throw new Error('--metrics-listen needs a cluster: metrics are served only to callers its API server authorises, and --config-dir has none');
      const source: RenderedConfigSource = o.configDir ? new FileRenderedConfigSource(o.configDir).watch() : new ApiRenderedConfigSource(manager.informers);
      const server = new MachineConfigServer({
        source,
        tls: listenTls ? await servingTls(o) : undefined,
        listenTls,
        listenHttp,
        bootstrapKubeconfig: o.bootstrapKubeconfig ? readFileSync(o.bootstrapKubeconfig, 'utf8') : undefined,
      });
      manager.add(server).addMetrics(server.metrics.registry);
    },
  });
}
