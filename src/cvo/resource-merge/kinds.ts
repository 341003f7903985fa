// Per-kind merge semantics: which fields of each kind the CVO writes, and how. Each function
// takes the object read from the cluster and the manifest and returns the object to write and
// whether anything changed; status is never written and fields other controllers own are left
// alone. The table (after CVO lib/resourcemerge and library-go resourceapply):
//   Namespace, ServiceAccount    metadata only (a ServiceAccount's secrets belong to others)
//   ConfigMap                    data and binaryData merged key by key (manifest keys win)
//   Secret                       type; data merged key by key, stringData counted as data
//   Service                      spec by the default rule, ports with allocated nodePorts
//                                kept, selector owned whole; clusterIP(s) never touched
//   Deployment, DaemonSet        spec by the default rule; selector owned whole; strategy /
//                                updateStrategy replaced whole; pod template (pod-template.ts)
//   Job                          metadata; a Job's spec cannot change, so a different spec
//                                asks for a recreate instead of an update
//   Role, ClusterRole            rules replaced whole (left alone under an aggregationRule)
//   RoleBinding, ClusterRoleBinding  subjects replaced whole; a different roleRef (immutable)
//                                asks for a recreate
//   CustomResourceDefinition     the whole spec replaced when it differs
//   ClusterOperator              metadata and spec; status belongs to the operator
//   anything else                every top-level field but status, by the default rule
import {
  ensureFields, isPlainObject, mergeStringMap, NULL_MEANS_UNSET, replaceUnlessEqual, replaceUnlessSubset,
  type FieldRules, type Json, type JsonObject,
} from './ensure.js';
import { isSubset } from '../../common/subset.js';
import { mergePodTemplate } from './pod-template.js';

export interface KindMergeResult {
  modified: boolean;
  object: JsonObject;
  /** Set when the change cannot be made by an update: the object must be deleted and created again. */
  recreate?: string;
}

/** Merges the top-level fields (not metadata, which object-meta.ts handles). */
export type KindMerge = (existing: JsonObject, required: JsonObject) => KindMergeResult;

const neverWritten = ['apiVersion', 'kind', 'metadata', 'status'];

function topLevel(rules: FieldRules = {}, skip: readonly string[] = []): KindMerge {
  return (existing, required) => ensureFields(existing, required, rules, [...neverWritten, ...skip]);
}

function nested(rules: FieldRules, skip: readonly string[] = []): FieldRules[string] {
  return (existing, required) => {
    const r = ensureFields(isPlainObject(existing) ? existing : undefined, required as JsonObject, rules, skip);
    return { value: r.object, modified: r.modified };
  };
}

const metadataOnly: KindMerge = (existing) => ({ modified: false, object: existing });

function secretMerge(existing: JsonObject, required: JsonObject): KindMergeResult {
  // The API server turns stringData into data, so compare and write it as data.
  const data: JsonObject = { ...(isPlainObject(required.data) ? required.data : {}) };
  for (const [k, v] of Object.entries(isPlainObject(required.stringData) ? required.stringData : {})) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  const req: JsonObject = { ...required, data };
  delete req.stringData;
  return topLevel({ data: mergeStringMap })(existing, req);
}

function servicePorts(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  const current = Array.isArray(existing) ? existing.filter(isPlainObject) : [];
  const wanted = (Array.isArray(required) ? required.filter(isPlainObject) : []).map((p) => {
    if (p.nodePort !== undefined) return p;
    const match = current.find((c) => (p.name !== undefined ? c.name === p.name : c.port === p.port && (c.protocol ?? 'TCP') === (p.protocol ?? 'TCP')));
    return match?.nodePort !== undefined ? { ...p, nodePort: match.nodePort } : p;
  });
  return replaceUnlessSubset(existing, wanted);
}

const workloadSpec = (strategyField: string): FieldRules => ({
  spec: nested({ selector: replaceUnlessEqual, [strategyField]: replaceUnlessSubset, template: mergePodTemplate }),
});

const jobMerge: KindMerge = (existing, required) =>
  isSubset(required.spec, existing.spec, NULL_MEANS_UNSET)
    ? { modified: false, object: existing }
    : { modified: false, object: existing, recreate: 'the Job spec differs from the manifest and a Job cannot be changed: it must be deleted and created again' };

const roleMerge: KindMerge = (existing, required) =>
  topLevel({ rules: replaceUnlessSubset }, isPlainObject(required.aggregationRule) ? ['rules'] : [])(existing, required);

function normalizeSubjects(subjects: Json | undefined): Json {
  return (Array.isArray(subjects) ? subjects : []).map((s) =>
    isPlainObject(s) && s.apiGroup === undefined ? { ...s, apiGroup: s.kind === 'ServiceAccount' ? '' : 'rbac.authorization.k8s.io' } : s,
  );
}

const bindingMerge: KindMerge = (existing, required) => {
  if (!isSubset(required.roleRef, existing.roleRef, NULL_MEANS_UNSET)) {
    return { modified: false, object: existing, recreate: 'the roleRef differs from the manifest and cannot be changed: the binding must be deleted and created again' };
  }
  const wanted = normalizeSubjects(required.subjects);
  return topLevel({ subjects: (e) => replaceUnlessSubset(normalizeSubjects(e) as Json[], wanted) }, ['roleRef'])(existing, required);
};

/** Merge functions by "group/Kind" (the core group is ""). */
export const kindMerges: Record<string, KindMerge> = {
  '/Namespace': metadataOnly,
  '/ServiceAccount': metadataOnly,
  '/ConfigMap': topLevel({ data: mergeStringMap, binaryData: mergeStringMap }),
  '/Secret': secretMerge,
  '/Service': topLevel({ spec: nested({ ports: servicePorts, selector: replaceUnlessEqual }, ['clusterIP', 'clusterIPs']) }),
  'apps/Deployment': topLevel(workloadSpec('strategy')),
  'apps/DaemonSet': topLevel(workloadSpec('updateStrategy')),
  'batch/Job': jobMerge,
  'rbac.authorization.k8s.io/Role': roleMerge,
  'rbac.authorization.k8s.io/ClusterRole': roleMerge,
  'rbac.authorization.k8s.io/RoleBinding': bindingMerge,
  'rbac.authorization.k8s.io/ClusterRoleBinding': bindingMerge,
  'apiextensions.k8s.io/CustomResourceDefinition': topLevel({ spec: replaceUnlessSubset }),
  'config.openshift.io/ClusterOperator': topLevel(),
};

export const genericMerge: KindMerge = topLevel();
