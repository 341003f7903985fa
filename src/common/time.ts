// Kubernetes' two serialisations of a point in time: metav1.Time (RFC 3339 at second precision,
// what creationTimestamp, condition times and status times carry) and metav1.MicroTime (RFC 3339
// with microseconds, what Leases carry). Every timestamp bosun writes into an object goes
// through one of these, so the API server and the clients write the same form.

/** RFC 3339 at second precision (`2024-01-02T03:04:05Z`), as metav1.Time serialises. */
export function rfc3339(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microseconds (`2024-01-02T03:04:05.678000Z`), as metav1.MicroTime serialises. */
export function rfc3339Micro(date: Date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
