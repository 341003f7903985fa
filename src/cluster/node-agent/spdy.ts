// The server side of a SPDY/3.1 session, as far as Kubernetes' streaming uses it: what kubectl
// speaks for `kubectl exec` up to 1.29 (remotecommand, v4.channel.k8s.io) and for `kubectl
// port-forward` in every version (portforward.k8s.io; 1.31+ falls back to it when its WebSocket
// tunnel is refused). The client opens streams with SYN_STREAM frames whose headers say what each is
// (`streamtype: stdout`, `port: 8080`…); the server answers each with a SYN_REPLY and both sides
// send DATA frames, a FIN flag ending a side. Header blocks are zlib-compressed with the SPDY/3
// dictionary, one compression context per direction for the whole session (so every block is
// inflated, in order, even of frames that are otherwise ignored). No flow control: Go's spdystream,
// kubectl's side, neither sends nor heeds WINDOW_UPDATE. Backpressure is the connection's: a
// stream's write says false once the session holds more than HIGH_WATER bytes not yet
// taken by the socket (the writer then waits for whenDrained), and a reader whose destination is
// full pauses the session's reading (pauseReading/resumeReading: every stream's, as spdystream's
// one frame-reading loop blocks on a full stream). No maintained npm package speaks SPDY/3.1
// (node-spdy and spdy-transport were last released in 2018–2020), so this is bosun's own.
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

/** The SPDY/3 header dictionary (draft 3, section 2.6.10.1): length-prefixed words, then raw text. */
export const SPDY_DICTIONARY = (() => {
  const words = [
    'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language', 'accept-ranges', 'age', 'allow',
    'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language', 'content-length', 'content-location', 'content-md5',
    'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range',
    'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after',
    'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK',
    'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
  ];
  const tail = '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404 Not Found' +
    '500 Internal Server Error501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
    'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,' +
    'text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
  const parts = words.flatMap((w) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(w.length);
    return [length, Buffer.from(w, 'latin1')];
  });
  return Buffer.concat([...parts, Buffer.from(tail, 'latin1')]);
})();

const VERSION = 3;
const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const HEADERS = 8;
const FLAG_FIN = 0x01;
/** RST_STREAM's CANCEL. */
const CANCEL = 5;
/** Most a DATA frame carries here (the format allows 16 MiB). */
const MAX_DATA = 64 * 1024;
/** Most a frame from the client may be (the format allows 16 MiB): header blocks are small, and spdystream writes stdin in 32 KiB chunks. */
const MAX_FRAME = 1024 * 1024;
/** Bytes a connection may hold for a client not taking them before its writer waits (this session's streams; exec over a WebSocket too). */
export const HIGH_WATER = 1024 * 1024;
/** Most one header block may inflate to (a few small headers are all a stream has). */
const MAX_HEADER_BLOCK = 64 * 1024;

/** One zlib context of a session's direction: each block written and sync-flushed, in order. */
class HeaderCodec {
  private chain: Promise<unknown> = Promise.resolve();
  constructor(private readonly z: Deflate | Inflate) {
    z.on('error', () => undefined);
  }

  process(block: Buffer): Promise<Buffer> {
    const result = this.chain.then(() => new Promise<Buffer>((resolve, reject) => {
      const out: Buffer[] = [];
      let size = 0;
      const collect = (d: Buffer) => {
        size += d.length;
        if (size > MAX_HEADER_BLOCK) reject(new Error(`a header block inflates past ${MAX_HEADER_BLOCK} bytes`));
        else out.push(d);
      };
      this.z.on('data', collect);
      this.z.once('error', reject);
      this.z.write(block);
      this.z.flush(constants.Z_SYNC_FLUSH, () => {
        this.z.off('data', collect);
        this.z.off('error', reject);
        resolve(Buffer.concat(out));
      });
    }));
    this.chain = result.catch(() => undefined);
    return result;
  }

  close(): void {
    this.z.destroy();
  }
}

