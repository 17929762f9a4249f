/** The process that holds a connection, from the kernel's tables: this test's own, and not another's. */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerOfSocket, socketInode } from '../src/find-socket-owner.js';

const server = createServer(() => undefined);
let client: Socket;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  client = connect(port, '127.0.0.1');
  await new Promise<void>((r) => client.once('connect', r));
});
afterAll(async () => {
  client.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

describe.runIf(process.platform === 'linux')('finding the process that holds a connection', () => {
  it('names this process for its own client socket, and no other process', () => {
    const serverPort = (server.address() as AddressInfo).port;
    const inode = socketInode(client.localPort!, serverPort);
    expect(inode).toMatch(/^\d+$/);
    expect(
      ownerOfSocket(
        inode!,
        new Map([
          ['parent', process.ppid],
          ['self', process.pid],
        ]),
      ),
    ).toBe('self');
    expect(ownerOfSocket(inode!, new Map([['parent', process.ppid]]))).toBeUndefined();
    expect(socketInode(client.localPort!, serverPort + 1 === 65536 ? 1 : serverPort + 1)).toBeUndefined();
  });
});
