// `bosun adm operators list|install|approve|uninstall`: thin helpers over OLM's objects (as
// `oc` users do by hand with PackageManifests, OperatorGroups, Subscriptions and InstallPlans),
// each printing what it reads, creates, approves or deletes in kubectl's words.
import type { Command } from 'commander';
import type * as api from '../api/index.js';
import { admGroup } from './adm.js';
import { columns } from './columns.js';

interface Common {
  kubeconfig?: string;
  namespace: string;
}

const OLM = 'operators.coreos.com';

function table(header: string[], rows: string[][]): string {
  return columns([header, ...rows]) + '\n';
}

async function clientFor(o: { kubeconfig?: string }) {
  const { KubeClient, loadKubeConfig, resources } = await import('../kube/index.js');
  return { client: new KubeClient(loadKubeConfig(o.kubeconfig)), resources };
}

export function register(program: Command): void {
  const operators = admGroup(program).command('operators').description('install and upgrade add-on operators from catalogs (OLM: PackageManifests, Subscriptions, InstallPlans)');

  operators
    .command('list')
    .description('list the packages the catalogs offer in a namespace, or the operators installed there')
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config)')
    .option('-n, --namespace <namespace>', 'the namespace', 'openshift-operators')
    .option('--installed', 'list the Subscriptions of the namespace with their CSV and its phase instead')
    .addHelpText('after', `
Packages come from the package server (kubectl get packagemanifests -n NAMESPACE): the namespace's
own catalogs and those of openshift-marketplace, each channel with its current (head) CSV.

Examples:
  $ bosun adm operators list -n demo
  PACKAGE   CATALOG                  DEFAULT CHANNEL   CHANNELS
  demo      openshift-marketplace/bosun-operators   stable            stable (demo.v1.1.0), candidate (demo.v1.2.0)
  $ bosun adm operators list -n demo --installed
  SUBSCRIPTION   PACKAGE   CHANNEL   CSV           PHASE       STATE
  demo           demo      stable    demo.v1.1.0   Succeeded   AtLatestKnown`)
    .action(async (o: Common & { installed?: boolean }) => {
      const { client, resources } = await clientFor(o);
      if (o.installed) {
        const subs = (await client.list(resources.subscriptions, o.namespace)).items;
        const csvs = (await client.list(resources.clusterServiceVersions, o.namespace)).items;
        const rows = subs.map((s) => {
          const csv = s.status?.installedCSV ?? s.status?.currentCSV ?? '';
          const phase = csvs.find((c) => c.metadata.name === csv)?.status?.phase ?? '';
          return [s.metadata.name, s.spec.name, s.spec.channel ?? '', csv, phase, s.status?.state ?? ''];
        });
        if (rows.length === 0) return void process.stdout.write(`No operators installed in namespace ${o.namespace}.\n`);
        return void process.stdout.write(table(['SUBSCRIPTION', 'PACKAGE', 'CHANNEL', 'CSV', 'PHASE', 'STATE'], rows));
      }
      const manifests = (await client.list(resources.packageManifests, o.namespace)).items;
      if (manifests.length === 0) return void process.stdout.write(`No packages offered in namespace ${o.namespace}.\n`);
      process.stdout.write(table(['PACKAGE', 'CATALOG', 'DEFAULT CHANNEL', 'CHANNELS'], manifests.map((m) => [
        m.metadata.name, `${m.status.catalogSourceNamespace}/${m.status.catalogSource}`, m.status.defaultChannel, m.status.channels.map((c) => `${c.name} (${c.currentCSV})`).join(', '),
      ])));
    });

  operators
    .command('install <package>')
    .description('subscribe a namespace to a package: an OperatorGroup if it has none, and a Subscription')
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config)')
    .option('-n, --namespace <namespace>', 'where the operator is installed', 'openshift-operators')
    .option('--channel <channel>', 'the channel to follow (default: the package\'s default channel)')
    .option('--catalog <name>', 'the CatalogSource (default: the one the package server names for the package)')
    .option('--catalog-namespace <namespace>', 'the CatalogSource\'s namespace (default: the package server\'s answer, else the namespace)')
    .option('--approval <mode>', 'Automatic, or Manual to approve each InstallPlan (bosun adm operators approve)', 'Automatic')
    .option('--starting-csv <name>', 'the ClusterServiceVersion to install first instead of the channel head')
    .option('--all-namespaces', 'when an OperatorGroup is created: serve all namespaces (default: its own namespace only)')
    .addHelpText('after', `
Creates what OLM needs and prints it; the catalog operator then makes an InstallPlan (approved at
once when Automatic) and the OLM operator installs the ClusterServiceVersion.

Example:
  $ bosun adm operators install demo -n demo --channel stable --approval Manual
  operatorgroup.operators.coreos.com/demo created (targets: demo)
  subscription.operators.coreos.com/demo created (package demo, channel stable, catalog openshift-marketplace/bosun-operators, approval Manual)`)
    .action(async (pkg: string, o: Common & { channel?: string; catalog?: string; catalogNamespace?: string; approval: string; startingCsv?: string; allNamespaces?: boolean }) => {
      if (o.approval !== 'Automatic' && o.approval !== 'Manual') throw new Error(`--approval is Automatic or Manual, got "${o.approval}"`);
      const { client, resources } = await clientFor(o);
      let catalog = o.catalog;
      let catalogNamespace = o.catalogNamespace;
      if (!catalog) {
        const offered = (await client.list(resources.packageManifests, o.namespace, { fieldSelector: `metadata.name=${pkg}` })).items;
        if (offered.length === 0) throw new Error(`no catalog offers package "${pkg}" in namespace ${o.namespace} (bosun adm operators list -n ${o.namespace})`);
        if (offered.length > 1) throw new Error(`several catalogs offer package "${pkg}": ${offered.map((m) => `${m.status.catalogSourceNamespace}/${m.status.catalogSource}`).join(', ')}; choose one with --catalog and --catalog-namespace`);
        catalog = offered[0].status.catalogSource;
        catalogNamespace = offered[0].status.catalogSourceNamespace;
      }
      catalogNamespace ??= o.namespace;
      if (!(await client.read(resources.namespaces, o.namespace))) throw new Error(`namespace ${o.namespace} does not exist (kubectl create namespace ${o.namespace})`);
      const groups = (await client.list(resources.operatorGroups, o.namespace)).items;
      if (groups.length === 0) {
        const group: api.OperatorGroup = { apiVersion: `${OLM}/v1`, kind: 'OperatorGroup', metadata: { name: o.namespace, namespace: o.namespace }, spec: o.allNamespaces ? {} : { targetNamespaces: [o.namespace] } };
        await client.create(resources.operatorGroups, group);
        process.stdout.write(`operatorgroup.operators.coreos.com/${o.namespace} created (targets: ${o.allNamespaces ? 'all namespaces' : o.namespace})\n`);
      }
      const sub: api.Subscription = {
        apiVersion: `${OLM}/v1alpha1`, kind: 'Subscription', metadata: { name: pkg, namespace: o.namespace },
        spec: { name: pkg, source: catalog, sourceNamespace: catalogNamespace, installPlanApproval: o.approval, ...(o.channel ? { channel: o.channel } : {}), ...(o.startingCsv ? { startingCSV: o.startingCsv } : {}) },
      };
      await client.create(resources.subscriptions, sub);
      process.stdout.write(`subscription.operators.coreos.com/${pkg} created (package ${pkg}, channel ${o.channel ?? 'default'}, catalog ${catalogNamespace}/${catalog}, approval ${o.approval})\n`);
    });

  operators
    .command('approve <name>')
    .description('approve an InstallPlan, named or the one a Subscription waits on')
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config)')
    .option('-n, --namespace <namespace>', 'the namespace', 'openshift-operators')
    .addHelpText('after', `
NAME is an InstallPlan or a Subscription (whose status.installPlanRef is approved). The same as
kubectl patch installplan NAME -n NAMESPACE --type merge -p '{"spec":{"approved":true}}'.

Example:
  $ bosun adm operators approve demo -n demo
  installplan.operators.coreos.com/install-8xk2p approved (installs demo.v1.1.0)`)
    .action(async (name: string, o: Common) => {
      const { client, resources } = await clientFor(o);
      let plan = await client.read(resources.installPlans, name, o.namespace);
      if (!plan) {
        const sub = await client.read(resources.subscriptions, name, o.namespace);
        if (!sub) throw new Error(`no InstallPlan or Subscription "${name}" in namespace ${o.namespace}`);
        const ref = sub.status?.installPlanRef?.name;
        plan = ref ? await client.read(resources.installPlans, ref, o.namespace) : undefined;
        if (!plan || plan.status?.phase !== 'RequiresApproval') throw new Error(`Subscription ${name} has no InstallPlan waiting for approval (its state: ${sub.status?.state ?? 'none yet'})`);
      }
      if (plan.spec.approved) return void process.stdout.write(`installplan.operators.coreos.com/${plan.metadata.name} was already approved\n`);
      await client.mergePatch(resources.installPlans, plan.metadata.name, o.namespace, { spec: { approved: true } });
      process.stdout.write(`installplan.operators.coreos.com/${plan.metadata.name} approved (installs ${plan.spec.clusterServiceVersionNames.join(', ')})\n`);
    });

  operators
    .command('uninstall <package>')
    .description('delete the Subscriptions of a package and their ClusterServiceVersions (CRDs and their objects stay)')
    .option('--kubeconfig <file>', 'the kubeconfig (default: $KUBECONFIG, ~/.kube/config)')
    .option('-n, --namespace <namespace>', 'the namespace', 'openshift-operators')
    .addHelpText('after', `
As OLM's uninstall: the operator's Deployments, ServiceAccounts and RBAC go with its CSV; its
CustomResourceDefinitions and the custom resources made of them are kept.

Example:
  $ bosun adm operators uninstall demo -n demo
  subscription.operators.coreos.com/demo deleted
  clusterserviceversion.operators.coreos.com/demo.v1.1.0 deleted`)
    .action(async (pkg: string, o: Common) => {
      const { client, resources } = await clientFor(o);
      const subs = (await client.list(resources.subscriptions, o.namespace)).items.filter((s) => s.spec.name === pkg);
      if (subs.length === 0) throw new Error(`no Subscription to package "${pkg}" in namespace ${o.namespace} (bosun adm operators list -n ${o.namespace} --installed)`);
      for (const s of subs) {
        await client.delete(resources.subscriptions, s.metadata.name, o.namespace);
        process.stdout.write(`subscription.operators.coreos.com/${s.metadata.name} deleted\n`);
        for (const csv of new Set([s.status?.installedCSV, s.status?.currentCSV].filter((c): c is string => Boolean(c)))) {
          if (await client.delete(resources.clusterServiceVersions, csv, o.namespace)) process.stdout.write(`clusterserviceversion.operators.coreos.com/${csv} deleted\n`);
        }
      }
    });
}
