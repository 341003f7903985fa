// metrics-server's scraper: every resolution period it lists the Nodes and Pods, and reads each
// node's /metrics/resource from its kubelet (the node's InternalIP and kubelet port, HTTPS, with
// this component's own credentials: a bearer token that may `get nodes/metrics`), keeping the last
// two scrapes of every node, from which usage.ts computes the rates. A node that cannot be
// scraped keeps no figures (it is left out of the answers) and is logged.
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type * as api from '../api/index.js';
import type { Logger } from '../common/log.js';
import { resources, type KubeClient } from '../kube/index.js';
import { parseSamples } from './prometheus-text.js';
import { pointsOf, usageBetween, type NodeScrape, type Usage } from './usage.js';

const DEFAULT_KUBELET_PORT = 10250;
const ADDRESS_PREFERENCE = ['InternalIP', 'Hostname', 'ExternalIP'];

export interface ScraperOptions {
  /** How often the nodes are scraped (metrics-server's --metric-resolution; default 15 s). */
  resolutionMs?: number;
  /** The TLS and credentials of a kubelet request (token or client certificate, CA or insecure). */
  kubeletRequestOptions: () => Promise<RequestOptions>;
  /** How long one kubelet request may take (default 10 s). */
  timeoutMs?: number;
  log: Logger;
}

export interface PodUsage {
  containers: Array<{ name: string; usage: Usage }>;
  timestampMs: number;
  windowMs: number;
}

/** Where a node's kubelet answers. Pure. */
export function kubeletUrl(node: api.Node, path: string): URL | undefined {
  const addresses = node.status?.addresses ?? [];
  const address = ADDRESS_PREFERENCE.map((type) => addresses.find((a) => a.type === type)?.address).find(Boolean);
  if (!address) return undefined;
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_KUBELET_PORT;
  return new URL(`https://${address.includes(':') ? `[${address}]` : address}:${port}${path}`);
}

export class Scraper {
  private readonly scrapes = new Map<string, { previous?: NodeScrape; current: NodeScrape }>();
  private nodeObjects: api.Node[] = [];
  private podObjects: api.Pod[] = [];
  readonly name = 'metrics-scraper';
  readonly needsLeaderElection = false;

  constructor(private readonly client: KubeClient, private readonly o: ScraperOptions) {}

  async start(signal: AbortSignal): Promise<void> {
    const resolution = this.o.resolutionMs ?? 15_000;
    while (!signal.aborted) {
      await this.scrapeOnce().catch((e) => this.o.log.warn({ err: (e as Error).message }, 'scrape failed'));
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, resolution);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Lists the nodes and pods and scrapes every node once. */
  async scrapeOnce(): Promise<void> {
    const [nodes, pods] = await Promise.all([this.client.list(resources.nodes), this.client.list(resources.pods)]);
    this.nodeObjects = nodes.items;
    this.podObjects = pods.items;
    for (const name of [...this.scrapes.keys()]) if (!nodes.items.some((n) => n.metadata.name === name)) this.scrapes.delete(name);
    await Promise.all(nodes.items.map(async (node) => {
      try {
        const scraped = await this.scrapeNode(node);
        const last = this.scrapes.get(node.metadata.name);
        this.scrapes.set(node.metadata.name, { previous: last?.current, current: scraped });
      } catch (e) {
        this.scrapes.delete(node.metadata.name);
        this.o.log.warn({ node: node.metadata.name, err: (e as Error).message }, 'failed to scrape the node');
      }
    }));
  }

  private async scrapeNode(node: api.Node): Promise<NodeScrape> {
    const url = kubeletUrl(node, '/metrics/resource');
    if (!url) throw new Error('the node has no address');
    const options = await this.o.kubeletRequestOptions();
    const at = Date.now();
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(url, { ...options, method: 'GET', agent: false, timeout: this.o.timeoutMs ?? 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url.href}: ${res.statusCode} ${body.slice(0, 200).trim()}`))));
      });
      req.on('timeout', () => req.destroy(new Error(`GET ${url.href}: timed out`)));
      req.on('error', reject);
      req.end();
    });
    return pointsOf(parseSamples(text), at);
  }

  /** The nodes with usage (a rate needs two scrapes), with the Node objects last listed. */
  nodes(): Array<{ node: api.Node; usage: Usage }> {
    return this.nodeObjects.flatMap((node) => {
      const s = this.scrapes.get(node.metadata.name);
      const usage = usageBetween(s?.previous?.node, s?.current.node);
      return usage ? [{ node, usage }] : [];
    });
  }

  /** The pods with usage for every container, with the Pod objects last listed. */
  pods(): Array<{ pod: api.Pod; usage: PodUsage }> {
    return this.podObjects.flatMap((pod) => {
      const s = pod.spec?.nodeName ? this.scrapes.get(pod.spec.nodeName) : undefined;
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      const before = s?.previous?.pods.get(key);
      const now = s?.current.pods.get(key);
      if (!before || !now || now.size === 0) return [];
      const containers: PodUsage['containers'] = [];
      for (const [name, point] of now) {
        const usage = usageBetween(before.get(name), point);
        // A container without a rate yet leaves the whole pod out, as metrics-server does.
        if (!usage) return [];
        containers.push({ name, usage });
      }
      return [{ pod, usage: { containers, timestampMs: Math.max(...containers.map((c) => c.usage.timestampMs)), windowMs: Math.max(...containers.map((c) => c.usage.windowMs)) } }];
    });
  }
}
