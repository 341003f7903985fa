// Nodes, live: Ready, roles, schedulable, the machine-config daemon's state and configs, the
// kubelet version; cordon and uncordon (spec.unschedulable, as `kubectl cordon` sets it).
import { useState } from 'preact/hooks';
import type * as api from '../../../api/index.js';
import { mergePatch } from '../api.js';
import { useList } from '../store.js';
import { kinds, listPath, objectPath } from '../resources.js';
import { ListBody, Page, Table, StatusBadge, Outcome, conditionOf, Age, show } from '../ui.js';

const MCO = 'machineconfiguration.openshift.io';

export const rolesOf = (n: api.Node): string =>
  Object.keys(n.metadata.labels ?? {}).filter((l) => l.startsWith('node-role.kubernetes.io/')).map((l) => l.slice('node-role.kubernetes.io/'.length)).sort().join(',') || '<none>';

export const isReady = (n: api.Node): boolean => conditionOf(n, 'Ready')?.status === 'True';

function CordonButton({ node }: { node: api.Node }) {
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const cordoned = Boolean(node.spec?.unschedulable);
  const toggle = async () => {
    try {
      await mergePatch(objectPath(kinds.nodes, node.metadata.name), { spec: { unschedulable: cordoned ? null : true } });
      setOutcome({ ok: true, message: cordoned ? 'uncordoned' : 'cordoned' });
    } catch (e) {
      setOutcome({ ok: false, message: (e as Error).message });
    }
  };
  return (
    <>
      <button type="button" onClick={toggle} aria-label={`${cordoned ? 'Uncordon' : 'Cordon'} ${node.metadata.name}`}>{cordoned ? 'Uncordon' : 'Cordon'}</button>
      <Outcome outcome={outcome} />
    </>
  );
}

export function Nodes() {
  const state = useList<api.Node>(listPath(kinds.nodes));
  const ready = state.items.filter(isReady).length;
  return (
    <Page title="Nodes">
      <ListBody state={state} kind={kinds.nodes}>
        <Table
          caption={`${state.items.length} nodes, ${ready} Ready, live`}
          rows={state.items}
          rowKey={(n) => n.metadata.name}
          columns={[
            { title: 'Name', cell: (n) => n.metadata.name },
            { title: 'Status', cell: (n) => <StatusBadge condition={conditionOf(n, 'Ready')} label={isReady(n) ? 'Ready' : 'NotReady'} /> },
            { title: 'Roles', cell: rolesOf },
            { title: 'Schedulable', cell: (n) => (n.spec?.unschedulable ? 'SchedulingDisabled' : 'yes') },
            { title: 'Config state', cell: (n) => show(n.metadata.annotations?.[`${MCO}/state`]) },
            { title: 'Current config', cell: (n) => show(n.metadata.annotations?.[`${MCO}/currentConfig`]) },
            { title: 'Desired config', cell: (n) => show(n.metadata.annotations?.[`${MCO}/desiredConfig`]) },
            { title: 'Version', cell: (n) => show(n.status?.nodeInfo?.kubeletVersion) },
            { title: 'Age', cell: (n) => <Age time={n.metadata.creationTimestamp} /> },
            { title: 'Actions', cell: (n) => <CordonButton node={n} /> },
          ]}
        />
      </ListBody>
    </Page>
  );
}
