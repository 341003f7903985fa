// CustomResourceDefinitions: what the API server checks when one is written, the conditions it
// sets (NamesAccepted, then Established), and the resource types it starts serving. Deleting a
// CRD removes its custom resources.
//
// crds/ holds CustomResourceDefinitions and their custom resources: this file, their schemas
// (schema.ts: defaulting, pruning, validation; structural.ts: which schemas are accepted) and the
// custom resources' strategy (custom-resources.ts).
import { rfc3339 } from '../../common/time.js';
import { errors, type FieldProblem } from '../errors.js';
import { compareKubeVersions, type Registry } from '../registry/registry.js';
import { storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { JSONSchemaProps } from './schema.js';
import { structuralProblems } from './structural.js';
import type { ResourceHooks } from '../registry/write-context.js';
import type { Storage } from '../storage/types.js';
import { asKind } from '../kinds/strategy.js';

import type * as api from '../../api/index.js';
import { DNS1123_LABEL } from '../../common/dns-names.js';

type CRD = api.CustomResourceDefinition;
type CrdCondition = NonNullable<NonNullable<CRD['status']>['conditions']>[number];
type CrdVersion = CRD['spec']['versions'][number];


function condition(type: string, reason: string, message: string, previous: CrdCondition[] | undefined, time: string): CrdCondition {
  const old = previous?.find((c) => c.type === type);
  return { type, status: 'True', lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : time, reason, message };
}

/** Problems with a CRD's spec, named by field as kube-apiserver reports them. */
export function crdProblems(crd: CRD): FieldProblem[] {
  const problems: FieldProblem[] = [];
  // Any JSON sent: what it lacks is reported here.
  const spec: Partial<CRD['spec']> = crd.spec ?? {};
  const names: Partial<CRD['spec']['names']> = spec.names ?? {};
  const add = (field: string, message: string, type = 'FieldValueInvalid') => problems.push({ type, field, message });
  if (!spec.group) add('spec.group', 'Required value', 'FieldValueRequired');
  if (!names.plural) add('spec.names.plural', 'Required value', 'FieldValueRequired');
  else if (!DNS1123_LABEL.test(names.plural)) add('spec.names.plural', `Invalid value: "${names.plural}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`);
  if (!names.kind) add('spec.names.kind', 'Required value', 'FieldValueRequired');
  if (names.singular && !DNS1123_LABEL.test(names.singular)) add('spec.names.singular', `Invalid value: "${names.singular}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`);
  if (spec.group && names.plural && crd.metadata?.name !== `${names.plural}.${spec.group}`) {
    add('metadata.name', `Invalid value: "${crd.metadata?.name}": must be spec.names.plural+"."+spec.group`);
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') add('spec.scope', `Unsupported value: "${spec.scope}": supported values: "Cluster", "Namespaced"`, 'FieldValueNotSupported');
  const versions: Array<Partial<CrdVersion>> = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0) add('spec.versions', 'Invalid value: must have exactly one version marked as storage version');
  if (versions.filter((v) => v.storage).length !== 1) add('spec.versions', 'Invalid value: must have exactly one version marked as storage version');
  versions.forEach((v, i) => {
    if (!v.name || !DNS1123_LABEL.test(v.name)) add(`spec.versions[${i}].name`, `Invalid value: "${v.name}": a DNS-1035 label is required`);
    const schema = v.schema?.openAPIV3Schema as JSONSchemaProps | undefined; // the same JSON, typed as bosun's schema code reads it
    for (const p of structuralProblems(schema, `spec.versions[${i}].schema.openAPIV3Schema`)) {
      const [field, ...rest] = p.split(': ');
      add(field, rest.join(': '), causeType(rest[0]));
    }
  });
  return problems;
}

/** The cause reason for a field error's kind ("Required value", "Forbidden", ...). */
function causeType(kind: string): string {
  if (kind.startsWith('Required value')) return 'FieldValueRequired';
  if (kind.startsWith('Forbidden')) return 'FieldValueForbidden';
  if (kind.startsWith('Unsupported value')) return 'FieldValueNotSupported';
  return 'FieldValueInvalid';
}

/** The resource types a CRD serves, one per served version. */
export function customTypes(crd: CRD): ResourceType[] {
  const spec = crd.spec;
  const names = spec.names;
  const versions = spec.versions ?? [];
  const storageVersion = versions.find((v) => v.storage)?.name;
  return versions
    .filter((v) => v.served)
    .sort((a, b) => compareKubeVersions(a.name, b.name))
    .map((v) => ({
      group: spec.group,
      version: v.name,
      resource: names.plural,
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      singular: names.singular ?? String(names.kind).toLowerCase(),
      namespaced: spec.scope === 'Namespaced',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      status: Boolean(v.subresources?.status),
      scale: v.subresources?.scale,
      fieldSelectors: (v.selectableFields ?? []).map((f) => String(f.jsonPath).replace(/^\./, '')),
      builtin: false,
      custom: { storageVersion: storageVersion ?? v.name, schema: v.schema?.openAPIV3Schema as JSONSchemaProps | undefined, printerColumns: v.additionalPrinterColumns },
    }));
}

/**
 * Hooks that validate CRDs, set their conditions, and keep the registry serving exactly the
 * established ones.
 */
export function crdHooks(registry: Registry, storage: Storage): ResourceHooks {
  return {
    beforeWrite(type, written) {
      if (type.resource !== 'customresourcedefinitions' || type.group !== 'apiextensions.k8s.io') return;
      const object = asKind<CRD>(written);
      const problems = crdProblems(object);
      if (problems.length > 0) throw errors.invalid('CustomResourceDefinition', 'apiextensions.k8s.io', object.metadata?.name ?? '', problems);
      const names = object.spec.names;
      const collision = [...registry.groups().flatMap((g) => g.versions.map((v) => [g.name, v] as const))]
        .filter(([g]) => g === object.spec.group)
        .flatMap(([g, v]) => registry.resources(g, v))
        .find((t) => t.resource === names.plural && t.builtin);
      if (collision) throw errors.invalid('CustomResourceDefinition', 'apiextensions.k8s.io', object.metadata.name, [{ field: 'spec.names.plural', message: 'Invalid value: a built-in resource has this name' }]);
      const time = rfc3339();
      const previous = object.status?.conditions;
      object.status = {
        ...(object.status ?? {}),
        acceptedNames: {
          plural: names.plural,
          singular: names.singular ?? String(names.kind).toLowerCase(),
          kind: names.kind,
          listKind: names.listKind ?? `${names.kind}List`,
          ...(names.shortNames ? { shortNames: names.shortNames } : {}),
          ...(names.categories ? { categories: names.categories } : {}),
        },
        conditions: [
          condition('NamesAccepted', 'NoConflicts', 'no conflicts found', previous, time),
          condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted', previous, time),
        ],
        storedVersions: [...new Set([...(object.status?.storedVersions ?? []), ...object.spec.versions.filter((v) => v.storage).map((v) => v.name)])],
      };
    },
    afterWrite(type, object, _previous, deleted) {
      if (type.resource !== 'customresourcedefinitions' || type.group !== 'apiextensions.k8s.io') return;
      const name = object.metadata.name as string;
      if (deleted) {
        const served = registry.customTypes(name);
        registry.setCustom(name, []);
        if (served.length > 0) void deleteAll(storage, storagePrefix(served[0]));
      } else if (!object.metadata.deletionTimestamp) {
        registry.setCustom(name, customTypes(asKind<CRD>(object)));
      }
    },
  };
}

async function deleteAll(storage: Storage, prefix: string): Promise<void> {
  const { items } = storage.list(prefix);
  await Promise.allSettled(items.map((item) => storage.delete(item.key)));
}

/**
 * Serves every CRD stored, at start-up and then as CRDs change through any API server on the same
 * storage (several share one etcd): a terminating CRD is served until it is gone, as in afterWrite.
 */
export function loadCrds(registry: Registry, storage: Storage): void {
  const prefix = '/apiextensions.k8s.io/customresourcedefinitions/';
  const listed = storage.list(prefix);
  for (const item of listed.items) {
    const crd = asKind<CRD>(item.object);
    if (crd.metadata.deletionTimestamp) continue;
    registry.setCustom(crd.metadata.name, customTypes(crd));
  }
  storage.watch(prefix, listed.revision, (event) => {
    const crd = asKind<CRD>(event.object);
    if (event.type === 'DELETED') registry.setCustom(crd.metadata.name, []);
    else if (!crd.metadata.deletionTimestamp) registry.setCustom(crd.metadata.name, customTypes(crd));
  });
}
