import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'blackhole';

/**
 * A loopback TCP proxy for fault tests: forwards to a target, and can cut every connection, blackhole traffic
 * or delay each chunk. Only ever binds and connects to 127.0.0.1.
 *
 * A blackhole holds the bytes instead of dropping them: on a real network TCP retransmits what was lost once the
 * path heals, so the peers see silence and then the same byte stream, never a stream with a hole in it.
 */
export class TcpProxy {
  private mode: ProxyMode = 'pass';
  private delayMs = 0;
  private readonly pairs = new Set<[Socket, Socket]>();
  private frozen = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private targetPort: number,
  ) {}

  /** Listens on `listenPort` (any free port by default) and forwards to `targetPort`. */
  static async start(targetPort: number, listenPort = 0): Promise<TcpProxy> {
    const accepted: { proxy?: TcpProxy } = {};
    const server = createServer((client) => accepted.proxy?.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', resolve);
    });
    const address = server.address();
    accepted.proxy = new TcpProxy(
      server,
      typeof address === 'object' && address !== null ? address.port : 0,
      targetPort,
    );
    return accepted.proxy;
  }

  /** Forwards new connections to `targetPort` (a VIP or DNS name moved to a promoted standby); cuts the old ones. */
  retarget(targetPort: number): void {
    this.targetPort = targetPort;
    this.cut();
  }

  /** Destroys every open connection (both sides see a reset); new connections are accepted as before. */
  cut(): void {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  /**
   * The open connections go silent for good (bytes held, nothing closed: a half-open path, e.g. a NAT entry
   * or a failed-over load balancer); new connections pass as before.
   */
  freezeOpenConnections(): void {
    for (const pair of this.pairs) for (const socket of pair) socket.pause();
    this.frozen = new Set([...this.frozen, ...this.pairs]);
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    for (const pair of this.pairs)
      if (!this.frozen.has(pair)) for (const socket of pair) this.applyMode(socket);
  }

  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private applyMode(socket: Socket): void {
    if (this.mode === 'blackhole') socket.pause();
    else socket.resume();
  }

  private accept(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (this.delayMs === 0) to.write(chunk);
        else setTimeout(() => to.write(chunk), this.delayMs);
      });
      // A paused socket reads nothing: the bytes wait in the kernel until the blackhole ends.
      this.applyMode(from);
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
