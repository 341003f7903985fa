// Parsing of HOST:PORT options shared by every server command and the component manager's flags.

export function parseHostPort(value: string, option: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${option} must be HOST:PORT (for example 127.0.0.1:6443), got "${value}"`);
  return { host: m[1] ?? m[2], port };
}
