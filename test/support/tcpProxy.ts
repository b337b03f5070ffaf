import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'blackhole';

/**
 * A loopback TCP proxy for fault tests: forwards to a target, and can cut every connection, blackhole traffic
 * (accept and hold, forward nothing) or delay each chunk. Only ever binds and connects to 127.0.0.1.
 */
export class TcpProxy {
  private mode: ProxyMode = 'pass';
  private delayMs = 0;
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const accepted: { proxy?: TcpProxy } = {};
    const server = createServer((client) => accepted.proxy?.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    accepted.proxy = new TcpProxy(server, typeof address === 'object' && address !== null ? address.port : 0);
    return accepted.proxy;
  }

  /** Destroys every open connection (both sides see a reset); new connections are accepted as before. */
  cut(): void {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
  }

  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (this.mode === 'blackhole') return;
        if (this.delayMs === 0) to.write(chunk);
        else setTimeout(() => to.write(chunk), this.delayMs);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }
}
