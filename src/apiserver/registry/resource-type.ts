// What the API server knows of one resource type — its discovery facts (group, version, kind,
// names, scope, subresources), and for custom resources their CRD's schema and columns — and the
// storage keys of its objects. A leaf: the kinds' strategies, the registry and everything that
// handles objects import it, and it imports nothing of theirs.
import type { JSONSchemaProps } from '../crds/schema.js';
import type { PrinterColumn } from '../printing/columns.js';

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  status: boolean;
  scale?: ScaleSubresource;
  /** Field selectors beyond metadata.name and metadata.namespace. */
  fieldSelectors: string[];
  /** Built-ins take strategic merge patches; custom resources do not. */
  builtin: boolean;
  /** For custom resources: the version objects are stored at, its schema and columns. */
  custom?: {
    storageVersion: string;
    schema?: JSONSchemaProps;
    printerColumns?: PrinterColumn[];
  };
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function apiVersionOf(t: { group: string; version: string }): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** The storage prefix for every object of a type (shared by all versions of it). */
export function storagePrefix(t: { group: string; resource: string }): string {
  return `/${t.group || 'core'}/${t.resource}/`;
}

export function storageKey(t: ResourceType, namespace: string | undefined, name: string): string {
  return `${storagePrefix(t)}${t.namespaced ? (namespace ?? '') : ''}/${name}`;
}
