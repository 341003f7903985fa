// Typed API objects: every kind bosun's components read or write, as the API serves it. Built-in
// kinds come from client-node's models (core.ts), OpenShift's, Cluster API's and the local
// cloud's from the CRDs bosun ships (generated/, by scripts/generate-api-types.ts). Types only:
// importing this module loads nothing at run time.
export type * from './meta.js';
export type * from './core.js';
export type * from './openshift.js';
export type * from './capi.js';
export type * from './monitoring.js';
export type * from './olm.js';
