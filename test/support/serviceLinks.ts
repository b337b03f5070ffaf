/** A port of a Kubernetes Service, as in its spec. */
export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
}

/**
 * The variables the kubelet gives a pod for a Service `name` with a ClusterIP (kubernetes pkg/kubelet/envvars):
 * the Service name upper-cased with dashes as underscores, then the host, the first port, one variable per named
 * port, and the Docker-links set per port and protocol.
 */
export function serviceLinks(
  name: string,
  ports: readonly ServicePort[],
  host = '10.96.12.34',
): Record<string, string> {
  const prefix = toEnvPrefix(name);
  const [first] = ports;
  if (first === undefined) throw new Error('a Service with a ClusterIP has at least one port');
  const env: Record<string, string> = {
    [`${prefix}_SERVICE_HOST`]: host,
    [`${prefix}_SERVICE_PORT`]: String(first.port),
    [`${prefix}_PORT`]: `${first.protocol.toLowerCase()}://${host}:${String(first.port)}`,
  };
  for (const { name: portName, port, protocol } of ports) {
    if (portName !== undefined) env[`${prefix}_SERVICE_PORT_${toEnvPrefix(portName)}`] = String(port);
    const link = `${prefix}_PORT_${String(port)}_${protocol}`;
    env[link] = `${protocol.toLowerCase()}://${host}:${String(port)}`;
    env[`${link}_PROTO`] = protocol.toLowerCase();
    env[`${link}_PORT`] = String(port);
    env[`${link}_ADDR`] = host;
  }
  return env;
}

function toEnvPrefix(name: string): string {
  return name.toUpperCase().replace(/-/g, '_');
}
