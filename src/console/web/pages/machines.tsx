// Cluster API's machines, live: Machines; MachineDeployments and MachineSets with their replicas
// and a scale control (spec.replicas, as `kubectl scale` sets it); MachineHealthChecks. Namespaced:
// in all namespaces, or in the one chosen in the header.
import { useState } from 'preact/hooks';
import type * as api from '../../../api/index.js';
import { mergePatch } from '../api.js';
import { useList } from '../store.js';
import { kinds, listPath, objectPath, type Kind } from '../resources.js';
import { ListBody, Page, Table, StatusBadge, Outcome, Conditions, conditionOf, Age, show, objectKey as key, namespaceCell as ns } from '../ui.js';

export function Machines({ namespace }: { namespace: string }) {
  const state = useList<api.Machine>(listPath(kinds.machines, namespace));
  return (
    <Page title="Machines">
      <ListBody state={state} kind={kinds.machines} namespace={namespace}>
        <Table
          caption={`${state.items.length} machines${namespace ? ` in ${namespace}` : ''}, live`}
          rows={state.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (m) => m.metadata.name },
            { title: 'Cluster', cell: (m) => show(m.spec?.clusterName) },
            { title: 'Node', cell: (m) => show(m.status?.nodeRef?.name) },
            { title: 'Failure domain', cell: (m) => show(m.spec?.failureDomain) },
            { title: 'Ready', cell: (m) => <StatusBadge condition={conditionOf(m, 'Ready')} /> },
            { title: 'Phase', cell: (m) => show(m.status?.phase) },
            { title: 'Version', cell: (m) => show(m.spec?.version) },
            { title: 'Age', cell: (m) => <Age time={m.metadata.creationTimestamp} /> },
            { title: 'Conditions', cell: (m) => <Conditions conditions={m.status?.conditions} /> },
          ]}
        />
      </ListBody>
    </Page>
  );
}

type Scalable = api.MachineDeployment | api.MachineSet;

function ScaleControl({ kind, object }: { kind: Kind; object: Scalable }) {
  const [replicas, setReplicas] = useState(String(object.spec?.replicas ?? 0));
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const id = `scale-${kind.plural}-${object.metadata.namespace}-${object.metadata.name}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!/^\d+$/.test(replicas.trim())) {
      setOutcome({ ok: false, message: 'replicas must be a whole number' });
      return;
    }
    try {
      await mergePatch(objectPath(kind, object.metadata.name, object.metadata.namespace), { spec: { replicas: Number(replicas) } });
      setOutcome({ ok: true, message: `scaled to ${replicas}` });
    } catch (err) {
      setOutcome({ ok: false, message: (err as Error).message });
    }
  };
  return (
    <form class="inline" onSubmit={submit}>
      <label for={id}>Replicas of {object.metadata.name}</label>
      <input id={id} type="number" min="0" value={replicas} onInput={(e) => setReplicas((e.target as HTMLInputElement).value)} />
      <button type="submit">Scale</button>
      <Outcome outcome={outcome} />
    </form>
  );
}

function ScalableTable({ kind, state, namespace, title }: { kind: Kind; state: ReturnType<typeof useList<Scalable>>; namespace: string; title: string }) {
  return (
    <>
      <h2>{title}</h2>
      <ListBody state={state} kind={kind} namespace={namespace}>
        <Table
          caption={`${state.items.length} ${kind.plural}${namespace ? ` in ${namespace}` : ''}, live`}
          rows={state.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (o) => o.metadata.name },
            { title: 'Cluster', cell: (o) => show(o.spec?.clusterName) },
            { title: 'Desired', cell: (o) => show(o.spec?.replicas) },
            { title: 'Current', cell: (o) => show(o.status?.replicas) },
            { title: 'Ready', cell: (o) => show(o.status?.readyReplicas) },
            { title: 'Available', cell: (o) => show(o.status?.availableReplicas) },
            { title: 'Up to date', cell: (o) => show(o.status?.upToDateReplicas) },
            { title: 'Age', cell: (o) => <Age time={o.metadata.creationTimestamp} /> },
            { title: 'Scale', cell: (o) => <ScaleControl kind={kind} object={o} /> },
          ]}
        />
      </ListBody>
    </>
  );
}

export function MachineSets({ namespace }: { namespace: string }) {
  const deployments = useList<Scalable>(listPath(kinds.machineDeployments, namespace));
  const sets = useList<Scalable>(listPath(kinds.machineSets, namespace));
  return (
    <Page title="MachineSets and MachineDeployments">
      <ScalableTable kind={kinds.machineDeployments} state={deployments} namespace={namespace} title="MachineDeployments" />
      <ScalableTable kind={kinds.machineSets} state={sets} namespace={namespace} title="MachineSets" />
    </Page>
  );
}

export function MachineHealthChecks({ namespace }: { namespace: string }) {
  const state = useList<api.MachineHealthCheck>(listPath(kinds.machineHealthChecks, namespace));
  return (
    <Page title="MachineHealthChecks">
      <ListBody state={state} kind={kinds.machineHealthChecks} namespace={namespace}>
        <Table
          caption={`${state.items.length} machine health checks${namespace ? ` in ${namespace}` : ''}, live`}
          rows={state.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (o) => o.metadata.name },
            { title: 'Cluster', cell: (o) => show(o.spec?.clusterName) },
            { title: 'Expected machines', cell: (o) => show(o.status?.expectedMachines) },
            { title: 'Healthy', cell: (o) => show(o.status?.currentHealthy) },
            { title: 'Remediations allowed', cell: (o) => show(o.status?.remediationsAllowed) },
            { title: 'Remediation allowed', cell: (o) => <StatusBadge condition={conditionOf(o, 'RemediationAllowed')} /> },
            { title: 'Conditions', cell: (o) => <Conditions conditions={o.status?.conditions} /> },
          ]}
        />
      </ListBody>
    </Page>
  );
}
