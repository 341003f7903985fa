// Kubeconfig loading for every bosun component: an explicit file, else $KUBECONFIG / ~/.kube/config,
// else the in-cluster service account — and connection reuse (one keep-alive agent per cluster and
// set of TLS options, where client-node 1.x builds a new HTTPS agent, so a TLS handshake, for every
// request).
//
// The kubeconfig format is read here rather than by client-node's KubeConfig: importing that one
// loads client-node's whole generated API (some 830 modules, about 70 MiB in every process), while
// a component only needs the connection settings, and a local cluster runs a dozen components as
// processes. What only client-node implements (exec credential plugins, auth providers other than
// a token file, proxies) is handed to client-node's KubeConfig, imported when a kubeconfig uses it.
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { BosunError } from '../common/errors.js';

/** A kubeconfig's cluster entry (client-node's field names, so that its KubeConfig fits too). */
export interface Cluster {
  readonly name: string;
  readonly server: string;
  readonly caData?: string;
  caFile?: string;
  readonly tlsServerName?: string;
  readonly skipTLSVerify: boolean;
  readonly proxyUrl?: string;
}

/** A kubeconfig's user entry. */
export interface User {
  readonly name: string;
  readonly certData?: string;
  certFile?: string;
  readonly keyData?: string;
  keyFile?: string;
  readonly token?: string;
  /** `token-file`: read again at most once a minute, as client-go does. */
  tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly impersonateUser?: string;
  readonly exec?: unknown;
  readonly authProvider?: unknown;
}

export interface Context {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

/** What bosun's clients use of a kubeconfig. client-node's KubeConfig has it too (tests hand theirs in). */
export interface KubeConfigLike {
  getCurrentCluster(): Cluster | null;
  getCurrentUser(): User | null;
  getCurrentContext(): string;
  getContextObject(name: string): Context | null;
  /** Sets the TLS options, credentials and the (kept-alive) agent of a request to the current cluster. */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

/** Where a pod finds its service account's token, CA and namespace (the kubelet mounts them there). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_REREAD_MS = 60_000;

type Raw = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const entries = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter((e): e is Raw => typeof e === 'object' && e !== null) : []);

/** The kubeconfig in `text`: JSON (what bosun writes) or YAML, parsed with `yaml` only then. */
function parseDocument(text: string): Raw {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    doc = parse(text);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('a kubeconfig must be a mapping (apiVersion, clusters, users, contexts, current-context)');
  return doc as Raw;
}

function parseClusters(list: unknown): Cluster[] {
  return entries(list).map((e, i) => {
    const c = (e.cluster ?? undefined) as Raw | undefined;
    if (!str(e.name)) throw new Error(`clusters[${i}].name is missing`);
    if (!c) throw new Error(`clusters[${i}].cluster is missing`);
    if (!str(c.server)) throw new Error(`clusters[${i}].cluster.server is missing`);
    return {
      name: str(e.name)!,
      server: str(c.server)!.replace(/\/$/, ''),
      caData: str(c['certificate-authority-data']),
      caFile: str(c['certificate-authority']),
      tlsServerName: str(c['tls-server-name']),
      skipTLSVerify: c['insecure-skip-tls-verify'] === true,
      proxyUrl: str(c['proxy-url']),
    };
  });
}

function parseUsers(list: unknown): User[] {
  return entries(list).map((e, i) => {
    if (!str(e.name)) throw new Error(`users[${i}].name is missing`);
    const u = (e.user ?? {}) as Raw;
    return {
      name: str(e.name)!,
      certData: str(u['client-certificate-data']),
      certFile: str(u['client-certificate']),
      keyData: str(u['client-key-data']),
      keyFile: str(u['client-key']),
      token: str(u.token),
      tokenFile: str(u['token-file']),
      username: str(u.username),
      password: str(u.password),
      impersonateUser: str(u.as),
      exec: u.exec ?? undefined,
      authProvider: u['auth-provider'] ?? undefined,
    };
  });
}

function parseContexts(list: unknown): Context[] {
  return entries(list).map((e, i) => {
    const c = (e.context ?? undefined) as Raw | undefined;
    if (!str(e.name)) throw new Error(`contexts[${i}].name is missing`);
    if (!c) throw new Error(`contexts[${i}].context is missing`);
    if (!str(c.cluster)) throw new Error(`contexts[${i}].context.cluster is missing`);
    return { name: str(e.name)!, cluster: str(c.cluster)!, user: str(c.user) ?? '', namespace: str(c.namespace) };
  });
}

/** The token file an in-cluster user names (client-node's `tokenFile` auth provider), if that is what it is. */
function providerTokenFile(user: User): string | undefined {
  const provider = user.authProvider as { name?: string; config?: { tokenFile?: string } } | undefined;
  return provider?.config?.tokenFile;
}

/** Whether only client-node can authenticate or connect as this kubeconfig says. */
function needsClientNode(cluster: Cluster | null, user: User | null): boolean {
  return Boolean(cluster?.proxyUrl || user?.exec || (user?.authProvider && !providerTokenFile(user)));
}

/** How often a certificate or key file is checked for a new version (a rotated certificate is used within this). */
const MATERIAL_RECHECK_MS = 1_000;

/**
 * Certificates and keys of a kubeconfig, read once and kept: a file is checked (stat) at most once
 * a second and read again only when it changed, inline data decoded once — not read and decoded
 * on every request. The same Buffer comes back while the content is the same, so agents are found
 * by identity.
 */
class CredentialMaterial {
  private readonly files = new Map<string, { buf: Buffer; stamp: string; checkedAt: number }>();
  private readonly data = new Map<string, Buffer>();

