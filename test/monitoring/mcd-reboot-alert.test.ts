// MCDRebootError, end to end: a real machine-config daemon updates a machine (its root in a
// temporary directory) whose reboot fails — the fault the test controls is on the host, where the
// reboot request goes (/run/systemd is not a directory, so the scheduled-shutdown record that
// `shutdown -r` writes cannot be: the host's reboot command fails), and the daemon counts it in
// mcd_reboots_failed_total as OpenShift's does. The monitoring operator (`bosun
// cluster-monitoring-operator --alert-for-override 1s`, a process) turns the payload's
// machine-config ServiceMonitor and PrometheusRule into Prometheus's configuration and rule files;
// the test lays those out in a pod-like sandbox as the node agent mounts them, and Debian's
// Prometheus (`bosun prometheus`) scrapes the daemon over HTTPS as prometheus-k8s (service-CA
// certificate, TokenReview + SubjectAccessReview) and fires MCDRebootError, its `for: 5m`
// shortened to 1s by the flag. Skipped without /usr/bin/prometheus (failed under CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { renderSource } from '../../src/cvo/payload/build.js';
import { freePort } from '../../src/common/listen.js';
import { KubeClient, Manager, loadKubeConfig, resources } from '../../src/kube/index.js';
import { MachineConfigDaemon } from '../../src/mco/daemon/daemon.js';
import { RootMountHost } from '../../src/mco/daemon/host.js';
import { CONFIG_DIR, RULES_DIR, SERVICE_ACCOUNT_TOKEN } from '../../src/monitoring/scrape-config.js';
import { bosunBin } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { withDelegatedAuth } from '../helpers/metrics.js';
import { startMcoApiServer } from '../mco/controller-fixtures.js';

const PROMETHEUS = '/usr/bin/prometheus';
const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
const skip = !existsSync(PROMETHEUS) && process.env.CI !== 'true' ? `${PROMETHEUS} is not installed (apt-get install prometheus)` : false;
const MCO_NS = 'openshift-machine-config-operator';
const NODE = 'mcd-reboot';
const A = 'machineconfiguration.openshift.io/';
const FILE = '/etc/bosun-reboot.conf';
const CA_FILE = '/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt';

type Alert = { labels: Record<string, string>; annotations: Record<string, string>; state: string };

/** The payload manifest as the CVO renders it. */
const payload = (file: string) => renderSource(file, readFileSync(join(MANIFESTS, file), 'utf8'), '1.0.0');

const rendered = (name: string, text: string) => ({
  apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: FILE, mode: 0o644, overwrite: true, contents: { source: `data:,${encodeURIComponent(text)}` } }] } } },
});

/** Stops a child process and waits for it. */
async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

