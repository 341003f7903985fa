// TypeScript types for Ignition config spec 2.2 — only as much as bosun emits when it translates
// a 3.x config down for old clients (root-filesystem files, directories, links, units, users).

export interface V2Verification { hash?: string }

export interface V2ConfigReference { source: string; verification?: V2Verification }

export interface V2NodeOwner { id?: number; name?: string }

export interface V2Node {
  /** Always "root": bosun only translates nodes on the root filesystem. */
  filesystem: string;
  path: string;
  overwrite?: boolean;
  user?: V2NodeOwner;
  group?: V2NodeOwner;
}

export interface V2File extends V2Node {
  contents: { source: string; compression?: string; verification?: V2Verification };
  mode?: number;
  append?: boolean;
}

export interface V2Directory extends V2Node { mode?: number }

export interface V2Link extends V2Node { target: string; hard?: boolean }

export interface V2Unit { name: string; enabled?: boolean; mask?: boolean; contents?: string; dropins?: { name: string; contents?: string }[] }

export interface V2User {
  name: string; passwordHash?: string; sshAuthorizedKeys?: string[]; uid?: number; gecos?: string;
  homeDir?: string; noCreateHome?: boolean; primaryGroup?: string; groups?: string[]; noUserGroup?: boolean;
  noLogInit?: boolean; shell?: string; system?: boolean;
}

export interface V2Group { name: string; gid?: number; passwordHash?: string; system?: boolean }

/** An Ignition 2.2 config. */
export interface IgnitionConfigV2 {
  ignition: {
    version: '2.2.0';
    config?: { append?: V2ConfigReference[]; replace?: V2ConfigReference };
    security?: { tls?: { certificateAuthorities?: { source: string; verification?: V2Verification }[] } };
    timeouts?: { httpResponseHeaders?: number; httpTotal?: number };
  };
  storage?: { files?: V2File[]; directories?: V2Directory[]; links?: V2Link[] };
  systemd?: { units?: V2Unit[] };
  passwd?: { users?: V2User[]; groups?: V2Group[] };
}
