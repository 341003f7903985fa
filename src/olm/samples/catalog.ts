// The default catalog bosun ships (as OpenShift ships redhat-operators): a File-Based Catalog of
// the two sample operators (operators.ts), each in several versions across two channels, every
// bundle's manifests (its CRD and ClusterServiceVersion) inline as olm.bundle.object. It goes into
// the payload as ConfigMap openshift-marketplace/bosun-operators, which CatalogSource
// bosun-operators reads; `npx tsx scripts/generate-olm-catalog.ts` writes that file and
// test/olm/samples.test.ts fails when it drifts from this source.
//
//   greeter  stable (default): 0.2.0 → 1.0.0 (skipRange >=0.1.0 <1.0.0)
//            alpha:            0.1.0 → 0.2.0 → 0.3.0
//   echo     stable (default): 1.0.0 → 1.1.0
//            fast:             1.0.0 → 1.1.0 → 1.2.0
//
// Each version's Deployment runs the operator's component (image bosun.local/<operator>) with
// --operator-version set to the bundle's version, which the operator writes in every status; the
// namespaces it serves come from the olm.targetNamespaces annotation OLM puts on its pods.
import { stringify } from 'yaml';
import { ECHO_GROUP, GREETER_GROUP } from './operators.js';

export const DEFAULT_CATALOG = { name: 'bosun-operators', namespace: 'openshift-marketplace', displayName: 'bosun Operators', publisher: 'bosun' } as const;
export const CATALOG_FILE = '0000_50_olm_06_bosun-operators.configmap.yaml';

interface Entry { version: string; replaces?: string; skipRange?: string }

interface SamplePackage {
  name: string;
  operator: string;
  displayName: string;
  description: string;
  defaultChannel: string;
  channels: Record<string, Entry[]>;
  crd: { group: string; kind: string; plural: string; singular: string; spec: Record<string, unknown>; columns: Array<{ name: string; jsonPath: string; type: string }>; description: string };
  example: Record<string, unknown>;
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
}

const READ_WRITE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

