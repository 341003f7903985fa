// Lint configuration: the recommended rules of ESLint and typescript-eslint, and the component
// boundaries of src/ ("Who may import whom" in docs/architecture.md) as no-restricted-imports.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The operators. Each talks to the cluster through the Kubernetes API and to the cloud through the
 * cloud's client, never through the API server's, the cluster's or the cloud's internals, and
 * never through another operator's. A new operator's folder is added here and nowhere else.
 */
const OPERATORS = ['cvo', 'mco', 'ccm-operator', 'capi', 'monitoring', 'cloud-credential', 'olm'];

/** Code every operator may use: the API objects' types, the toolkit, the shared formats, the error base. */
const LIBRARIES = ['api', 'common', 'kube', 'ignition', 'cincinnati', 'release'];

/** What an operator may use of the local cloud (`folder/module`): its API client and what it speaks in. */
const CLOUD_CLIENT = ['cloud/client', 'cloud/types', 'cloud/errors', 'cloud/endpoint', 'cloud/actions'];

const BELOW_CLUSTER = [...LIBRARIES, 'apiserver', 'cloud', 'update-service', 'metrics-server', 'views', 'console', ...OPERATORS];

/**
 * Who may import whom: every folder of src/ with the folders (or single modules, `folder/module`)
 * it may import besides its own. An import of any other folder of src/ is a lint error.
 */
export const MAY_IMPORT = {
  // The types of the API objects: every folder may use them, they use nothing.
  api: [],
  common: ['api'],
  kube: ['api', 'common'],
  ignition: ['api', 'common'],
  release: ['api', 'common'],
  cincinnati: ['api', 'common', 'release'],
  apiserver: ['api', 'common', 'kube'],
  cloud: ['api', 'common', 'ignition'],
  'update-service': ['api', 'common', 'cincinnati', 'release'],
  // Pure views of the cluster's objects that the commands print and the console draws: the update's
  // progress as `oc adm upgrade status` assesses it, a workload cluster's tree (objects in, rows out).
  views: ['api', 'common'],
  // The web console: a server proxying the API for its users, and the page (web/, bundled for the
  // browser) that shows the update's progress with the same assessment as the command.
  console: [...LIBRARIES, 'views'],
  // A workload on the cluster: it reads nodes and pods and the kubelets' metrics, nothing else.
  'metrics-server': ['api', 'common', 'kube'],
  ...Object.fromEntries(OPERATORS.map((operator) => [operator, [...LIBRARIES, ...CLOUD_CLIENT]])),
  // What kube-controller-manager, the scheduler, the node agent and the installer would be: they
  // run beside the API server and the cloud, and the install starts the operators' bootstrap copies.
  cluster: BELOW_CLUSTER,
  cli: [...BELOW_CLUSTER, 'cluster'],
};

/** Files are matched by depth so that each pattern names exactly one folder of src/. */
export const MAX_DEPTH = 6;

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One config per depth of a file below src/FOLDER: the imports that would reach a folder it may not import. */
function boundaries(folder) {
  const allowed = MAY_IMPORT[folder];
  const forbidden = Object.keys(MAY_IMPORT).filter((other) => other !== folder && !allowed.includes(other));
  return Array.from({ length: MAX_DEPTH }, (_, i) => {
    const toSrc = `^(?:\\.\\./){${i + 1}}`;
    const patterns = forbidden.map((other) => {
      const modules = allowed.filter((a) => a.startsWith(`${other}/`)).map((a) => escapeRegex(a.slice(other.length + 1)));
      const except = modules.length ? `(?!(?:${modules.join('|')})\\.js$)` : '';
      const only = modules.length ? ` beyond ${modules.map((m) => `${other}/${m}`).join(', ')}` : '';
      return {
        regex: `${toSrc}${escapeRegex(other)}/${except}`,
        caseSensitive: true,
        message: `src/${folder} may not import src/${other}${only}: components meet through the Kubernetes API or the cloud's client, and shared code lives in a folder both may import (docs/architecture.md, "Who may import whom").`,
      };
    });
    return { files: [`src/${folder}/${'*/'.repeat(i)}*.ts`, `src/${folder}/${'*/'.repeat(i)}*.tsx`], rules: { 'no-restricted-imports': ['error', { patterns }] } };
  });
}

/**
 * The files of src/ where data enters or leaves untyped and `any` is the honest type (none today:
 * decoding narrows `unknown` at the boundary). Everywhere else in src/, `any` is a lint error:
 * objects have their kind's type from src/api, or api.Unstructured when the kind is known only at
 * run time.
 */
export const UNTYPED_BOUNDARY_FILES = [];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.bosun/**', 'coverage/**', 'src/api/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  { files: ['src/**/*.ts'], ignores: UNTYPED_BOUNDARY_FILES, rules: { '@typescript-eslint/no-explicit-any': 'error' } },
  ...Object.keys(MAY_IMPORT).flatMap(boundaries),
);