test('a machine whose reboot fails: the daemon counts it and Prometheus fires MCDRebootError (for: shortened by --alert-for-override)', { skip, timeout: 300_000 }, async () => {
  const api = await startMcoApiServer();
  const stopAuth = await withDelegatedAuth(api);
  const kube = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const machine = mkdtempSync(join(tmpdir(), 'bosun-mcd-machine-'));
  const pod = mkdtempSync(join(tmpdir(), 'bosun-prom-pod-'));
  const put = (root: string, path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    chmodSync(join(root, path), 0o644);
  };
  const stop = new AbortController();
  let daemon: Manager | undefined;
  let daemonRun: Promise<void> | undefined;
  let operator: ChildProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let output = '';
  let certDir: string | undefined;
  try {
    // The payload's pieces: the monitoring kinds and RBAC (prometheus-k8s), the MCO's namespace,
    // metrics Services, ServiceMonitors and alert rules.
    for (const file of ['0000_50_cluster-monitoring-operator_00_namespace.yaml', '0000_50_cluster-monitoring-operator_00_servicemonitors.crd.yaml', '0000_50_cluster-monitoring-operator_00_prometheusrules.crd.yaml', '0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', '0000_80_machine-config_00_namespace.yaml']) {
      await api.kubectlOk(['apply', '-f', '-'], payload(file));
    }
    await api.kubectlOk(['wait', '--for=condition=Established', '--timeout=30s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com', 'crd/clusteroperators.config.openshift.io']);
    for (const file of ['0000_50_cluster-monitoring-operator_02_rbac.yaml', '0000_80_machine-config_04_metrics.yaml', '0000_90_machine-config_02_servicemonitor.yaml', '0000_90_machine-config_01_prometheus-rules.yaml']) {
      await api.kubectlOk(['apply', '-f', '-'], payload(file));
    }

    // The daemon's serving certificate, from "the service CA", for its Service's DNS name.
    const ca = await createCA('openshift-service-serving-signer');
    const serving = await issueServingCert(ca, `machine-config-daemon.${MCO_NS}.svc`, [`machine-config-daemon.${MCO_NS}.svc`, '127.0.0.1']);
    certDir = mkdtempSync(join(tmpdir(), 'bosun-mcd-tls-'));
    writeFileSync(join(certDir!, 'tls.crt'), serving.certPem);
    writeFileSync(join(certDir!, 'tls.key'), serving.keyPem);

    // The machine, Done on rendered-worker-1.
    put(machine, '/proc/sys/kernel/random/boot_id', 'boot-1\n');
    put(machine, FILE, 'one\n');
    await kube.create(resources.machineConfigs, rendered('rendered-worker-1', 'one\n'));
    await kube.create(resources.machineConfigs, rendered('rendered-worker-2', 'two\n'));
    await kube.create(resources.nodes, {
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: NODE, annotations: { [`${A}currentConfig`]: 'rendered-worker-1', [`${A}desiredConfig`]: 'rendered-worker-1', [`${A}state`]: 'Done' } },
    });
    const metricsPort = await freePort();
    daemon = new Manager({ name: 'machine-config-daemon', kubeconfig: loadKubeConfig(api.kubeconfigPath), metricsListen: { host: '127.0.0.1', port: metricsPort }, metricsTls: { certFile: join(certDir!, 'tls.crt'), keyFile: join(certDir!, 'tls.key') }, logLevel: 'warn' });
    daemon.add(new MachineConfigDaemon(daemon, { nodeName: NODE, host: new RootMountHost(machine), driftCheckIntervalMs: 1000 }));
    daemonRun = daemon.start();
    await daemon.ready;
    // The daemon pod's endpoint behind Service machine-config-daemon (the endpoints controller's work on a cluster).
    await kube.create(resources.endpoints, {
      apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'machine-config-daemon', namespace: MCO_NS },
      subsets: [{ addresses: [{ ip: '127.0.0.1', nodeName: NODE, targetRef: { kind: 'Pod', name: `machine-config-daemon-${NODE}`, namespace: MCO_NS } }], ports: [{ name: 'metrics', port: metricsPort, protocol: 'TCP' }] }],
    });

    // The monitoring operator, with the test-only flag (and rules evaluated every second).
    operator = spawn(process.execPath, [bosunBin, 'cluster-monitoring-operator', '--kubeconfig', api.kubeconfigPath, '--no-leader-elect', '--release-version', '1.0.0', '--alert-for-override', '1s', '--evaluation-interval', '1s', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    operator.stdout!.on('data', (d) => (output += d));
    operator.stderr!.on('data', (d) => (output += d));
    const { secret, rules } = await eventually('the operator\'s configuration for the daemon and its rule files', async () => {
      const s = await kube.read(resources.secrets, 'prometheus-k8s', 'openshift-monitoring');
      const r = await kube.read(resources.configMaps, 'prometheus-k8s-rulefiles-0', 'openshift-monitoring');
      const config = s?.data?.['prometheus.yaml'] && Buffer.from(s.data['prometheus.yaml'], 'base64').toString();
      return config?.includes(`serviceMonitor/${MCO_NS}/machine-config-daemon/0`) && r?.data && Object.keys(r.data).length > 0 && { secret: s!, rules: r };
    }, { timeoutMs: 60_000, intervalMs: 500, detail: () => output });
    const mcdRules = parse(rules.data![`${MCO_NS}-machine-config-daemon.yaml`]);
    const rebootRule = mcdRules.groups.flatMap((g: { rules: Array<{ alert?: string; for?: string }> }) => g.rules).find((r: { alert?: string }) => r.alert === 'MCDRebootError');
    assert.equal(rebootRule.for, '1s', 'the payload\'s for: 5m, shortened by --alert-for-override');

    // Prometheus's pod, as the node agent lays out its volumes: the Secret, the rule files, its
    // service account's token and the service CA bundle.
    for (const [key, value] of Object.entries(secret.data ?? {})) put(pod, `${CONFIG_DIR}/${key}`, Buffer.from(value, 'base64').toString());
    for (const [key, value] of Object.entries(rules.data ?? {})) put(pod, `${RULES_DIR}/${key}`, value);
    put(pod, SERVICE_ACCOUNT_TOKEN, (await api.kubectlOk(['-n', 'openshift-monitoring', 'create', 'token', 'prometheus-k8s'])).trim());
    put(pod, CA_FILE, ca.certPem);
    const promPort = await freePort();
    prometheus = spawn(process.execPath, [bosunBin, 'prometheus', `--listen=127.0.0.1:${promPort}`, '--poll-interval=300'], { env: { ...process.env, BOSUN_IN_CLUSTER_ROOT: pod } });
    prometheus.stdout!.on('data', (d) => (output += d));
    prometheus.stderr!.on('data', (d) => (output += d));
    const prom = async (path: string) => (await (await fetch(`http://127.0.0.1:${promPort}${path}`)).json()) as { data: { result?: Array<{ metric: Record<string, string>; value: [number, string] }>; alerts?: Alert[] } };

    // The fault: the host cannot take a reboot request. Then an update that needs a reboot.
    put(machine, '/run/systemd', 'not a directory\n');
    void (async () => {
      // Plays the drain controller: the daemon drains before it reboots.
      while (!stop.signal.aborted) {
        const a = (await kube.read(resources.nodes, NODE).catch(() => undefined))?.metadata.annotations ?? {};
        const desired = a[`${A}desiredDrain`];
        if (desired && a[`${A}lastAppliedDrain`] !== desired) await kube.mergePatch(resources.nodes, NODE, undefined, { metadata: { annotations: { [`${A}lastAppliedDrain`]: desired } } }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await kube.mergePatch(resources.nodes, NODE, undefined, { metadata: { annotations: { [`${A}desiredConfig`]: 'rendered-worker-2' } } });

    // Prometheus scrapes the daemon as prometheus-k8s, sees the failed reboot, and fires.
    const failed = await eventually('mcd_reboots_failed_total > 0 in Prometheus', async () => {
      const r = await prom(`/api/v1/query?query=${encodeURIComponent('mcd_reboots_failed_total{job="machine-config-daemon"}')}`).catch(() => undefined);
      const sample = r?.data.result?.[0];
      return sample && Number(sample.value[1]) > 0 ? sample : undefined;
    }, { timeoutMs: 120_000, intervalMs: 1000, detail: () => output.split('\n').slice(-20).join('\n') });
    assert.equal(failed.metric.namespace, MCO_NS);
    assert.equal(failed.metric.service, 'machine-config-daemon');
    assert.equal(failed.metric.endpoint, 'metrics');
    const alert = await eventually('MCDRebootError firing', async () => {
      const alerts = (await prom('/api/v1/alerts')).data.alerts ?? [];
      return alerts.find((a) => a.labels.alertname === 'MCDRebootError' && a.state === 'firing');
    }, { timeoutMs: 60_000, intervalMs: 500, detail: () => output.split('\n').slice(-20).join('\n') });
    assert.equal(alert.labels.severity, 'critical');
    assert.equal(alert.labels.namespace, MCO_NS);
    assert.match(alert.annotations.summary, /a node failed to reboot one or more times/);
    assert.match(alert.annotations.description, /update may be blocked/);
    // The node waits in Rebooting with the failure as its last outcome.
    const node = await kube.get(resources.nodes, NODE);
    assert.equal(node.metadata.annotations?.[`${A}state`], 'Rebooting');
  } finally {
    stop.abort();
    await stopChild(prometheus);
    await stopChild(operator);
    daemon?.stop();
    await daemonRun?.catch(() => undefined);
    stopAuth();
    await api.stop();
    rmSync(machine, { recursive: true, force: true });
    rmSync(pod, { recursive: true, force: true });
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  }
});
