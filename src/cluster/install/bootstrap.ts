// The bootstrap components, run in the bring-up process as OpenShift's bootstrap node runs them:
// the machine-config server that the masters' first boot fetches from, the machine-config
// operator and controller that render the pools it serves, the cloud-controller-manager operator
// (whose CCM initialises the nodes), and the cluster-version operator that applies the payload. Each holds its component's Lease (short timings, so that a restarted
// bring-up does not wait on its own old Lease) and can be stopped on its own: stopping releases
// the Lease at once, so the operator's pod on a master takes over — the hand-over.
//
// Without machines nothing ever takes over: the bootstrap components run the cluster for as long
// as the process runs, and report ClusterOperator/cluster-api as well (no cloud, so no
// infrastructure provider: Cluster API manages no machines), which no pod would.
import { loadKubeConfig } from '../../kube/kubeconfig.js';
import { createCA, issueServingCert, loadOrCreate } from '../../common/pki.js';
import { runClusterVersionOperator } from '../../cvo/operator.js';
import { Manager } from '../../kube/manager.js';
import { CLOUD_CONTROLLER_MANAGER_OPERATOR, addCloudControllerManagerOperator } from '../../ccm-operator/operator/operator.js';
import { MACHINE_CONFIG_CONTROLLER, addMachineConfigController } from '../../mco/controller/run.js';
import { MACHINE_CONFIG_OPERATOR, addMachineConfigOperator } from '../../mco/operator/operator.js';
import { ApiRenderedConfigSource } from '../../mco/server/api-config-source.js';
import { addClusterApiControllers } from '../../capi/controllers.js';
import { MachineConfigServer } from '../../mco/server/server.js';
import { shortLease } from './control-plane.js';
import { bounded } from '../../common/bounded.js';

const SHORT_LEASE = shortLease('bootstrap');
/** How long a bootstrap part may take to stop after its abort (at the hand-over, and at a stop). */
const PART_STOP_BOUND_MS = 30_000;

export interface BootstrapOptions {
  /** Each component connects on its own (as its own process would): one client's connection
   *  pool is not shared by every watch of the bootstrap. */
  kubeconfigPath: string;
  pkiDir: string;
  releaseStore: string;
  releaseVersion: string;
  /** Where the bootstrap machine-config server listens. */
  server: { host: string; tlsPort: number; httpPort: number };
  /** Names and addresses the server's certificate is valid for, beside its host. */
  serverNames: string[];
  /** The kubelet's bootstrap kubeconfig the server gives booting machines. */
  bootstrapKubeconfig?: string;
  /** The port machines' user data points at (the api-int balancer's, or this server's). */
  userDataPort?: number;
  upstreamPollMs?: number;
  /** No machines: report ClusterOperator/cluster-api here (no pod will). */
  clusterApiReport?: boolean;
  say: (line: string) => void;
}

type Part = 'cvo' | 'operator' | 'controller' | 'server' | 'ccm-operator' | 'cluster-api';

export class Bootstrap {
  private readonly stops = new Map<Part, AbortController>();
  private readonly running = new Map<Part, Promise<unknown>>();
  server!: MachineConfigServer;

  private constructor(private readonly o: BootstrapOptions) {}

  static async start(o: BootstrapOptions): Promise<Bootstrap> {
    const b = new Bootstrap(o);
    try {
      await b.startServer();
      b.startOperators();
    } catch (e) {
      await b.stop();
      throw e;
    }
    return b;
  }

  private signal(part: Part): AbortSignal {
    const stop = new AbortController();
    this.stops.set(part, stop);
    return stop.signal;
  }

  private track(part: Part, running: Promise<unknown>): void {
    this.running.set(part, running.catch((e) => this.o.say(`      bootstrap ${part} stopped: ${(e as Error).message}`)));
  }

