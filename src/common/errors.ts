// The one base of bosun's errors. Each carries a stable `reason` — a PascalCase code that names
// what went wrong, that callers and status conditions may branch on, and that is never reused for
// a different meaning — beside a `message` for people. `name` is the class's own name, so a log
// line or a stack says which kind of error it was. (The CVO's UpdateError and fastify's coded
// errors are the models.)

export class BosunError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}
