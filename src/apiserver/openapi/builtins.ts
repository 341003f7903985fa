// OpenAPI v3 schemas of the built-in kinds this server serves, for `kubectl explain` and for
// clients that read /openapi/v3: compact, hand-written (the fields people read and write, with
// descriptions in our own words), named as Kubernetes names its definitions
// (`io.k8s.api.core.v1.ConfigMap`), one file per group of kinds. Kinds without a schema get a
// generic one.
import { free, kind, SPEC, STATUS, typeMeta, type Schema } from './builders.js';
import { CERTIFICATES_SCHEMAS } from './certificates.js';
import { CLUSTER_SCHEMAS } from './cluster.js';
import { CORE_V1_SCHEMAS } from './core-v1.js';
import { META_V1_SCHEMAS } from './meta-v1.js';
import { POD_SCHEMAS } from './pods-v1.js';
import { STORAGE_SCHEMAS } from './storage.js';
import { WORKLOAD_SCHEMAS } from './workloads.js';

export type { Schema } from './builders.js';

/** The definitions: name → schema. Top-level kinds carry their x-kubernetes-group-version-kind when published. */
export const BUILTIN_SCHEMAS: Record<string, Schema> = { ...META_V1_SCHEMAS, ...CORE_V1_SCHEMAS, ...POD_SCHEMAS, ...WORKLOAD_SCHEMAS, ...CLUSTER_SCHEMAS, ...CERTIFICATES_SCHEMAS, ...STORAGE_SCHEMAS };

/** The definition name of each built-in kind, by group/version/kind. */
export function builtinSchemaName(group: string, version: string, kindName: string): string {
  const packages: Record<string, string> = {
    '': 'io.k8s.api.core', apps: 'io.k8s.api.apps', batch: 'io.k8s.api.batch', policy: 'io.k8s.api.policy',
    'events.k8s.io': 'io.k8s.api.events', 'coordination.k8s.io': 'io.k8s.api.coordination',
    'rbac.authorization.k8s.io': 'io.k8s.api.rbac', 'apiextensions.k8s.io': 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions',
  };
  return `${packages[group] ?? `io.k8s.api.${group.split('.')[0]}`}.${version}.${kindName}`;
}

/** A schema for a built-in kind this file does not describe: its standard parts, open otherwise. */
export function genericSchema(kindName: string): Schema {
  return kind(`${kindName}: this server does not publish a detailed schema for this kind.`, {
    spec: free(SPEC),
    status: free(STATUS),
  });
}

/** The standard parts of a custom resource's schema: apiVersion, kind and metadata. */
export function customResourceTypeMeta(): Record<string, Schema> {
  return typeMeta();
}