export const SAMPLE_PACKAGES: SamplePackage[] = [
  {
    name: 'greeter',
    operator: 'greeter-operator',
    displayName: 'Greeter',
    description: 'A sample operator of bosun: each Greeting gets a ConfigMap <name>-greeting holding its greeting.',
    defaultChannel: 'stable',
    channels: {
      alpha: [{ version: '0.1.0' }, { version: '0.2.0', replaces: '0.1.0' }, { version: '0.3.0', replaces: '0.2.0' }],
      stable: [{ version: '0.2.0' }, { version: '1.0.0', replaces: '0.2.0', skipRange: '>=0.1.0 <1.0.0' }],
    },
    crd: {
      group: GREETER_GROUP, kind: 'Greeting', plural: 'greetings', singular: 'greeting', description: 'A greeting the greeter operator writes into a ConfigMap.',
      spec: { type: 'object', properties: { name: { type: 'string', description: 'Whom to greet.' }, greeting: { type: 'string', description: 'The greeting word (default Hello).' } } },
      columns: [{ name: 'Text', jsonPath: '.status.text', type: 'string' }, { name: 'Phase', jsonPath: '.status.phase', type: 'string' }, { name: 'Operator', jsonPath: '.status.operatorVersion', type: 'string' }],
    },
    example: { apiVersion: `${GREETER_GROUP}/v1`, kind: 'Greeting', metadata: { name: 'hello' }, spec: { name: 'world', greeting: 'Hello' } },
    rules: [
      { apiGroups: [GREETER_GROUP], resources: ['greetings', 'greetings/status'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: READ_WRITE },
    ],
  },
  {
    name: 'echo',
    operator: 'echo-operator',
    displayName: 'Echo Server',
    description: 'A sample operator of bosun: each EchoServer gets a Deployment of the built-in echo server (bosun.local/echo) and a Service on port 8080.',
    defaultChannel: 'stable',
    channels: {
      stable: [{ version: '1.0.0' }, { version: '1.1.0', replaces: '1.0.0' }],
      fast: [{ version: '1.0.0' }, { version: '1.1.0', replaces: '1.0.0' }, { version: '1.2.0', replaces: '1.1.0' }],
    },
    crd: {
      group: ECHO_GROUP, kind: 'EchoServer', plural: 'echoservers', singular: 'echoserver', description: 'Echo servers the echo operator runs.',
      spec: { type: 'object', properties: { replicas: { type: 'integer', description: 'How many echo pods (default 1).' } } },
      columns: [{ name: 'Ready', jsonPath: '.status.readyReplicas', type: 'integer' }, { name: 'Phase', jsonPath: '.status.phase', type: 'string' }, { name: 'Operator', jsonPath: '.status.operatorVersion', type: 'string' }],
    },
    example: { apiVersion: `${ECHO_GROUP}/v1`, kind: 'EchoServer', metadata: { name: 'echo' }, spec: { replicas: 1 } },
    rules: [
      { apiGroups: [ECHO_GROUP], resources: ['echoservers', 'echoservers/status'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: READ_WRITE },
      { apiGroups: [''], resources: ['services'], verbs: READ_WRITE },
    ],
  },
];

const csvName = (pkg: SamplePackage, version: string) => `${pkg.name}.v${version}`;

export function sampleCrd(pkg: SamplePackage) {
  const { crd } = pkg;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${crd.plural}.${crd.group}` },
    spec: {
      group: crd.group,
      names: { kind: crd.kind, listKind: `${crd.kind}List`, plural: crd.plural, singular: crd.singular },
      scope: 'Namespaced',
      versions: [{
        name: 'v1', served: true, storage: true, subresources: { status: {} },
        additionalPrinterColumns: [...crd.columns, { name: 'Age', jsonPath: '.metadata.creationTimestamp', type: 'date' }],
        schema: { openAPIV3Schema: { type: 'object', description: crd.description, properties: { spec: crd.spec, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      }],
    },
  };
}

export function sampleCsv(pkg: SamplePackage, entry: Entry) {
  const account = pkg.operator;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: csvName(pkg, entry.version),
      annotations: {
        'alm-examples': JSON.stringify([pkg.example]),
        capabilities: 'Basic Install',
        categories: 'Developer Tools',
        description: pkg.description,
        ...(entry.skipRange ? { 'olm.skipRange': entry.skipRange } : {}),
      },
    },
    spec: {
      displayName: pkg.displayName,
      description: pkg.description,
      version: entry.version,
      ...(entry.replaces ? { replaces: csvName(pkg, entry.replaces) } : {}),
      maturity: entry.version.startsWith('0.') ? 'alpha' : 'stable',
      provider: { name: 'bosun' },
      keywords: ['sample', pkg.name],
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: { owned: [{ name: `${pkg.crd.plural}.${pkg.crd.group}`, version: 'v1', kind: pkg.crd.kind, displayName: pkg.crd.kind, description: pkg.crd.description }] },
      install: {
        strategy: 'deployment',
        spec: {
          permissions: [{ serviceAccountName: account, rules: [...pkg.rules, { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] }] }],
          deployments: [{
            name: pkg.operator,
            spec: {
              replicas: 1,
              selector: { matchLabels: { name: pkg.operator } },
              template: {
                metadata: { labels: { name: pkg.operator } },
                spec: {
                  serviceAccountName: account,
                  containers: [{
                    name: 'operator',
                    image: `bosun.local/${pkg.operator}:v${entry.version}`,
                    args: [pkg.operator, `--operator-version=${entry.version}`],
                    env: [{ name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } }],
                    resources: { requests: { cpu: '5m', memory: '40Mi' } },
                  }],
                },
              },
            },
          }],
        },
      },
    },
  };
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');

/** The catalog's blobs of one package: olm.package, its channels, its bundles. */
export function packageBlobs(pkg: SamplePackage): unknown[] {
  const blobs: unknown[] = [{ schema: 'olm.package', name: pkg.name, defaultChannel: pkg.defaultChannel, description: pkg.description }];
  const entries = new Map<string, Entry>();
  for (const [channel, list] of Object.entries(pkg.channels)) {
    blobs.push({ schema: 'olm.channel', package: pkg.name, name: channel, entries: list.map((e) => ({ name: csvName(pkg, e.version), ...(e.replaces ? { replaces: csvName(pkg, e.replaces) } : {}), ...(e.skipRange ? { skipRange: e.skipRange } : {}) })) });
    for (const e of list) entries.set(e.version, { ...entries.get(e.version), ...e });
  }
  for (const e of [...entries.values()].sort((a, b) => a.version.localeCompare(b.version))) {
    blobs.push({
      schema: 'olm.bundle',
      package: pkg.name,
      name: csvName(pkg, e.version),
      image: `bosun.local/${pkg.operator}-bundle:v${e.version}`,
      properties: [
        { type: 'olm.package', value: { packageName: pkg.name, version: e.version } },
        { type: 'olm.gvk', value: { group: pkg.crd.group, version: 'v1', kind: pkg.crd.kind } },
        { type: 'olm.bundle.object', value: { data: b64(sampleCrd(pkg)) } },
        { type: 'olm.bundle.object', value: { data: b64(sampleCsv(pkg, e)) } },
      ],
      relatedImages: [{ name: 'operator', image: `bosun.local/${pkg.operator}:v${e.version}` }],
    });
  }
  return blobs;
}

/** The catalog's files: one YAML stream per package. */
export function sampleCatalogFiles(): Record<string, string> {
  return Object.fromEntries(SAMPLE_PACKAGES.map((pkg) => [`${pkg.name}.yaml`, packageBlobs(pkg).map((b) => `---\n${stringify(b, { lineWidth: 0 })}`).join('')]));
}

/** The payload's ConfigMap holding the catalog (the file CATALOG_FILE). */
export function catalogConfigMapYaml(): string {
  const header = [
    '# The default catalog\'s files (a File-Based Catalog): the sample operators greeter and echo, read by',
    '# CatalogSource openshift-marketplace/bosun-operators. Generated from src/olm/samples/catalog.ts by',
    '# `npx tsx scripts/generate-olm-catalog.ts`; do not edit.',
  ].join('\n');
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: DEFAULT_CATALOG.name,
      namespace: DEFAULT_CATALOG.namespace,
      annotations: { 'include.release.openshift.io/self-managed-high-availability': 'true', 'include.release.openshift.io/single-node-developer': 'true' },
    },
    data: sampleCatalogFiles(),
  };
  return `${header}\n${stringify(configMap, { lineWidth: 0 })}`;
}
