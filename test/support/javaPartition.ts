/**
 * The Java client's default partition for a key: toPositive(murmur2(utf8(key))) % partitions
 * (org.apache.kafka.common.utils.Utils.murmur2), written out here independently of kafkajs.
 */
export function javaPartition(key: string, partitions: number): number {
  const data = Buffer.from(key, 'utf8');
  const seed = 0x9747b28c;
  const m = 0x5bd1e995;
  const r = 24;
  let h = seed ^ data.length;
  const length4 = Math.floor(data.length / 4);
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k =
      (data[i4] ?? 0) |
      ((data[i4 + 1] ?? 0) << 8) |
      ((data[i4 + 2] ?? 0) << 16) |
      ((data[i4 + 3] ?? 0) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length4 * 4;
  const rest = data.length % 4;
  if (rest === 3) h ^= (data[tail + 2] ?? 0) << 16;
  if (rest >= 2) h ^= (data[tail + 1] ?? 0) << 8;
  if (rest >= 1) {
    h ^= data[tail] ?? 0;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return (h & 0x7fffffff) % partitions;
}
