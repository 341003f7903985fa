// The node agent's SPDY/3.1 server session (src/cluster/node-agent/spdy.ts) against a client built
// here from Node's zlib alone: the SPDY/3 dictionary is the spec's 1,423 bytes; a stream opened
// with compressed headers is answered with a SYN_REPLY whose block inflates with that dictionary;
// DATA flows both ways and FIN ends each side; the client's PING comes back. (kubectl itself, Go's
// spdystream, talks to it in test/cluster/node-agent-pods.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { constants, createDeflate, inflateSync } from 'node:zlib';
import { decodeHeaderBlock, encodeHeaderBlock, SPDY_DICTIONARY, SpdySession } from '../../src/cluster/node-agent/spdy.js';

test('the SPDY/3 header dictionary is the spec\'s', () => {
  assert.equal(SPDY_DICTIONARY.length, 1423);
  assert.equal(SPDY_DICTIONARY.subarray(0, 11).toString('latin1'), '\x00\x00\x00\x07options');
  assert.ok(SPDY_DICTIONARY.toString('latin1').endsWith(',utf-,*,enq=0.'));
});

test('a name/value block round-trips, names lower-cased', () => {
  const block = encodeHeaderBlock({ StreamType: 'data', port: '8080', requestid: '0' });
  assert.deepEqual([...decodeHeaderBlock(block)], [['streamtype', 'data'], ['port', '8080'], ['requestid', '0']]);
  assert.throws(() => decodeHeaderBlock(block.subarray(0, 10)), /truncated header block/);
});

test('a SPDY session answers a stream, carries its DATA both ways with FIN, and answers a PING', async () => {
  const opened: Array<Map<string, string>> = [];
  const server = createServer((socket) => {
    new SpdySession(socket, (stream) => {
      opened.push(stream.headers);
      stream.on('data', (d: Buffer) => stream.write(Buffer.concat([Buffer.from('echo: '), d])));
      stream.on('end', () => stream.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const client = connect(port, '127.0.0.1');
  try {
    // The client's header compression: one zlib stream with the dictionary, sync-flushed per block.
    const deflate = createDeflate({ dictionary: SPDY_DICTIONARY });
    const compress = (block: Buffer) => new Promise<Buffer>((resolve) => {
      const out: Buffer[] = [];
      const collect = (d: Buffer) => out.push(d);
      deflate.on('data', collect);
      deflate.write(block);
      deflate.flush(constants.Z_SYNC_FLUSH, () => {
        deflate.off('data', collect);
        resolve(Buffer.concat(out));
      });
    });
    const control = (type: number, flags: number, payload: Buffer) => {
      const head = Buffer.alloc(8);
      head.writeUInt16BE(0x8003, 0);
      head.writeUInt16BE(type, 2);
      head.writeUInt32BE((flags << 24) | payload.length, 4);
      return Buffer.concat([head, payload]);
    };
    const data = (id: number, flags: number, body: Buffer) => {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(id, 0);
      head.writeUInt32BE((flags << 24) | body.length, 4);
      return Buffer.concat([head, body]);
    };
    const synStream = Buffer.alloc(10);
    synStream.writeUInt32BE(1, 0);
    client.write(control(1, 0, Buffer.concat([synStream, await compress(encodeHeaderBlock({ streamtype: 'data', port: '8080' }))])));
    client.write(data(1, 0, Buffer.from('hello')));
    client.write(data(1, 1, Buffer.alloc(0)));
    const ping = Buffer.alloc(4);
    ping.writeUInt32BE(7, 0);
    client.write(control(6, 0, ping));

    // Read frames until the stream's FIN and the ping's answer have come.
    let buffer = Buffer.alloc(0);
    const frames: Array<{ control: boolean; type: number; flags: number; payload: Buffer; stream: number }> = [];
    await new Promise<void>((resolve, reject) => {
      client.on('error', reject);
      client.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        while (buffer.length >= 8 && buffer.length >= 8 + (buffer.readUInt32BE(4) & 0xffffff)) {
          const length = buffer.readUInt32BE(4) & 0xffffff;
          const isControl = (buffer[0] & 0x80) !== 0;
          frames.push({ control: isControl, type: isControl ? buffer.readUInt16BE(2) : 0, flags: buffer[4], payload: buffer.subarray(8, 8 + length), stream: isControl ? 0 : buffer.readUInt32BE(0) });
          buffer = buffer.subarray(8 + length);
        }
        const finished = frames.some((f) => !f.control && (f.flags & 1) === 1) && frames.some((f) => f.control && f.type === 6);
        if (finished) resolve();
      });
    });
    const reply = frames.find((f) => f.control && f.type === 2)!;
    assert.ok(reply, 'a SYN_REPLY');
    assert.equal(reply.payload.readUInt32BE(0), 1);
    const replyHeaders = inflateSync(reply.payload.subarray(4), { dictionary: SPDY_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    assert.equal(decodeHeaderBlock(replyHeaders).size, 0);
    assert.deepEqual(frames.filter((f) => !f.control).map((f) => [f.stream, f.payload.toString(), f.flags]), [[1, 'echo: hello', 0], [1, '', 1]]);
    assert.equal(frames.find((f) => f.control && f.type === 6)!.payload.readUInt32BE(0), 7);
    assert.deepEqual([...opened[0]], [['streamtype', 'data'], ['port', '8080']]);
  } finally {
    client.destroy();
    server.close();
  }
});

test('bad input ends the session, not the process: garbage, an oversized frame, a header block that is not zlib', async () => {
  const sessions: SpdySession[] = [];
  const server = createServer((socket) => {
    sessions.push(new SpdySession(socket, () => assert.fail('no stream opens')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const inputs = [
    // A SYN_STREAM whose header block is not zlib at all.
    Buffer.concat([Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x12]), Buffer.alloc(10), Buffer.from('notzlib!')]),
    // A frame announcing 16 MiB.
    Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff]),
    // A SYN_STREAM too short to hold its stream id.
    Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]),
  ];
  try {
    for (const input of inputs) {
      const closed = await new Promise<boolean>((resolve) => {
        const client = connect(port, '127.0.0.1', () => client.write(input));
        client.on('data', () => undefined);
        client.on('close', () => resolve(true));
        client.on('error', () => resolve(true));
        setTimeout(() => {
          client.destroy();
          resolve(false);
        }, 5000).unref();
      });
      assert.ok(closed, `the session closed on ${input.subarray(0, 12).toString('hex')}`);
    }
    assert.equal(sessions.length, inputs.length);
  } finally {
    server.close();
  }
});