  private async startServer(): Promise<void> {
    const { host, tlsPort, httpPort } = this.o.server;
    // The server's certificate comes from the cluster CA, which the user data tells machines to trust.
    const ca = await loadOrCreate(this.o.pkiDir, 'ca', () => createCA('bosun-ca'));
    const cert = await loadOrCreate(this.o.pkiDir, 'machine-config-server', () => issueServingCert(ca, 'machine-config-server', [...new Set(['127.0.0.1', 'localhost', host, ...this.o.serverNames])]));
    const manager = new Manager({ name: 'machine-config-server', kubeconfig: loadKubeConfig(this.o.kubeconfigPath) });
    this.server = new MachineConfigServer({
      source: new ApiRenderedConfigSource(manager.informers),
      tls: { cert: cert.certPem, key: cert.keyPem, ca: ca.certPem },
      listenTls: { host, port: tlsPort },
      listenHttp: { host, port: httpPort },
      bootstrapKubeconfig: this.o.bootstrapKubeconfig,
    });
    const running = manager.add(this.server).start(this.signal('server'));
    this.track('server', running);
    await Promise.race([this.server.listening, running.then(() => Promise.reject(new Error('the machine-config server stopped before listening')))]);
  }

  private startOperators(): void {
    const kubeconfig = () => loadKubeConfig(this.o.kubeconfigPath);
    const operator = new Manager({ ...MACHINE_CONFIG_OPERATOR, kubeconfig: kubeconfig(), leaderElection: { ...MACHINE_CONFIG_OPERATOR.lease, ...SHORT_LEASE } });
    addMachineConfigOperator(operator, { releaseVersion: this.o.releaseVersion, followDeployment: true, serverPort: this.o.userDataPort ?? this.server.port('tls') });
    this.track('operator', operator.start(this.signal('operator')));
    const controller = new Manager({ ...MACHINE_CONFIG_CONTROLLER, kubeconfig: kubeconfig(), leaderElection: { ...MACHINE_CONFIG_CONTROLLER.lease, ...SHORT_LEASE } });
    addMachineConfigController(controller, { renderDelayMs: 500 });
    this.track('controller', controller.start(this.signal('controller')));
    // The cloud-controller-manager operator: it deploys the CCM that initialises the masters (or,
    // without a cloud, reports that none is needed) before the payload's operator pod can run.
    const ccmOperator = new Manager({ ...CLOUD_CONTROLLER_MANAGER_OPERATOR, kubeconfig: kubeconfig(), leaderElection: { ...CLOUD_CONTROLLER_MANAGER_OPERATOR.lease, ...SHORT_LEASE } });
    addCloudControllerManagerOperator(ccmOperator, { releaseVersion: this.o.releaseVersion, followDeployment: true });
    this.track('ccm-operator', ccmOperator.start(this.signal('ccm-operator')));
    if (this.o.clusterApiReport) {
      const clusterApi = new Manager({ name: 'cluster-api-controllers', kubeconfig: kubeconfig() });
      addClusterApiControllers(clusterApi, { releaseVersion: this.o.releaseVersion, followDeployment: true });
      this.track('cluster-api', clusterApi.start(this.signal('cluster-api')));
    }
    this.track('cvo', runClusterVersionOperator({
      kubeconfig: kubeconfig(),
      releaseStore: this.o.releaseStore,
      signal: this.signal('cvo'),
      upstreamPollMs: this.o.upstreamPollMs,
      onProgress: (message) => this.o.say(`      ${message}`),
      leaderElection: SHORT_LEASE,
    }));
  }

  /** Stops these parts (each releases its Lease) and waits until they have stopped. */
  async stopParts(...parts: Part[]): Promise<void> {
    for (const part of parts) this.stops.get(part)?.abort();
    // Each part ends once its loops see the abort; one that does not is named rather than waited for.
    const stuck = (await Promise.all(parts.map((p) => bounded(this.running.get(p) ?? Promise.resolve(), PART_STOP_BOUND_MS, `bootstrap ${p} stopping`).then(() => undefined, (e: Error) => e.message)))).filter(Boolean);
    for (const part of parts) {
      this.stops.delete(part);
      this.running.delete(part);
    }
    if (stuck.length > 0) throw new Error(stuck.join('; '));
  }

  /** What still runs here. */
  parts(): Part[] {
    return [...this.stops.keys()];
  }

  async stop(): Promise<void> {
    await this.stopParts(...this.parts());
  }
}
