// APIServices (apiregistration.k8s.io/v1): kube-aggregator's registration of an API group-version
// served by another server. The name is `<version>.<group>`; a service-backed one names a Service
// (port 443 unless said) and either a caBundle that signed the server's certificate or
// insecureSkipTLSVerify; both priorities are required. The columns are kubectl's: SERVICE,
// AVAILABLE (the Available condition's status, or its reason when not True). The proxying is in
// aggregator/.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import type { FieldProblem } from '../errors.js';
import { builtinType, type KindStrategy } from './strategy.js';

function problems(o: api.APIService): FieldProblem[] {
  const out: FieldProblem[] = [];
  const spec = o.spec;
  const invalid = (field: string, message: string) => out.push({ type: 'FieldValueInvalid', field, message });
  const required = (field: string) => out.push({ type: 'FieldValueRequired', field, message: 'Required value' });
  if (!spec) {
    required('spec');
    return out;
  }
  if (!spec.version) required('spec.version');
  if (spec.version && o.metadata.name !== `${spec.version}.${spec.group ?? ''}`) invalid('metadata.name', `must be ${spec.version}.${spec.group ?? ''}: "<version>.<group>"`);
  if (!(Number.isInteger(spec.groupPriorityMinimum) && spec.groupPriorityMinimum > 0 && spec.groupPriorityMinimum <= 20000)) invalid('spec.groupPriorityMinimum', 'must be positive and less than 20000');
  if (!(Number.isInteger(spec.versionPriority) && spec.versionPriority > 0 && spec.versionPriority <= 1000)) invalid('spec.versionPriority', 'must be positive and less than 1000');
  if (spec.service) {
    if (!spec.service.namespace) required('spec.service.namespace');
    if (!spec.service.name) required('spec.service.name');
    const port = spec.service.port ?? 443;
    if (!(Number.isInteger(port) && port > 0 && port < 65536)) invalid('spec.service.port', 'must be a valid port number');
    if (spec.insecureSkipTLSVerify && spec.caBundle) invalid('spec.insecureSkipTLSVerify', 'may not be true if caBundle is present');
  } else if (spec.caBundle || spec.insecureSkipTLSVerify) {
    invalid('spec.service', 'a local APIService takes neither caBundle nor insecureSkipTLSVerify');
  }
  return out;
}

export const apiservices: KindStrategy<api.APIService> = {
  type: builtinType('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', { namespaced: false, status: true }),
  defaults: (o) => {
    if (o.spec?.service && o.spec.service.port === undefined) o.spec.service.port = 443;
  },
  validate: (o) => problems(o),
  printer: {
    columns: [NAME_COLUMN, column('Service'), column('Available'), AGE_COLUMN],
    cells: (o, now) => {
      const service = o.spec?.service ? `${o.spec.service.namespace}/${o.spec.service.name}` : 'Local';
      const available = o.status?.conditions?.find((c) => c.type === 'Available');
      return [o.metadata.name, service, available ? (available.status === 'True' ? 'True' : `${available.status} (${available.reason ?? ''})`) : 'Unknown', ageCell(o, now)];
    },
  },
};
