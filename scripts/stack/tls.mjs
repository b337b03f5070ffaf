// Test certificates for the secured listeners of the stack (Kafka SASL_SSL, PostgreSQL ssl=on), made with openssl
// at stack start: a private CA, a server certificate it signs for the name `localhost` only (so that 127.0.0.1
// is a host-name mismatch a test can provoke), and a second CA that signed nothing we serve (an "untrusted" CA).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** SCRAM-SHA-512 and PLAIN users of the SASL_SSL listener. Test-only secrets. */
export const SASL_USERS = {
  scram: { username: 'walbox', password: 'walbox-scram-secret' },
  plain: { username: 'walboxplain', password: 'walbox-plain-secret' },
};

/** Installs Debian's openssl when it is missing and we are root (as postgres.mjs does for PostgreSQL). */
function ensureOpenssl() {
  if (spawnSync('openssl', ['version']).error?.code !== 'ENOENT') return;
  if (process.getuid?.() !== 0) throw new Error('openssl not found: run `apt-get install openssl` as root');
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'openssl'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function openssl(args, cwd) {
  try {
    return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  } catch (error) {
    if (error.code === 'ENOENT') throw new Error('openssl not found: apt-get install openssl');
    throw new Error(`openssl ${args.join(' ')} failed: ${error.stderr || error.message}`);
  }
}

function makeCa(dir, name, subject) {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`], dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}.key`,
      '-sha256',
      '-days',
      '30',
      '-subj',
      subject,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
}

/**
 * Writes dir/{ca,other-ca}.{key,crt}, dir/server.{key,crt} (signed by ca, SAN DNS:localhost) and
 * dir/server-keystore.pem (key + chain, for Kafka's PEM keystore). Idempotent: an existing set is kept.
 */
export function makeTestCertificates(dir) {
  mkdirSync(dir, { recursive: true });
  const files = {
    dir,
    caFile: join(dir, 'ca.crt'),
    otherCaFile: join(dir, 'other-ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    keystore: join(dir, 'server-keystore.pem'),
  };
  if (existsSync(files.keystore)) return files;
  ensureOpenssl();
  makeCa(dir, 'ca', '/CN=walbox test CA');
  makeCa(dir, 'other-ca', '/CN=walbox untrusted CA');
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'server.key'], dir);
  openssl(['req', '-new', '-key', 'server.key', '-subj', '/CN=localhost', '-out', 'server.csr'], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '30',
      '-sha256',
      '-extfile',
      'server.ext',
      '-out',
      'server.crt',
    ],
    dir,
  );
  // Kafka's PEM keystore: an unencrypted PKCS#8 key followed by the certificate chain.
  writeFileSync(
    files.keystore,
    readFileSync(join(dir, 'server.key'), 'utf8') +
      readFileSync(join(dir, 'server.crt'), 'utf8') +
      readFileSync(join(dir, 'ca.crt'), 'utf8'),
  );
  return files;
}
