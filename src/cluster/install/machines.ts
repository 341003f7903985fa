// The cluster's machines as the install makes them: the masters created in the local cloud,
// spread over its zones, booting from the pointer Ignition config that the machine-config
// operator keeps in openshift-machine-api/master-user-data (as OpenShift's installer passes it as
// user data; the workers come from Cluster API, install/cluster-api.ts); and what every machine of
// the local cluster shares with the host — the release image store, at /var/lib/bosun/releases in
// its root, where a real node would pull release images from a registry.
import { mkdirSync, rmSync, symlinkSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ZONES } from '../../cloud/catalogue.js';
import type { CloudClient } from '../../cloud/client.js';
import type { BootedMachine, MachineRuntime } from '../../cloud/machine-runtime.js';
import type { Instance } from '../../cloud/types.js';
import type { KubeClient } from '../../kube/client.js';
import { resources } from '../../kube/resources.js';
import { INFRASTRUCTURE_NAME } from './cluster-facts.js';
import { isNodeReady } from '../../kube/readiness.js';

export type Role = 'master' | 'worker';
export const RELEASE_STORE_PATH = '/var/lib/bosun/releases';

/** The masters' names, as openshift-install names them: <infra>-master-N. */
export function masterName(index: number): string {
  return `${INFRASTRUCTURE_NAME}-master-${index}`;
}

/** A machine runtime that links the host's release store into each machine, then runs `inner`. */
export class SharedReleaseStore implements MachineRuntime {
  constructor(
    private readonly store: string,
    private readonly inner: MachineRuntime,
  ) {}

  async onBoot(machine: BootedMachine): Promise<void> {
    const link = join(machine.root, RELEASE_STORE_PATH);
    mkdirSync(dirname(link), { recursive: true });
    let current: string | undefined;
    try { current = readlinkSync(link); } catch { current = undefined; }
    if (current !== this.store) {
      rmSync(link, { recursive: true, force: true });
      symlinkSync(this.store, link);
    }
    await this.inner.onBoot(machine);
  }

  onShutdown(machine: BootedMachine): Promise<void> {
    return this.inner.onShutdown(machine);
  }
}

/** The role's pointer Ignition config, once the machine-config operator has written it. */
export async function userData(client: KubeClient, role: Role): Promise<string | undefined> {
  const secret = await client.read(resources.secrets, `${role}-user-data`, 'openshift-machine-api');
  const data: string | undefined = secret?.data?.userData;
  return data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
}

/** Creates the masters 0..count-1 that do not exist yet (by name); returns all of them. */
export async function createMasters(cloud: CloudClient, count: number, data: string, type: string): Promise<Instance[]> {
  const live = await cloud.listInstances({ states: ['pending', 'running', 'stopping', 'stopped'] });
  const machines: Instance[] = [];
  for (let i = 0; i < count; i++) {
    const name = masterName(i);
    const existing = live.find((m) => m.name === name);
    machines.push(existing ?? (await cloud.createInstance({ name, type, zone: ZONES[i % ZONES.length], userData: data })));
  }
  return machines;
}

/**
 * How the nodes of these machines are doing: done when every one is registered and Ready. With
 * `bootIds` (machine name → the boot ID the cloud reports), only a node whose agent reported from
 * that boot counts: after a restart the stored Nodes still say Ready from before.
 */
export async function nodesReady(client: KubeClient, names: string[], bootIds?: Map<string, string | undefined>): Promise<{ done: boolean; status: string }> {
  const nodes = new Map((await client.list(resources.nodes)).items.map((n) => [n.metadata.name, n]));
  const current = (n: string) => !bootIds || (bootIds.get(n) !== undefined && nodes.get(n)?.status?.nodeInfo?.bootID === bootIds.get(n));
  const ready = names.filter((n) => current(n) && isNodeReady(nodes.get(n)));
  const registered = names.filter((n) => nodes.has(n));
  const missing = names.filter((n) => !nodes.has(n));
  return {
    done: ready.length === names.length,
    status: `${ready.length}/${names.length} Ready${bootIds ? ' from this boot' : ''}, ${registered.length} registered${missing.length ? `; booting: ${missing.join(', ')}` : ''}`,
  };
}
