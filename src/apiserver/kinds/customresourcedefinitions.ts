// CustomResourceDefinitions (apiextensions.k8s.io/v1): the CREATED AT column. Serving the
// resources they define is ../crds/crds.ts's.
import type * as api from '../../api/index.js';
import { column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, specChanged, type KindStrategy } from './strategy.js';

export const customresourcedefinitions: KindStrategy<api.CustomResourceDefinition> = {
  type: builtinType('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', { namespaced: false, shortNames: ['crd', 'crds'], status: true }),
  generation: specChanged,
  printer: { columns: [NAME_COLUMN, column('Created At', 'date')], cells: (o) => [o.metadata.name, o.metadata?.creationTimestamp ?? ''] },
};
