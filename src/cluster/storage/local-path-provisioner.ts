// bosun's dynamic provisioner `bosun.io/local-path`, modelled on rancher's local-path-provisioner
// (the one kind ships): a volume is a directory of one node's machine, under
// /opt/local-path-provisioner, used through a hostPath PersistentVolume pinned to that node. It
// runs in the controller manager beside the binder, as an external provisioner does beside kube's.
//
// A claim the binder handed to it (volume.kubernetes.io/storage-provisioner: bosun.io/local-path;
// nothing Available fit) and the scheduler placed (volume.kubernetes.io/selected-node, which a
// WaitForFirstConsumer class waits for) gets a volume `pvc-<claim uid>`: the claim's size and
// access modes, the class's name and reclaim policy, hostPath
// /opt/local-path-provisioner/<volume>_<namespace>_<claim> of type DirectoryOrCreate (the node
// agent makes it when a pod mounts it), node affinity to the node's hostname, and a claimRef to the
// claim, which the binder then binds (events Provisioning and ProvisioningSucceeded on the claim).
// A claim without a selected node (an Immediate class) or asking for more than ReadWriteOnce(Pod)
// is refused with ProvisioningFailed: one node's directory cannot be shared across nodes.
//
// A volume it made that is Released under the Delete policy is removed as rancher's is: a helper
// pod on the volume's node (kube-system/helper-pod-delete-<volume>, `bosun local-path-helper`)
// deletes the directory; once it has Succeeded the volume and the pod are deleted; if it Failed,
// event VolumeFailedDelete on the volume, and another helper is tried after a back-off.
import type * as api from '../../api/index.js';
import { Controller, resources, TerminalError, type SyncResult } from '../../kube/index.js';
import { claimClass, PROVISIONED_BY, SELECTED_NODE, STORAGE_PROVISIONER } from '../../kube/storage.js';
import type { WorkloadContext } from '../workloads/context.js';
import { claimRefOf } from './binding.js';

export const LOCAL_PATH_PROVISIONER = 'bosun.io/local-path';
/** Where the volumes' directories are, on every node's machine (rancher's default). */
export const LOCAL_PATH_DIR = '/opt/local-path-provisioner';
/** The namespace of the helper pods that delete volumes' directories. */
export const HELPER_NAMESPACE = 'kube-system';
/** On a helper pod: the volume whose directory it deletes. */
const HELPER_FOR = 'local-path-provisioner.bosun.io/volume';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';
const ONE_NODE_MODES = ['ReadWriteOnce', 'ReadWriteOncePod'];
const RETRY_DELETE_MS = 30_000;

const VOLUMES = resources.persistentVolumes;
const PODS = resources.pods;

const helperName = (volume: string) => `helper-pod-delete-${volume}`.slice(0, 253);

/** The node a volume of ours is pinned to: the hostname its node affinity names. */
function hostnameOf(volume: api.PersistentVolume): string | undefined {
  const expression = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.find((e) => e.key === HOSTNAME_LABEL);
  return expression?.values?.[0];
}

