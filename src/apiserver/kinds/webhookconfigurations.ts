// MutatingWebhookConfiguration and ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1):
// the admission webhooks the API server calls (admission/webhooks.ts). Defaults and validation are
// kube's v1 ones (pkg/apis/admissionregistration: failurePolicy Fail, matchPolicy Equivalent,
// empty selectors, timeoutSeconds 10, scope "*", service port 443; sideEffects None or
// NoneOnDryRun, admissionReviewVersions naming v1, exactly one of url and service), with one
// departure: a mutating webhook's reinvocationPolicy may only be Never, since bosun calls each
// mutating webhook once. The columns are kubectl's: NAME, WEBHOOKS, AGE.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, count, NAME_COLUMN } from '../printing/columns.js';
import type { FieldProblem } from '../errors.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { DNS1123_SUBDOMAIN } from '../../common/dns-names.js';

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';

type Webhook = api.MutatingWebhook | api.ValidatingWebhook;
type Configuration = { metadata: api.ObjectMeta; webhooks?: Webhook[] };

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];
const SCOPES = ['Cluster', 'Namespaced', '*'];
const quoted = (values: string[]) => values.map((v) => JSON.stringify(v)).join(', ');

function defaultWebhooks(o: Configuration, mutating: boolean): void {
  for (const w of o.webhooks ?? []) {
    w.failurePolicy ??= 'Fail';
    w.matchPolicy ??= 'Equivalent';
    w.namespaceSelector ??= {};
    w.objectSelector ??= {};
    w.timeoutSeconds ??= 10;
    for (const rule of w.rules ?? []) rule.scope ??= '*';
    if (w.clientConfig?.service) w.clientConfig.service.port ??= 443;
    if (mutating) (w as api.MutatingWebhook).reinvocationPolicy ??= 'Never';
  }
}

