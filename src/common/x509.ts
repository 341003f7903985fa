// @peculiar/x509, ready to use: the reflect-metadata polyfill it needs loaded first, and node's
// WebCrypto as its crypto provider. Import this module (not the package) for X.509 work; pki.ts
// loads it only when a certificate is made, since it is some 200 modules.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };
