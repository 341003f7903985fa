// The machine approver (OpenShift's cluster-machine-approver, against the local cloud): approves a
// node's CertificateSigningRequest only when a machine backs it.
//   - client (kubernetes.io/kube-apiserver-client-kubelet): subject `system:node:<name>` in
//     `system:nodes`, client-auth usages, asked for by a bootstrapper (group system:bootstrappers or
//     the MCO's node-bootstrapper) or by that node itself (a renewal), and a live cloud instance
//     named <name>;
//   - serving (kubernetes.io/kubelet-serving): the same subject, server-auth usages, asked for by
//     the node itself, and every SAN one of that instance's: its private address or its name.
// With Cluster API managing the machines (option `machines`, once it gives Machines), a Machine
// whose status.addresses name the node and carry its address must exist as well, as OpenShift's
// approver requires.
// Anything else stays pending and the reason is logged; requests for machines not (yet) in the
// cloud, or without their Machine yet, are looked at again (every RECHECK_MS, and at once when a
// Machine changes), as a machine may be created just after its CSR.
import { parseCertificateRequest } from '../apiserver/certificates/request.js';
import { logger, type Logger } from '../common/log.js';
import type { CloudClient } from '../cloud/client.js';
import type { Instance } from '../cloud/types.js';
import type * as api from '../api/index.js';
import { Controller, Informer, keyOf, type KubeClient } from '../kube/index.js';
import { type Clock, realClock } from '../kube/clock.js';
import { CLIENT_SIGNER, SERVING_SIGNER } from './node-agent/credentials.js';
import { CSRS } from './node-agent/resources.js';
import { approveCsr, isDecided } from './csr-approval.js';

const NODE_BOOTSTRAPPER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
const CLIENT_USAGES = new Set(['digital signature', 'key encipherment', 'client auth']);
const SERVING_USAGES = new Set(['digital signature', 'key encipherment', 'server auth']);
const LIVE = new Set(['pending', 'running']);
/** How often a CSR waiting for its machine is looked at again. */
const RECHECK_MS = 10_000;
/** CSRs older than this are no longer considered (the cluster-machine-approver's cut-off). */
const MAX_AGE_MS = 60 * 60_000;

export type Decision = { approve: true; message: string } | { approve: false; reason: string; recheck: boolean };


/**
 * The Cluster API Machine behind a node, when Cluster API manages the machines: one not being
 * deleted whose status.addresses name the node (Hostname or InternalDNS) and carry the
 * instance's address.
 */
function machineOf(machines: api.Machine[], node: string, ip: string): api.Machine | undefined {
  return machines.find((m) => {
    const addresses = m.status?.addresses ?? [];
    return !m.metadata?.deletionTimestamp && addresses.some((a) => (a.type === 'Hostname' || a.type === 'InternalDNS') && a.address === node) && addresses.some((a) => a.type === 'InternalIP' && a.address === ip);
  });
}

/**
 * Whether to approve a CSR, given the cloud's instances and, when Cluster API manages the
 * machines, its Machines (then a Machine with the node's name and address must exist too). Pure.
 */
