import { createRequire } from 'node:module';

/** What a replacement did: only `installed` means kafkajs uses walbox's function. */
export type KafkajsPatch = 'installed' | 'too late' | 'unsupported';

const REPLACED = Symbol.for('walbox.kafkajsModuleReplaced');

type Replaceable = ((...args: never[]) => unknown) & { [REPLACED]?: true };

/**
 * Puts `replace(kafkajs's own function)` in the place of the function kafkajs module `target` exports. The kafkajs
 * modules `loadedBy` keep the function they find when they load, so this works only before then:
 * src/sink/kafka/kafkajs.ts does it before it loads kafkajs, and walbox takes kafkajs's values from there. If the
 * host application loaded one of them first, kafkajs keeps its own function ('too late'): slower, not wrong.
 * Another kafkajs than the pinned one, without these modules: 'unsupported', left alone (the unit tests say
 * whether a replacement still holds). Idempotent.
 */
export function replaceKafkajsModule<F extends (...args: never[]) => unknown>(
  target: string,
  loadedBy: readonly string[],
  replace: (kafkajs: F) => F,
): KafkajsPatch {
  const load = createRequire(__filename);
  let targetPath: string;
  let loadedByPaths: string[];
  try {
    targetPath = load.resolve(target);
    loadedByPaths = loadedBy.map((path) => load.resolve(path));
  } catch {
    return 'unsupported';
  }
  const cached = load.cache[targetPath]?.exports as Replaceable | undefined;
  if (cached?.[REPLACED] === true) return 'installed';
  if (loadedByPaths.some((path) => load.cache[path] !== undefined)) return 'too late';
  load(targetPath);
  const module = load.cache[targetPath];
  if (module === undefined || typeof module.exports !== 'function') return 'unsupported';
  const replacement: Replaceable = replace(module.exports as F);
  replacement[REPLACED] = true;
  module.exports = replacement;
  return 'installed';
}
