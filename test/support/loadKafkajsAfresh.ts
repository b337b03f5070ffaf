import { createRequire } from 'node:module';

const load = createRequire(__filename);

/**
 * kafkajs's own module at `specifier`, loaded afresh beside the copy walbox replaced in the module cache
 * (src/sink/kafka/replaceKafkajsModule.ts), which stays cached.
 */
export function loadKafkajsAfresh(specifier: string): unknown {
  const path = load.resolve(specifier);
  const installed = load.cache[path];
  Reflect.deleteProperty(load.cache, path);
  try {
    return load(path);
  } finally {
    if (installed !== undefined) load.cache[path] = installed;
  }
}
