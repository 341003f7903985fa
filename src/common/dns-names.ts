// Kubernetes' name formats (apimachinery's validation): one place for the patterns every
// component checks names against, so that the API server, the CLI, the console and the cloud
// agree on what a valid name is.

/** An RFC 1123 label: lower-case letters, digits and '-', starting and ending alphanumeric. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** An RFC 1123 subdomain: labels separated by '.'. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A DNS label of at most 63 characters (namespace names, Service names, label-less segments). */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

/** A DNS subdomain of at most 253 characters (most object names). */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name);
}
