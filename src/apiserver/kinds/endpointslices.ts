// EndpointSlices (discovery.k8s.io/v1): the ADDRESSTYPE / PORTS / ENDPOINTS columns, as kubectl
// shows them (the first three addresses and how many more).
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const endpointslices: KindStrategy<api.EndpointSlice> = {
  type: builtinType('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice'),
  printer: {
    columns: [NAME_COLUMN, column('AddressType'), column('Ports'), column('Endpoints'), AGE_COLUMN],
    cells: (o, now) => {
      const ports = (o.ports ?? []).map((p) => p.port).join(',') || '<unset>';
      const addresses: string[] = (o.endpoints ?? []).flatMap((e) => e.addresses ?? []);
      const shown = addresses.length ? addresses.slice(0, 3).join(',') + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : '') : '<unset>';
      return [o.metadata.name, o.addressType ?? '', ports, shown, ageCell(o, now)];
    },
  },
};