  get(file: string | undefined, data: string | undefined): Buffer | undefined {
    if (file) return this.file(file);
    if (!data) return undefined;
    let buf = this.data.get(data);
    if (!buf) this.data.set(data, (buf = Buffer.from(data, 'base64')));
    return buf;
  }

  private file(path: string): Buffer {
    const now = Date.now();
    const cached = this.files.get(path);
    if (cached && now - cached.checkedAt < MATERIAL_RECHECK_MS) return cached.buf;
    const st = statSync(path);
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (cached && cached.stamp === stamp) {
      cached.checkedAt = now;
      return cached.buf;
    }
    const buf = readFileSync(path);
    this.files.set(path, { buf, stamp, checkedAt: now });
    return buf;
  }
}

type AgentOptions = { ca?: unknown; cert?: unknown; key?: unknown; rejectUnauthorized?: boolean; servername?: string };

/** One keep-alive agent per cluster and set of TLS options. */
class AgentCache {
  private readonly agents = new Map<string, HttpsAgent>();
  /** A small id per distinct certificate or key content; the Buffers seen, by identity. */
  private readonly contents = new Map<string, number>();
  private readonly seen = new WeakMap<object, number>();

  private idOf(v: unknown): string {
    if (v === undefined || v === null) return '';
    if (typeof v === 'object') {
      const known = this.seen.get(v);
      if (known !== undefined) return String(known);
    }
    const content = Array.isArray(v) ? v.map(String).join('\n') : String(v);
    let id = this.contents.get(content);
    if (id === undefined) this.contents.set(content, (id = this.contents.size + 1));
    if (typeof v === 'object') this.seen.set(v as object, id);
    return String(id);
  }

  agentFor(cluster: Cluster | null, options: AgentOptions): HttpsAgent {
    const key = [cluster?.server, cluster?.skipTLSVerify, this.idOf(options.ca), this.idOf(options.cert), this.idOf(options.key), options.rejectUnauthorized, options.servername].join('|');
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new HttpsAgent({ ...(options as ConstructorParameters<typeof HttpsAgent>[0]), keepAlive: true, maxSockets: 32 });
      this.agents.set(key, agent);
    }
    return agent;
  }
}

export class KubeConfig implements KubeConfigLike {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  currentContext = '';
  private readonly agents = new AgentCache();
  private readonly material = new CredentialMaterial();
  private readonly tokens = new Map<string, { token: string; readAt: number }>();
  private delegate?: { key: string; kubeconfig: Promise<KubeConfigLike> };

  getCurrentContext(): string {
    return this.currentContext;
  }

