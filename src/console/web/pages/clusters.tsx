// Workload clusters (Cluster API Clusters), live, each drawn as `bosun cluster describe` prints it
// (the same rows: src/views/cluster-tree.ts), with its kubeconfig to download (Secret
// <name>-kubeconfig, key value, read as the user).
import { useState } from 'preact/hooks';
import type * as api from '../../../api/index.js';
import { clusterTreeRows, type TreeObject } from '../../../views/cluster-tree.js';
import { getJSON } from '../api.js';
import { useList } from '../store.js';
import { kinds, listPath, objectPath } from '../resources.js';
import { ListBody, Page, Outcome } from '../ui.js';

function KubeconfigDownload({ cluster }: { cluster: api.Cluster }) {
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const name = cluster.metadata.name;
  const namespace = cluster.metadata.namespace ?? 'default';
  const download = async () => {
    try {
      const secret = await getJSON<api.Secret>(objectPath(kinds.secrets, `${name}-kubeconfig`, namespace));
      const value = secret.data?.value;
      if (!value) throw new Error(`Secret ${namespace}/${name}-kubeconfig has no key "value" yet`);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([atob(value)], { type: 'application/yaml' }));
      link.download = `${name}.kubeconfig`;
      link.click();
      URL.revokeObjectURL(link.href);
      setOutcome({ ok: true, message: `${name}.kubeconfig downloaded` });
    } catch (e) {
      setOutcome({ ok: false, message: (e as Error).message });
    }
  };
  return (
    <p>
      <button type="button" onClick={download}>Download the kubeconfig of {name}</button> <Outcome outcome={outcome} />
    </p>
  );
}

function Tree({ cluster, infrastructure, controlPlane, machineDeployments, machineSets, machines }: {
  cluster: api.Cluster; infrastructure?: TreeObject; controlPlane?: TreeObject; machineDeployments: api.MachineDeployment[]; machineSets: api.MachineSet[]; machines: api.Machine[];
}) {
  const rows = clusterTreeRows({ cluster, infrastructure, controlPlane, machineDeployments, machineSets, machines, now: Date.now() });
  return (
    <div class="table-wrap">
      <table class="tree">
        <caption>Cluster {cluster.metadata.namespace}/{cluster.metadata.name}, as <code>bosun cluster describe</code> shows it</caption>
        <thead>
          <tr>{['Name', 'Replicas', 'Available', 'Ready', 'Up to date', 'Status', 'Reason', 'Since', 'Message'].map((h) => <th scope="col" key={h}>{h}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              <td><span class="tree-prefix" aria-hidden="true">{r.prefix}</span>{r.name}</td>
              <td>{r.replicas}</td><td>{r.available}</td><td>{r.ready}</td><td>{r.upToDate}</td><td>{r.status}</td><td>{r.reason}</td><td>{r.since}</td>
              <td>{r.message.join(' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function WorkloadClusters({ namespace }: { namespace: string }) {
  const clusters = useList<api.Cluster>(listPath(kinds.clusters, namespace));
  const deployments = useList<api.MachineDeployment>(listPath(kinds.machineDeployments, namespace));
  const sets = useList<api.MachineSet>(listPath(kinds.machineSets, namespace));
  const machines = useList<api.Machine>(listPath(kinds.machines, namespace));
  const controlPlanes = useList<TreeObject>(listPath(kinds.kubeadmControlPlanes, namespace));
  const infrastructures = useList<TreeObject>(listPath(kinds.localClusters, namespace));
  const same = (c: api.Cluster) => (o: { metadata: { namespace?: string }; spec?: { clusterName?: string } }) => o.metadata.namespace === c.metadata.namespace && o.spec?.clusterName === c.metadata.name;
  const byRef = (list: TreeObject[], c: api.Cluster, ref?: { kind: string; name: string }) =>
    ref ? list.find((o) => o.metadata.namespace === c.metadata.namespace && o.metadata.name === ref.name) : undefined;
  return (
    <Page title="Workload Clusters">
      <ListBody state={clusters} kind={kinds.clusters} namespace={namespace}>
        {clusters.items.length === 0 && <p>No clusters{namespace ? ` in ${namespace}` : ''}. Create one with <code>bosun cluster generate</code>.</p>}
        {clusters.items.map((c) => (
          <article key={`${c.metadata.namespace}/${c.metadata.name}`} class="card">
            <h2>{c.metadata.namespace}/{c.metadata.name}</h2>
            <Tree
              cluster={c}
              infrastructure={byRef(infrastructures.items, c, c.spec?.infrastructureRef)}
              controlPlane={byRef(controlPlanes.items, c, c.spec?.controlPlaneRef)}
              machineDeployments={deployments.items.filter(same(c))}
              machineSets={sets.items.filter(same(c))}
              machines={machines.items.filter(same(c))}
            />
            <KubeconfigDownload cluster={c} />
          </article>
        ))}
      </ListBody>
    </Page>
  );
}
