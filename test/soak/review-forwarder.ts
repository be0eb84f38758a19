/**
 * The soak's way to the operator's delete review (controller/delete-review.ts): the API server calls one URL,
 * while the replicas are SIGKILLed and restarted on their own review ports. Each connection is passed, bytes
 * as they are (TLS end to end: the certificate names 127.0.0.1), to the first replica that accepts it; with
 * none up the connection is closed, and the API server refuses the operator's delete (failurePolicy Fail),
 * which the operator retries. The test's own plumbing, as the fault proxy is.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class ReviewForwarder {
  private server: Server | undefined;
  private readonly open = new Set<Socket>();
  /** Connections no replica accepted: said in the soak's summary. */
  unanswered = 0;

  constructor(private readonly replicaPorts: readonly number[]) {}

  async start(): Promise<number> {
    const server = createServer((client) => {
      // A caller that goes away while a replica is sought: its socket is simply gone.
      client.once('error', () => client.destroy());
      this.forward(client, 0);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  private forward(client: Socket, index: number): void {
    const port = this.replicaPorts[index];
    if (port === undefined) {
      this.unanswered++;
      client.destroy();
      return;
    }
    const upstream = connect(port, '127.0.0.1');
    // Not listening (killed, or not started yet): the next replica.
    const refused = () => {
      upstream.off('connect', connected);
      upstream.destroy();
      this.forward(client, index + 1);
    };
    const connected = () => {
      upstream.off('error', refused);
      this.track(client);
      this.track(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    };
    client.pause();
    upstream.once('connect', connected);
    upstream.once('error', refused);
  }

  private track(socket: Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  async stop(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