/** A name/value block's pairs (names lower-case; a value of several is NUL-separated). */
export function decodeHeaderBlock(block: Buffer): Map<string, string> {
  const headers = new Map<string, string>();
  let at = 0;
  const u32 = () => {
    if (at + 4 > block.length) throw new Error('truncated header block');
    const v = block.readUInt32BE(at);
    at += 4;
    return v;
  };
  const text = () => {
    const n = u32();
    if (at + n > block.length) throw new Error('truncated header block');
    const s = block.toString('latin1', at, at + n);
    at += n;
    return s;
  };
  for (let pairs = u32(); pairs > 0; pairs--) {
    const name = text().toLowerCase();
    headers.set(name, text());
  }
  return headers;
}

export function encodeHeaderBlock(headers: Record<string, string>): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  parts.push(u32(entries.length));
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
  return Buffer.concat([head, data]);
}

/**
 * A stream the client opened: its headers, DATA to it (write, end), and what the client sends
 * ('data', 'end' when it has finished sending, 'close' when the stream is gone either way).
 */
export class SpdyStream extends EventEmitter {
  /** Whether the client has finished sending (FIN), and whether this side has. */
  remoteEnded = false;
  localEnded = false;
  closed = false;

  constructor(private readonly session: SpdySession, readonly id: number, readonly headers: Map<string, string>) {
    super();
  }

  /** Sends DATA; false when the session holds more than HIGH_WATER for its socket: wait for session.whenDrained before writing more. */
  write(data: Buffer): boolean {
    if (this.localEnded || this.closed) return true;
    for (let at = 0; at < data.length; at += MAX_DATA) this.session.send(dataFrame(this.id, 0, data.subarray(at, at + MAX_DATA)));
    return this.session.bufferedAmount < HIGH_WATER;
  }

  /** Ends this side (an empty DATA frame with FIN). */
  end(): void {
    if (this.localEnded || this.closed) return;
    this.localEnded = true;
    this.session.send(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    if (this.remoteEnded) this.finish();
  }

  /** Abandons the stream (RST_STREAM CANCEL). */
  reset(): void {
    if (this.closed) return;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(this.id & 0x7fffffff, 0);
    payload.writeUInt32BE(CANCEL, 4);
    this.session.send(controlFrame(RST_STREAM, 0, payload));
    this.finish();
  }

  /** @internal the client's DATA. */
  received(data: Buffer, fin: boolean): void {
    if (this.closed) return;
    if (data.length > 0) this.emit('data', data);
    if (fin) this.remoteFinished();
  }

  /** @internal */
  remoteFinished(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    this.emit('end');
    if (this.localEnded) this.finish();
  }

  /** @internal gone: both sides ended, reset by either, or the session closed. */
  finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.session.forget(this.id);
    this.emit('close');
  }
}

/** The server's side of a SPDY/3.1 session on an upgraded connection; `onStream` is told of each stream the client opens (already answered). */
export class SpdySession extends EventEmitter {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, SpdyStream>();
  private readonly inflate = new HeaderCodec(createInflate({ dictionary: SPDY_DICTIONARY }));
  private readonly deflate = new HeaderCodec(createDeflate({ dictionary: SPDY_DICTIONARY }));
  /** Frames in, handled one after another (a header block's inflation is asynchronous). */
  private incoming: Promise<void> = Promise.resolve();
  /** Frames out, written in the order they were made (a SYN_REPLY's deflation is asynchronous). */
  private outgoing: Promise<void> = Promise.resolve();
  private lastStreamId = 0;
  private ended = false;
  /** Bytes of frames queued and not yet handed to the socket. */
  private queued = 0;
  /** Readers that asked the session to stop reading (pauseReading). */
  private pausedBy = 0;

