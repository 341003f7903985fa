// The local cloud's one error type: an HTTP status, a stable code in a cloud's style
// (`InvalidInstanceType`, `IncorrectInstanceState`, …) and a message that names what is wrong.
// The API answers it as `{"error":{"code","message"}}`; the client turns such a body back into one.

import { BosunError } from '../common/errors.js';
/** An error the cloud's API answers with; its reason is the API's error code (also read as `code`). */
export class CloudError extends BosunError {
  constructor(readonly status: number, code: string, message: string) {
    super(code, message);
  }

  get code(): string {
    return this.reason;
  }

  toJSON(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export const invalid = (code: string, message: string) => new CloudError(400, code, message);
export const notFound = (code: string, message: string) => new CloudError(404, code, message);
export const conflict = (code: string, message: string) => new CloudError(409, code, message);
