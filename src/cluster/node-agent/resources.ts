// The resources the node agent and the machine approver use beyond the toolkit's catalogue
// (src/kube/resources.ts): CertificateSigningRequests and EndpointSlices.
import type * as api from '../../api/index.js';
import { resources, type ResourceDefinition } from '../../kube/index.js';

export const CSRS: ResourceDefinition<api.CertificateSigningRequest> = { group: 'certificates.k8s.io', version: 'v1', resource: 'certificatesigningrequests', kind: 'CertificateSigningRequest', namespaced: false };
export const ENDPOINT_SLICES: ResourceDefinition<api.EndpointSlice> = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true };
export const { nodes: NODES, pods: PODS, leases: LEASES, services: SERVICES } = resources;