  constructor(private readonly socket: Duplex, private readonly onStream: (stream: SpdyStream) => void) {
    super();
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => this.close());
    socket.on('close', () => this.shutdown());
  }

  /** @internal queues a frame for the wire. */
  send(frame: Buffer | Promise<Buffer>): void {
    const size = Buffer.isBuffer(frame) ? frame.length : 0;
    this.queued += size;
    this.outgoing = this.outgoing.then(async () => {
      const bytes = await frame;
      this.queued -= size;
      if (!this.ended) this.socket.write(bytes);
    }).catch(() => this.close());
  }

  /** What the session holds for the client: frames queued and what the socket has not yet sent. */
  get bufferedAmount(): number {
    return this.queued + this.socket.writableLength;
  }

  /** Calls `then` once what the session holds has gone to the client (or the session has ended). */
  whenDrained(then: () => void): void {
    let done = false;
    const check = () => {
      if (done) return;
      if (this.ended || this.bufferedAmount === 0) {
        done = true;
        this.off('close', check);
        this.socket.off('drain', check);
        then();
      } else if (this.socket.writableLength === 0) {
        // Frames still queued: the socket has them after the queue's next turn.
        void this.outgoing.then(check);
      } else {
        this.socket.once('drain', check);
      }
    };
    this.once('close', check);
    check();
  }

  /** Stops reading from the client until as many resumeReading calls (a stream's destination is full). */
  pauseReading(): void {
    if (this.pausedBy++ === 0) this.socket.pause();
  }

  resumeReading(): void {
    if (this.pausedBy > 0 && --this.pausedBy === 0) this.socket.resume();
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  /** Says GOAWAY and ends the connection once what is queued is written. */
  close(): void {
    if (this.ended) return;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(this.lastStreamId, 0);
    this.send(controlFrame(GOAWAY, 0, payload));
    this.outgoing = this.outgoing.then(() => {
      this.socket.end();
      this.shutdown();
    });
  }

  private shutdown(): void {
    if (this.ended) return;
    this.ended = true;
    for (const stream of [...this.streams.values()]) stream.finish();
    this.inflate.close();
    this.deflate.close();
    this.emit('close');
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= 8) {
      const length = this.buffer.readUInt32BE(4) & 0xffffff;
      if (length > MAX_FRAME) return this.close();
      if (this.buffer.length < 8 + length) return;
      const frame = this.buffer.subarray(0, 8 + length);
      this.buffer = this.buffer.subarray(8 + length);
      this.incoming = this.incoming.then(() => this.handle(frame)).catch(() => this.close());
    }
  }

  private async handle(frame: Buffer): Promise<void> {
    if (this.ended) return;
    const flags = frame[4];
    const payload = frame.subarray(8);
    if ((frame[0] & 0x80) === 0) {
      this.streams.get(frame.readUInt32BE(0) & 0x7fffffff)?.received(payload, (flags & FLAG_FIN) !== 0);
      return;
    }
    const type = frame.readUInt16BE(2);
    switch (type) {
      case SYN_STREAM: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflate.process(payload.subarray(10)));
        this.lastStreamId = Math.max(this.lastStreamId, id);
        const stream = new SpdyStream(this, id, headers);
        this.streams.set(id, stream);
        const reply = Buffer.alloc(4);
        reply.writeUInt32BE(id, 0);
        this.send(this.deflate.process(encodeHeaderBlock({})).then((block) => controlFrame(SYN_REPLY, 0, Buffer.concat([reply, block]))));
        if ((flags & FLAG_FIN) !== 0) stream.remoteEnded = true;
        this.onStream(stream);
        return;
      }
      case HEADERS:
        // Nothing here needs them, but the block must pass through the session's inflater.
        await this.inflate.process(payload.subarray(4));
        return;
      case RST_STREAM:
        this.streams.get(payload.readUInt32BE(0) & 0x7fffffff)?.finish();
        return;
      case PING:
        // The client's pings (odd ids) are answered with the same frame.
        if (payload.readUInt32BE(0) % 2 === 1) this.send(controlFrame(PING, 0, Buffer.from(payload)));
        return;
      case GOAWAY:
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, CREDENTIAL: nothing to do.
        return;
    }
  }
}

/** The 101 a server answers a SPDY upgrade with, naming the stream protocol it chose. */
export function spdyUpgradeResponse(protocol: string): string {
  return `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${protocol}\r\n\r\n`;
}

/** The protocols an upgrade request offers in a header given once or several times, comma-separated (X-Stream-Protocol-Version, Sec-WebSocket-Protocol). */
export function offeredProtocols(header: string | string[] | undefined): string[] {
  return [header ?? []].flat().flatMap((h) => h.split(',')).map((p) => p.trim()).filter(Boolean);
}
