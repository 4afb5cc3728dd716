/**
 * Byte equality whose running time does not depend on where the inputs differ (spec 6.2 rule 3).
 * Different lengths give `false` without throwing and without returning early.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  let difference = a.length ^ b.length;
  for (let i = 0; i < length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}
