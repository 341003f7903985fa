// `bosun adm top nodes` / `bosun adm top pods [-n NS | -A] [-l SELECTOR]`: the resource metrics API
// (metrics.k8s.io/v1beta1) printed as `kubectl top` prints it — CPU in millicores, memory in Mi,
// and for nodes the share of their allocatable CPU and memory — in kubectl's tabwriter layout
// (columns padded by 3, at least 6 wide). The table is a pure function of the objects.
import type { Command } from 'commander';
import type * as api from '../api/index.js';
import { quantityMilliValue, quantityValue } from '../kube/quantity.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { isNotFound, KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { admGroup } from './adm.js';

export interface Usage {
  cpu: string;
  memory: string;
}
export interface NodeMetricsItem {
  metadata: { name: string };
  usage: Usage;
}
export interface PodMetricsItem {
  metadata: { name: string; namespace?: string };
  containers: Array<{ name: string; usage: Usage }>;
}

const METRICS = '/apis/metrics.k8s.io/v1beta1';

/** kubectl's tabwriter (minwidth 6, padding 3, every cell tab-terminated). */
export function tabwrite(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(6, ...rows.map((r) => r[i].length + 3)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('')).join('\n') + '\n';
}

const cores = (q: string) => `${quantityMilliValue(q)}m`;
const mebibytes = (bytes: number) => `${Math.floor(bytes / (1024 * 1024))}Mi`;

/** `kubectl top nodes`: every node, `<unknown>` where it has no metrics yet. */
export function nodeTable(nodes: api.Node[], metrics: NodeMetricsItem[]): string {
  const rows = [['NAME', 'CPU(cores)', 'CPU(%)', 'MEMORY(bytes)', 'MEMORY(%)']];
  for (const node of [...nodes].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const m = metrics.find((x) => x.metadata.name === node.metadata.name);
    if (!m) {
      rows.push([node.metadata.name, '<unknown>', '<unknown>', '<unknown>', '<unknown>']);
      continue;
    }
    const allocatable = node.status?.allocatable ?? node.status?.capacity ?? {};
    const percent = (used: number, of: string | undefined) => (of && quantityMilliValue(of) > 0 ? `${Math.floor((used * 100) / quantityMilliValue(of))}%` : '<unknown>');
    const cpu = quantityMilliValue(m.usage.cpu);
    const memory = quantityValue(m.usage.memory);
    rows.push([node.metadata.name, cores(m.usage.cpu), percent(cpu, allocatable.cpu), mebibytes(memory), percent(memory * 1000, allocatable.memory)]);
  }
  return tabwrite(rows);
}

/** `kubectl top pods`: each pod's containers summed; with the namespace column for -A. */
export function podTable(metrics: PodMetricsItem[], allNamespaces: boolean): string {
  const rows = [[...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'CPU(cores)', 'MEMORY(bytes)']];
  const sorted = [...metrics].sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name));
  for (const p of sorted) {
    const cpu = p.containers.reduce((n, c) => n + quantityMilliValue(c.usage.cpu), 0);
    const memory = p.containers.reduce((n, c) => n + quantityValue(c.usage.memory), 0);
    rows.push([...(allNamespaces ? [p.metadata.namespace ?? ''] : []), p.metadata.name, `${cpu}m`, mebibytes(memory)]);
  }
  return tabwrite(rows);
}

/** Whether the API server lists metrics.k8s.io (kubectl's "Metrics API not available" check). */
async function metricsAvailable(client: KubeClient): Promise<boolean> {
  const groups = await client.request<{ groups?: Array<{ name: string }> }>('GET', '/apis');
  return (groups.groups ?? []).some((g) => g.name === 'metrics.k8s.io');
}

interface TopOptions {
  kubeconfig?: string;
  selector?: string;
  namespace?: string;
  allNamespaces?: boolean;
}

export function register(program: Command): void {
  const top = admGroup(program).command('top').description('show CPU and memory use of nodes and pods from the resource metrics API (as kubectl top)');
  const common = (c: Command) => c
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster service account)')
    .option('-l, --selector <selector>', 'only objects with these labels (key=value,…)');
  common(top.command('nodes').alias('node').description('CPU(cores), CPU(%), MEMORY(bytes), MEMORY(%) of every node (% of allocatable)'))
    .addHelpText('after', '\nThe metrics come from metrics.k8s.io/v1beta1 (bosun metrics-server behind the APIService v1beta1.metrics.k8s.io).\n\nExample:\n  bosun adm top nodes --kubeconfig .bosun/kubeconfig')
    .action(async (o: TopOptions) => {
      const client = new KubeClient(loadKubeConfig(o.kubeconfig));
      if (!(await metricsAvailable(client))) throw new Error('Metrics API not available');
      const query = o.selector ? { labelSelector: o.selector } : {};
      const metrics = await client.request<{ items: NodeMetricsItem[] }>('GET', `${METRICS}/nodes`, { query });
      if (metrics.items.length === 0) throw new Error('metrics not available yet');
      const nodes = await client.list(resources.nodes, undefined, query);
      process.stdout.write(nodeTable(nodes.items, metrics.items));
    });
  common(top.command('pods').alias('pod').description('CPU(cores) and MEMORY(bytes) of the pods of a namespace (-n) or of all (-A)'))
    .option('-n, --namespace <namespace>', 'the namespace (default: the kubeconfig context\'s, else default)')
    .option('-A, --all-namespaces', 'pods of every namespace, with a NAMESPACE column')
    .addHelpText('after', '\nExamples:\n  bosun adm top pods -n openshift-monitoring --kubeconfig .bosun/kubeconfig\n  bosun adm top pods -A --kubeconfig .bosun/kubeconfig')
    .action(async (o: TopOptions) => {
      if (o.allNamespaces && o.namespace) throw new Error('-n and -A go separately: one namespace, or all of them');
      const kc = loadKubeConfig(o.kubeconfig);
      const client = new KubeClient(kc);
      if (!(await metricsAvailable(client))) throw new Error('Metrics API not available');
      const namespace = o.allNamespaces ? undefined : (o.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default');
      const query = o.selector ? { labelSelector: o.selector } : {};
      const metrics = await client.request<{ items: PodMetricsItem[] }>('GET', namespace ? `${METRICS}/namespaces/${encodeURIComponent(namespace)}/pods` : `${METRICS}/pods`, { query });
      if (metrics.items.length === 0) {
        const pods = await client.list(resources.pods, namespace, query).catch((e) => (isNotFound(e) ? { items: [] } : Promise.reject(e)));
        if (pods.items.length === 0) {
          console.error(namespace ? `No resources found in ${namespace} namespace.` : 'No resources found');
          return;
        }
        throw new Error('metrics not available yet');
      }
      process.stdout.write(podTable(metrics.items, !namespace));
    });
}
