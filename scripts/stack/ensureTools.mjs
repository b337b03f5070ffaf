// What the test stack and the suite need from the machine, installed from Debian when missing (as root), or
// named in one line (otherwise). `npm test` calls ensureTestTools() first, so that it runs on a fresh machine by
// itself.
import { execFileSync, spawnSync } from 'node:child_process';

const isRoot = () => process.getuid?.() === 0;

/** What the stack (tests and demo) runs: [command, Debian package, why]. */
export const STACK_TOOLS = [
  ['java', 'openjdk-17-jre-headless', 'runs the Kafka broker and, for a test, Kafka Connect'],
  ['mvn', 'maven', "fetches Kafka's jars, Connect + Debezium and PostgreSQL 16–18 from Maven Central"],
  ['openssl', 'openssl', 'makes the test CA and certificates'],
];
/** ...and what the test suite needs besides. */
export const TEST_TOOLS = [...STACK_TOOLS, ['promtool', 'prometheus', 'checks the alert rules']];

function hasCommand(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

function aptInstall(packages, log) {
  log(`installing ${packages.join(' ')} from Debian`);
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Installs Debian's `pkg` when `command` is missing and we are root; otherwise says what to install. */
export function ensureCommand(command, pkg, log = console.error) {
  if (hasCommand(command)) return;
  if (!isRoot()) throw new Error(`${command} is missing: install Debian's ${pkg} package`);
  aptInstall([pkg], log);
}

/** Every tool of `tools`, in one apt-get run; throws one line naming what is missing when not root. */
export function ensureTools(tools, log = console.error) {
  const missing = tools.filter(([command]) => !hasCommand(command));
  if (missing.length === 0) return;
  const packages = missing.map(([, pkg]) => pkg);
  if (!isRoot()) {
    throw new Error(
      `missing ${missing.map(([command, , why]) => `${command} (${why})`).join(', ')}: ` +
        `apt-get install ${packages.join(' ')} (run as root, walbox's scripts install them themselves)`,
    );
  }
  aptInstall(packages, log);
}