  getContextObject(name: string): Context | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }

  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return (context && this.clusters.find((c) => c.name === context.cluster)) ?? null;
  }

  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return (context && this.users.find((u) => u.name === context.user)) ?? null;
  }

  /** Replaces what this holds with the kubeconfig in `text` (JSON or YAML). */
  loadFromString(text: string): void {
    const doc = parseDocument(text);
    this.clusters = parseClusters(doc.clusters);
    this.users = parseUsers(doc.users);
    this.contexts = parseContexts(doc.contexts);
    this.currentContext = str(doc['current-context']) ?? '';
  }

  /** Replaces what this holds with a kubeconfig file; its relative paths are relative to the file. */
  loadFromFile(file: string): void {
    this.loadFromString(readFileSync(file, 'utf8'));
    const dir = dirname(file);
    for (const c of this.clusters) if (c.caFile) c.caFile = resolve(dir, c.caFile);
    for (const u of this.users) {
      if (u.certFile) u.certFile = resolve(dir, u.certFile);
      if (u.keyFile) u.keyFile = resolve(dir, u.keyFile);
      if (u.tokenFile) u.tokenFile = resolve(dir, u.tokenFile);
    }
  }

  /** The files of $KUBECONFIG merged as kubectl merges them: the first to name a cluster, user or context, or to set current-context, wins. */
  loadFromDefault(): void {
    const files = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
    const merged = new KubeConfig();
    for (const file of files) {
      const one = new KubeConfig();
      one.loadFromFile(file);
      const add = <T extends { name: string }>(into: T[], from: T[]) => from.forEach((e) => into.some((x) => x.name === e.name) || into.push(e));
      add(merged.clusters, one.clusters);
      add(merged.users, one.users);
      add(merged.contexts, one.contexts);
      merged.currentContext ||= one.currentContext;
    }
    ({ clusters: this.clusters, users: this.users, contexts: this.contexts, currentContext: this.currentContext } = merged);
  }

  /** The pod's service account: $KUBERNETES_SERVICE_HOST/PORT, its CA and token (re-read) below `root`. */
  loadFromCluster(root = ''): void {
    const host = process.env.KUBERNETES_SERVICE_HOST ?? '';
    const port = process.env.KUBERNETES_SERVICE_PORT ?? '443';
    const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
    const namespaceFile = `${root}${SERVICE_ACCOUNT_DIR}/namespace`;
    this.clusters = [{ name: 'inCluster', server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: `${root}${SERVICE_ACCOUNT_DIR}/ca.crt`, skipTLSVerify: false }];
    this.users = [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${root}${SERVICE_ACCOUNT_DIR}/token` } } }];
    this.contexts = [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace: existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8') : undefined }];
    this.currentContext = 'inClusterContext';
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    if (needsClientNode(cluster, user)) {
      await (await this.clientNode()).applyToHTTPSOptions(opts);
      return;
    }
    if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
    if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
    const ca = cluster ? this.material.get(cluster.caFile, cluster.caData) : undefined;
    if (ca) opts.ca = ca;
    const headers = (opts.headers ??= {}) as Record<string, string | string[] | number>;
    if (user) {
      const cert = this.material.get(user.certFile, user.certData);
      const key = this.material.get(user.keyFile, user.keyData);
      if (cert) opts.cert = cert;
      if (key) opts.key = key;
      if (user.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
      const tokenFile = providerTokenFile(user) ?? user.tokenFile;
      const token = user.token ?? (tokenFile ? this.readToken(tokenFile) : undefined);
      if (token) headers.Authorization = `Bearer ${token}`;
      if (user.username) opts.auth = `${user.username}:${user.password ?? ''}`;
    }
    // Plain HTTP (an in-cluster port 80/8080/8001) goes without an agent: KubeClient sends it with node:http.
    if (!cluster?.server.startsWith('http:')) opts.agent = this.agents.agentFor(cluster, { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername });
  }

  /** A token file's content, read again once it is a minute old (a bound token is rotated). */
  private readToken(file: string): string {
    const cached = this.tokens.get(file);
    if (cached && Date.now() - cached.readAt <= TOKEN_REREAD_MS) return cached.token;
    const token = readFileSync(file, 'utf8').trim();
    this.tokens.set(file, { token, readAt: Date.now() });
    return token;
  }

  /** client-node's KubeConfig holding the same entries (made again when they change; it caches exec credentials). */
  private clientNode(): Promise<KubeConfigLike> {
    const options = { clusters: this.clusters, users: this.users, contexts: this.contexts, currentContext: this.currentContext };
    const key = JSON.stringify(options);
    if (this.delegate?.key !== key) {
      const kubeconfig = import('@kubernetes/client-node').then((k8s) => {
        const kc = new k8s.KubeConfig();
        kc.loadFromOptions(options);
        return withConnectionReuse(kc, this.agents);
      });
      this.delegate = { key, kubeconfig };
    }
    return this.delegate.kubeconfig;
  }
}

type CreateAgent = (cluster: Cluster | null, options: AgentOptions) => unknown;

/**
 * Makes a client-node KubeConfig reuse connections (one keep-alive agent per cluster and TLS
 * settings). bosun's own KubeConfig does already, and is returned as it is.
 */
export function withConnectionReuse<T extends KubeConfigLike>(kc: T, agents = new AgentCache()): T {
  if (kc instanceof KubeConfig) return kc;
  const target = kc as unknown as { createAgent?: CreateAgent };
  if (typeof target.createAgent !== 'function') return kc;
  const original = target.createAgent.bind(kc);
  target.createAgent = (cluster, options) => {
    // Proxies, and plain HTTP (which client-node refuses unless TLS checks are off), as before.
    if (cluster?.proxyUrl || cluster?.server?.startsWith('http:')) return original(cluster, options);
    return agents.agentFor(cluster, options);
  };
  return kc;
}

/**
 * A kubeconfig that cannot be used: `KubeconfigNotFound` (none anywhere a client looks, or a file
 * named that does not exist) or `KubeconfigNoCurrentCluster`.
 */
export class KubeconfigError extends BosunError {
  constructor(message: string, reason: 'KubeconfigNotFound' | 'KubeconfigNoCurrentCluster' = 'KubeconfigNotFound') {
    super(reason, message);
  }
}

/** How to point at the local cluster (`npm start` writes its kubeconfig to `<data-dir>/kubeconfig`). */
function localClusterHint(): string {
  const local = join('.bosun', 'kubeconfig');
  return existsSync(local)
    ? `The local cluster's kubeconfig is in this directory: export KUBECONFIG=${local}`
    : `For the local cluster, use the kubeconfig \`npm start\` prints (in the directory it runs in): export KUBECONFIG=${local}`;
}

/**
 * Loads a kubeconfig: `path` if given, else $KUBECONFIG or ~/.kube/config, else the in-cluster
 * service account ($KUBERNETES_SERVICE_HOST/PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount — below $BOSUN_IN_CLUSTER_ROOT when set, as the
 * local substrate mounts a pod's secrets). The token file is read again at most once a minute
 * (as client-go does), so rotated bound tokens are picked up. With none of these, or a named file
 * missing, it throws KubeconfigError saying where it looked (rather than falling back to
 * http://localhost:8080 and failing later with a riddle about TLS).
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  const home = process.env.HOME ?? process.env.USERPROFILE;
  const defaultFile = home ? join(home, '.kube', 'config') : undefined;
  const fromEnv = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (path) {
    if (!existsSync(path)) throw new KubeconfigError(`the kubeconfig ${path} does not exist\n${localClusterHint()}`);
    kc.loadFromFile(path);
  } else if (fromEnv.length > 0) {
    const missing = fromEnv.filter((file) => !existsSync(file));
    if (missing.length > 0) throw new KubeconfigError(`$KUBECONFIG names ${missing.join(', ')}, which ${missing.length === 1 ? 'does' : 'do'} not exist\n${localClusterHint()}`);
    kc.loadFromDefault();
  } else if (defaultFile && existsSync(defaultFile)) {
    kc.loadFromFile(defaultFile);
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster(process.env.BOSUN_IN_CLUSTER_ROOT ?? '');
  } else {
    const looked = ['no --kubeconfig', '$KUBECONFIG is not set', defaultFile ? `${defaultFile} does not exist` : '$HOME is not set', 'and this is not a pod ($KUBERNETES_SERVICE_HOST is not set)'];
    throw new KubeconfigError(`no kubeconfig found: ${looked.join(', ')}\n${localClusterHint()}`);
  }
  if (!kc.getCurrentCluster()) {
    const source = path ?? (fromEnv.length > 0 ? `$KUBECONFIG (${fromEnv.join(delimiter)})` : defaultFile);
    throw new KubeconfigError(`${source} names no current cluster: its current-context is not set, or names no cluster`, 'KubeconfigNoCurrentCluster');
  }
  return kc;
}
