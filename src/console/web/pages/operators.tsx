// ClusterOperators, live: status (Available, Progressing, Degraded), the operator's version,
// the message of whichever condition matters most, and every condition.
import type * as api from '../../../api/index.js';
import { useList } from '../store.js';
import { kinds, listPath } from '../resources.js';
import { ListBody, Page, Table, StatusBadge, Conditions, conditionOf, Age, show } from '../ui.js';

/** The message worth a glance: Degraded's, else Progressing's, else Available's. */
export function operatorMessage(o: api.ClusterOperator): string {
  const degraded = conditionOf(o, 'Degraded');
  if (degraded?.status === 'True') return degraded.message ?? '';
  const progressing = conditionOf(o, 'Progressing');
  if (progressing?.status === 'True') return progressing.message ?? '';
  return conditionOf(o, 'Available')?.message ?? '';
}

export const operatorVersion = (o: api.ClusterOperator): string => show((o.status?.versions ?? []).find((v) => v.name === 'operator')?.version);

export function ClusterOperators() {
  const state = useList<api.ClusterOperator>(listPath(kinds.clusterOperators));
  return (
    <Page title="Cluster Operators">
      <ListBody state={state} kind={kinds.clusterOperators}>
        <Table
          caption={`${state.items.length} cluster operators, live`}
          rows={state.items}
          rowKey={(o) => o.metadata.name}
          columns={[
            { title: 'Name', cell: (o) => o.metadata.name },
            { title: 'Version', cell: operatorVersion },
            { title: 'Available', cell: (o) => <StatusBadge condition={conditionOf(o, 'Available')} /> },
            { title: 'Progressing', cell: (o) => <StatusBadge condition={conditionOf(o, 'Progressing')} good="False" /> },
            { title: 'Degraded', cell: (o) => <StatusBadge condition={conditionOf(o, 'Degraded')} good="False" /> },
            { title: 'Since', cell: (o) => <Age time={conditionOf(o, 'Available')?.lastTransitionTime} /> },
            { title: 'Message', cell: operatorMessage },
            { title: 'Conditions', cell: (o) => <Conditions conditions={o.status?.conditions} /> },
          ]}
        />
      </ListBody>
    </Page>
  );
}