function problems(o: Configuration, mutating: boolean): FieldProblem[] {
  const out: FieldProblem[] = [];
  const required = (field: string) => out.push({ type: 'FieldValueRequired', field, message: 'Required value' });
  const invalid = (field: string, value: unknown, detail: string) => out.push({ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${detail}` });
  const unsupported = (field: string, value: unknown, supported: string[]) => out.push({ type: 'FieldValueNotSupported', field, message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${quoted(supported)}` });
  if (o.webhooks !== undefined && !Array.isArray(o.webhooks)) {
    invalid('webhooks', o.webhooks, 'must be a list');
    return out;
  }
  const names = new Set<string>();
  (o.webhooks ?? []).forEach((w, i) => {
    const at = `webhooks[${i}]`;
    if (!w || typeof w !== 'object') return invalid(at, w, 'must be an object');
    if (!w.name) required(`${at}.name`);
    else {
      if (w.name.split('.').length < 3 || !DNS1123_SUBDOMAIN.test(w.name)) invalid(`${at}.name`, w.name, 'should be a domain with at least three segments separated by dots');
      if (names.has(w.name)) out.push({ type: 'FieldValueDuplicate', field: `${at}.name`, message: `Duplicate value: ${JSON.stringify(w.name)}` });
      names.add(w.name);
    }
    (w.rules ?? []).forEach((rule, j) => {
      const r = `${at}.rules[${j}]`;
      if (!rule.operations?.length) required(`${r}.operations`);
      for (const op of rule.operations ?? []) if (!OPERATIONS.includes(op)) unsupported(`${r}.operations`, op, OPERATIONS);
      if (!rule.apiGroups?.length) required(`${r}.apiGroups`);
      if (!rule.apiVersions?.length) required(`${r}.apiVersions`);
      if (!rule.resources?.length) required(`${r}.resources`);
      for (const resource of rule.resources ?? []) {
        const [main, sub, more] = resource.split('/');
        if (!main || more !== undefined || sub === '') invalid(`${r}.resources`, resource, 'must be a resource, resource/subresource, or a "*" in place of either');
      }
      if (rule.scope !== undefined && !SCOPES.includes(rule.scope)) unsupported(`${r}.scope`, rule.scope, SCOPES);
    });
    if (w.failurePolicy !== undefined && !['Ignore', 'Fail'].includes(w.failurePolicy)) unsupported(`${at}.failurePolicy`, w.failurePolicy, ['Ignore', 'Fail']);
    if (w.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(w.matchPolicy)) unsupported(`${at}.matchPolicy`, w.matchPolicy, ['Exact', 'Equivalent']);
    if (!w.sideEffects) required(`${at}.sideEffects`);
    else if (!['None', 'NoneOnDryRun'].includes(w.sideEffects)) unsupported(`${at}.sideEffects`, w.sideEffects, ['None', 'NoneOnDryRun']);
    if (!w.admissionReviewVersions?.length) required(`${at}.admissionReviewVersions`);
    else if (!w.admissionReviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) {
      invalid(`${at}.admissionReviewVersions`, w.admissionReviewVersions, 'must include at least one of v1, v1beta1');
    }
    if (w.timeoutSeconds !== undefined && !(Number.isInteger(w.timeoutSeconds) && w.timeoutSeconds >= 1 && w.timeoutSeconds <= 30)) {
      invalid(`${at}.timeoutSeconds`, w.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds');
    }
    if (mutating) {
      const policy = (w as api.MutatingWebhook).reinvocationPolicy;
      if (policy !== undefined && policy !== 'Never') unsupported(`${at}.reinvocationPolicy`, policy, ['Never']);
    }
    const config = w.clientConfig;
    if (!config) return required(`${at}.clientConfig`);
    if (config.url !== undefined && config.service !== undefined) out.push({ type: 'FieldValueRequired', field: `${at}.clientConfig`, message: 'Required value: exactly one of url or service is required' });
    else if (config.url === undefined && config.service === undefined) out.push({ type: 'FieldValueRequired', field: `${at}.clientConfig`, message: 'Required value: exactly one of url or service is required' });
    if (config.url !== undefined) {
      let url: URL | undefined;
      try {
        url = new URL(config.url);
      } catch {
        invalid(`${at}.clientConfig.url`, config.url, 'host must be specified');
      }
      if (url && url.protocol !== 'https:') invalid(`${at}.clientConfig.url`, config.url, "'https' is the only allowed URL scheme");
      if (url && (url.username || url.password)) invalid(`${at}.clientConfig.url`, config.url, 'user information is not permitted in the URL');
      if (url && (url.hash || config.url.includes('#'))) invalid(`${at}.clientConfig.url`, config.url, 'fragments are not permitted in the URL');
      if (url && url.search) invalid(`${at}.clientConfig.url`, config.url, 'query parameters are not permitted in the URL');
    }
    if (config.service) {
      if (!config.service.name) required(`${at}.clientConfig.service.name`);
      if (!config.service.namespace) required(`${at}.clientConfig.service.namespace`);
      if (config.service.path !== undefined && !config.service.path.startsWith('/')) invalid(`${at}.clientConfig.service.path`, config.service.path, "must start with a '/'");
      const port = config.service.port ?? 443;
      if (!(Number.isInteger(port) && port > 0 && port < 65536)) invalid(`${at}.clientConfig.service.port`, port, 'port is not valid: must be between 1 and 65535, inclusive');
    }
    if (config.caBundle !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(config.caBundle)) invalid(`${at}.clientConfig.caBundle`, '<bytes>', 'must be base64');
  });
  return out;
}

const printer = {
  columns: [NAME_COLUMN, column('Webhooks', 'integer'), AGE_COLUMN],
  cells: (o: Configuration & api.KubeObject, now: number) => [o.metadata.name, count(o.webhooks), ageCell(o, now)],
};

export const mutatingwebhookconfigurations: KindStrategy<api.MutatingWebhookConfiguration> = {
  type: builtinType(ADMISSION_GROUP, 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', { namespaced: false, categories: ['api-extensions'] }),
  defaults: (o) => defaultWebhooks(o, true),
  validate: (o) => problems(o, true),
  printer,
};

export const validatingwebhookconfigurations: KindStrategy<api.ValidatingWebhookConfiguration> = {
  type: builtinType(ADMISSION_GROUP, 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', { namespaced: false, categories: ['api-extensions'] }),
  defaults: (o) => defaultWebhooks(o, false),
  validate: (o) => problems(o, false),
  printer,
};
