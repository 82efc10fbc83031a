/**
 * True when `value` nests objects or arrays more than `limit` levels deep. Iterative with an explicit
 * stack and stops at the first too-deep node, so a body of 20,000 nested arrays costs a few steps,
 * not a stack overflow (the check runs before authentication: anyone can send one).
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}