/** The PersistentVolume the provisioner makes for a claim on a node. */
export function localPathVolume(claim: api.PersistentVolumeClaim, storageClass: api.StorageClass, hostname: string): api.PersistentVolume {
  const name = `pvc-${claim.metadata.uid}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [PROVISIONED_BY]: LOCAL_PATH_PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? '' },
      accessModes: claim.spec?.accessModes,
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      storageClassName: storageClass.metadata.name,
      volumeMode: 'Filesystem',
      ...(storageClass.mountOptions ? { mountOptions: storageClass.mountOptions } : {}),
      hostPath: { path: `${LOCAL_PATH_DIR}/${name}_${claim.metadata.namespace}_${claim.metadata.name}`, type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [hostname] }] }] } },
      claimRef: claimRefOf(claim),
    },
  };
}

/** The pod that deletes a volume's directory on its node. */
export function helperPod(volume: api.PersistentVolume, nodeName: string): api.Pod {
  const path = volume.spec?.hostPath?.path ?? '';
  const dir = path.slice(LOCAL_PATH_DIR.length + 1);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: helperName(volume.metadata.name), namespace: HELPER_NAMESPACE, annotations: { [HELPER_FOR]: volume.metadata.name } },
    spec: {
      nodeName,
      restartPolicy: 'Never',
      priorityClassName: 'system-node-critical',
      tolerations: [{ operator: 'Exists' }],
      automountServiceAccountToken: false,
      containers: [{ name: 'helper-pod', image: 'bosun.local/local-path-helper', args: ['local-path-helper', 'delete', '--path', `/data/${dir}`], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', hostPath: { path: LOCAL_PATH_DIR, type: 'DirectoryOrCreate' } }],
    },
  };
}

export function localPathProvisioner(ctx: WorkloadContext): Controller {
  const { persistentVolumeClaims: claims, persistentVolumes: volumes, storageClasses: classes, nodes, pods } = ctx.informers;
  const controller = new Controller({ name: 'local-path-provisioner', clock: ctx.clock, sync: (key) => (key.includes('/') ? provision(key) : reclaim(key)) });
  controller.watch(claims);
  controller.watch(volumes);
  controller.watch(pods, (pod) => {
    const volume = pod.metadata.namespace === HELPER_NAMESPACE ? pod.metadata.annotations?.[HELPER_FOR] : undefined;
    return volume ? [volume] : [];
  });

  async function provision(key: string): Promise<void> {
    const claim = claims.getByKey(key);
    if (!claim || claim.metadata.deletionTimestamp || claim.spec?.volumeName) return;
    if (claim.metadata.annotations?.[STORAGE_PROVISIONER] !== LOCAL_PATH_PROVISIONER) return;
    const storageClass = classes.get(claimClass(claim));
    if (storageClass?.provisioner !== LOCAL_PATH_PROVISIONER) return;
    if (volumes.get(`pvc-${claim.metadata.uid}`)) return;
    const failed = async (why: string) => {
      await ctx.events.event(claim, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${storageClass.metadata.name}": ${why}`);
      throw new TerminalError(why);
    };
    const nodeName = claim.metadata.annotations?.[SELECTED_NODE];
    if (!nodeName) return failed(`${LOCAL_PATH_PROVISIONER} makes a volume on the node of the claim's first pod: its StorageClass needs volumeBindingMode WaitForFirstConsumer`);
    const modes = claim.spec?.accessModes ?? [];
    if (!modes.every((m) => ONE_NODE_MODES.includes(m))) return failed(`${LOCAL_PATH_PROVISIONER} volumes live on one node: only ReadWriteOnce and ReadWriteOncePod are supported, not ${modes.filter((m) => !ONE_NODE_MODES.includes(m)).join(', ')}`);
    const node = nodes.get(nodeName);
    if (!node) throw new Error(`the selected node ${nodeName} is not known yet`);
    await ctx.events.event(claim, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${claim.metadata.namespace}/${claim.metadata.name}"`);
    const volume = localPathVolume(claim, storageClass, node.metadata.labels?.[HOSTNAME_LABEL] ?? nodeName);
    await ctx.client.create(VOLUMES, volume).catch((e: { reason?: string }) => {
      if (e.reason !== 'AlreadyExists') throw e;
    });
    await ctx.events.event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${volume.metadata.name}`);
  }

  async function reclaim(name: string): Promise<SyncResult | void> {
    const volume = volumes.get(name);
    const helper = pods.get(helperName(name), HELPER_NAMESPACE);
    if (!volume || volume.metadata.annotations?.[PROVISIONED_BY] !== LOCAL_PATH_PROVISIONER) {
      if (helper) await ctx.client.delete(PODS, helper.metadata.name, HELPER_NAMESPACE);
      return;
    }
    if (volume.status?.phase !== 'Released' || volume.spec?.persistentVolumeReclaimPolicy !== 'Delete' || volume.metadata.deletionTimestamp) return;
    if (!helper) {
      const hostname = hostnameOf(volume);
      const node = nodes.list().find((n) => (n.metadata.labels?.[HOSTNAME_LABEL] ?? n.metadata.name) === hostname);
      if (!node) {
        // The node is gone and its directory with it: nothing is left to clean.
        await ctx.client.delete(VOLUMES, name, undefined, { preconditions: { uid: volume.metadata.uid } });
        return;
      }
      await ctx.client.create(PODS, helperPod(volume, node.metadata.name));
      return;
    }
    if (helper.status?.phase === 'Succeeded') {
      await ctx.client.delete(VOLUMES, name, undefined, { preconditions: { uid: volume.metadata.uid } });
      await ctx.client.delete(PODS, helper.metadata.name, HELPER_NAMESPACE);
    } else if (helper.status?.phase === 'Failed') {
      await ctx.events.event(volume, 'Warning', 'VolumeFailedDelete', `the helper pod ${HELPER_NAMESPACE}/${helper.metadata.name} could not delete ${volume.spec?.hostPath?.path}; trying again`);
      await ctx.client.delete(PODS, helper.metadata.name, HELPER_NAMESPACE);
      return { requeueAfterMs: RETRY_DELETE_MS };
    }
  }

  return controller;
}
