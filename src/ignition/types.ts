// TypeScript types for Ignition config spec 3.x, written from the published specification
// (coreos/ignition docs/configuration-v3_N.md). One set of types covers 3.0–3.5: fields added
// after 3.0 are marked with the version that introduced them, and schema.ts carries the same
// facts as data so that validation and down-translation can check them per version.

export interface HttpHeader { name: string; value?: string | null }

export interface Verification { hash?: string | null }

/** A fetchable resource (config merge/replace source, CA, file contents, LUKS key file). */
export interface Resource {
  source?: string | null;
  compression?: string | null;
  /** since 3.1 */
  httpHeaders?: HttpHeader[] | null;
  verification?: Verification | null;
}

export interface IgnitionSection {
  version: string;
  config?: { merge?: Resource[] | null; replace?: Resource | null } | null;
  /** since 3.1 */
  proxy?: { httpProxy?: string | null; httpsProxy?: string | null; noProxy?: string[] | null } | null;
  security?: { tls?: { certificateAuthorities?: Resource[] | null } | null } | null;
  timeouts?: { httpResponseHeaders?: number | null; httpTotal?: number | null } | null;
}

export interface NodeOwner { id?: number | null; name?: string | null }

export interface NodeBase {
  path: string;
  overwrite?: boolean | null;
  user?: NodeOwner | null;
  group?: NodeOwner | null;
}

export interface FileEntry extends NodeBase {
  contents?: Resource | null;
  append?: Resource[] | null;
  /** Decimal file mode, e.g. 420 for 0644. */
  mode?: number | null;
}

export interface DirectoryEntry extends NodeBase { mode?: number | null }

export interface LinkEntry extends NodeBase { target?: string | null; hard?: boolean | null }

export interface Partition {
  label?: string | null; number?: number | null; sizeMiB?: number | null; startMiB?: number | null;
  typeGuid?: string | null; guid?: string | null; wipePartitionEntry?: boolean | null; shouldExist?: boolean | null;
  /** since 3.2 */
  resize?: boolean | null;
}

export interface Disk { device: string; wipeTable?: boolean | null; partitions?: Partition[] | null }

export interface Raid { name: string; level?: string | null; devices?: string[] | null; spares?: number | null; options?: string[] | null }

export interface Filesystem {
  device: string; format?: string | null; path?: string | null; wipeFilesystem?: boolean | null;
  label?: string | null; uuid?: string | null; options?: string[] | null;
  /** since 3.1 */
  mountOptions?: string[] | null;
}

export interface Tang { url?: string | null; thumbprint?: string | null; /** since 3.4 */ advertisement?: string | null }

/** since 3.2 */
export interface Luks {
  name: string; device?: string | null; keyFile?: Resource | null; label?: string | null; uuid?: string | null;
  options?: string[] | null; wipeVolume?: boolean | null;
  clevis?: { tang?: Tang[] | null; tpm2?: boolean | null; threshold?: number | null;
    custom?: { pin?: string | null; config?: string | null; needsNetwork?: boolean | null } | null } | null;
  /** since 3.4 */ discard?: boolean | null;
  /** since 3.4 */ openOptions?: string[] | null;
  /** since 3.5 */ cex?: { enabled?: boolean | null } | null;
}

export interface Storage {
  disks?: Disk[] | null;
  raid?: Raid[] | null;
  filesystems?: Filesystem[] | null;
  files?: FileEntry[] | null;
  directories?: DirectoryEntry[] | null;
  links?: LinkEntry[] | null;
  /** since 3.2 */
  luks?: Luks[] | null;
}

export interface Dropin { name: string; contents?: string | null }

export interface Unit { name: string; enabled?: boolean | null; mask?: boolean | null; contents?: string | null; dropins?: Dropin[] | null }

export interface User {
  name: string; passwordHash?: string | null; sshAuthorizedKeys?: string[] | null; uid?: number | null;
  gecos?: string | null; homeDir?: string | null; noCreateHome?: boolean | null; primaryGroup?: string | null;
  groups?: string[] | null; noUserGroup?: boolean | null; noLogInit?: boolean | null; shell?: string | null;
  system?: boolean | null;
  /** since 3.2 */ shouldExist?: boolean | null;
}

export interface Group {
  name: string; gid?: number | null; passwordHash?: string | null; system?: boolean | null;
  /** since 3.2 */ shouldExist?: boolean | null;
}

/** An Ignition 3.x config. */
export interface IgnitionConfig {
  ignition: IgnitionSection;
  storage?: Storage | null;
  systemd?: { units?: Unit[] | null } | null;
  passwd?: { users?: User[] | null; groups?: Group[] | null } | null;
  /** since 3.3 */
  kernelArguments?: { shouldExist?: string[] | null; shouldNotExist?: string[] | null } | null;
}
