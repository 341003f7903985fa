// Why a release signature did not verify. Its own module because both verifiers throw it: the
// OpenPGP one (signature.ts) and the version 3 packet one (legacy-v3-signature.ts) it calls.
import { BosunError } from '../common/errors.js';

export type SignatureFailure = 'Malformed' | 'UntrustedKey' | 'BadSignature' | 'DigestMismatch' | 'Missing' | 'BadKeyring';

/** A verification failure with a stable reason and a message an administrator can act on. */
export class SignatureError extends BosunError {
  constructor(
    override readonly reason: SignatureFailure,
    message: string,
  ) {
    super(reason, message);
  }
}