export function decide(csr: api.CertificateSigningRequest, instances: Instance[], machines?: api.Machine[]): Decision {
  const spec: Partial<api.CertificateSigningRequest['spec']> = csr.spec ?? {};
  const signer = spec.signerName;
  if (signer !== CLIENT_SIGNER && signer !== SERVING_SIGNER) return { approve: false, reason: `signer ${signer} is not a kubelet signer`, recheck: false };
  let requested;
  try {
    requested = parseCertificateRequest(Buffer.from(spec.request ?? '', 'base64').toString('utf8'));
  } catch (e) {
    return { approve: false, reason: `the request is not a PEM certificate request: ${(e as Error).message}`, recheck: false };
  }
  const cn = requested.commonName ?? '';
  if (!cn.startsWith('system:node:') || cn.length === 'system:node:'.length) return { approve: false, reason: `subject CN "${cn}" is not system:node:<name>`, recheck: false };
  if (requested.organizations.length !== 1 || requested.organizations[0] !== 'system:nodes') return { approve: false, reason: `subject O ${JSON.stringify(requested.organizations)} is not ["system:nodes"]`, recheck: false };
  const name = cn.slice('system:node:'.length);
  const usages: string[] = spec.usages ?? [];
  const allowed = signer === CLIENT_SIGNER ? CLIENT_USAGES : SERVING_USAGES;
  const needed = signer === CLIENT_SIGNER ? 'client auth' : 'server auth';
  if (!usages.includes(needed) || usages.some((u) => !allowed.has(u))) return { approve: false, reason: `usages ${JSON.stringify(usages)} do not fit ${signer}`, recheck: false };
  const username: string = spec.username ?? '';
  const groups: string[] = spec.groups ?? [];
  if (signer === CLIENT_SIGNER) {
    const bootstrapper = groups.includes('system:bootstrappers') || username === NODE_BOOTSTRAPPER;
    if (!bootstrapper && username !== cn) return { approve: false, reason: `requested by ${username || '(nobody)'}, neither a bootstrapper nor the node itself`, recheck: false };
    if (requested.ipAddresses.length || requested.dnsNames.length) return { approve: false, reason: 'a client certificate request carries SANs', recheck: false };
  } else if (username !== cn) {
    return { approve: false, reason: `a serving certificate for ${name} requested by ${username || '(nobody)'}, not by the node itself`, recheck: false };
  }
  const instance = instances.find((i) => i.name === name && LIVE.has(i.state));
  if (!instance) return { approve: false, reason: `no machine named ${name} exists in the cloud`, recheck: true };
  if (signer === SERVING_SIGNER) {
    const strayIp = requested.ipAddresses.find((ip) => ip !== instance.privateIp);
    if (strayIp) return { approve: false, reason: `IP address ${strayIp} is not machine ${instance.id}'s (${instance.privateIp})`, recheck: false };
    const strayName = requested.dnsNames.find((d) => d !== instance.name);
    if (strayName) return { approve: false, reason: `DNS name ${strayName} is not machine ${instance.id}'s`, recheck: false };
  }
  if (machines) {
    const machine = machineOf(machines, name, instance.privateIp);
    if (!machine) return { approve: false, reason: `no Machine has the address of node ${name} (${instance.privateIp})`, recheck: true };
    return { approve: true, message: `Machine ${machine.metadata.namespace}/${machine.metadata.name} (instance ${instance.id}, ${instance.privateIp}) backs node ${name}` };
  }
  return { approve: true, message: `machine ${instance.id} (${instance.privateIp}) backs node ${name}` };
}

export interface MachineApproverOptions {
  client: KubeClient;
  cloud: CloudClient;
  /** Cluster API manages the machines: the Machines a node must be backed by as well (undefined
   *  from it: not yet, the cloud's instance suffices). */
  machines?: () => Promise<api.Machine[] | undefined>;
  /** An informer of those Machines: a Machine added or changed has every pending CSR looked at
   *  again at once (a new worker's CSR may come before its Machine carries the node's address),
   *  rather than at the next recheck. */
  machineChanges?: Informer<api.Machine>;
  log?: Logger;
  /** The clock of the CSR age limit and the controller's queue (default the wall clock). */
  clock?: Clock;
}

/** The approver as a toolkit controller over CertificateSigningRequests. */
export function machineApprover(o: MachineApproverOptions): Controller {
  const log = o.log ?? logger('machine-approver');
  const csrs = new Informer(o.client, CSRS);
  const controller = new Controller({
    name: 'machine-approver',
    clock: o.clock,
    async sync(key) {
      const csr = csrs.getByKey(key);
      if (!csr || isDecided(csr) || csr.status?.certificate) return;
      if ((o.clock ?? realClock).now() - Date.parse(csr.metadata.creationTimestamp ?? '') > MAX_AGE_MS) return;
      const decision = decide(csr, await o.cloud.listInstances(), o.machines ? await o.machines() : undefined);
      if (!decision.approve) {
        log.info({ csr: key, signer: csr.spec?.signerName, requestor: csr.spec?.username, reason: decision.reason }, 'certificate signing request left pending');
        return decision.recheck ? { requeueAfterMs: RECHECK_MS } : undefined;
      }
      await approveCsr(o.client, csr, 'NodeCSRApprove', `This CSR was approved by the machine approver: ${decision.message}`);
      log.info({ csr: key, signer: csr.spec?.signerName, node: csr.spec?.username, reason: decision.message }, 'certificate signing request approved');
    },
  });
  controller.watch(csrs);
  if (o.machineChanges) controller.watch(o.machineChanges, () => csrs.list().filter((c) => !isDecided(c) && !c.status?.certificate).map((c) => keyOf(c)));
  return controller;
}
